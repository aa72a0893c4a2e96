// What people do today to stream a page: puppeteer-core with Page.startScreencast (JPEG
// frames as Chromium's compositor produces them), each frame piped to ffmpeg, which stamps
// it with the wall clock and makes a constant-rate stream of it (repeating or dropping).
// The reference for bench/live/vs_screencast.sh (it sits here for this folder's
// node_modules); it records when each frame arrived.
//
// node screencast.mjs URL OUT.mp4 WIDTH HEIGHT SECONDS FPS
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { openPage } from './launch.mjs';

const [url, out, width, height, seconds, fps] = process.argv.slice(2);
const { browser, page } = await openPage(url, width, height);
const session = await page.createCDPSession();

const ffmpeg = spawn('ffmpeg', ['-v', 'error', '-y', '-use_wallclock_as_timestamps', '1',
  '-f', 'image2pipe', '-c:v', 'mjpeg', '-i', '-', '-vsync', 'cfr', '-r', fps, '-c:v', 'libx264',
  '-preset', 'veryfast', '-tune', 'zerolatency', '-pix_fmt', 'yuv420p', out],
  { stdio: ['pipe', 'inherit', 'inherit'] });
const arrivals = [];
session.on('Page.screencastFrame', async (frame) => {
  arrivals.push(Date.now());
  ffmpeg.stdin.write(Buffer.from(frame.data, 'base64'));
  await session.send('Page.screencastFrameAck', { sessionId: frame.sessionId }).catch(() => {});
});
await session.send('Page.startScreencast', { format: 'jpeg', quality: 80, everyNthFrame: 1 });
await new Promise((r) => setTimeout(r, Number(seconds) * 1000));
await session.send('Page.stopScreencast').catch(() => {});
ffmpeg.stdin.end();
await new Promise((r) => ffmpeg.on('close', r));
await browser.close();
writeFileSync(out + '.arrivals.json', JSON.stringify(arrivals));
console.log(JSON.stringify({ frames: arrivals.length, seconds: Number(seconds) }));
