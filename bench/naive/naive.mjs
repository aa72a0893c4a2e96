// The naive way to film a page, as many tools do it: a real-time page, Page.captureScreenshot
// once per frame, each image piped to an ffmpeg subprocess. Used only as a reference in
// bench/render_bench.sh; it makes no attempt at exact timing.
//
// node naive.mjs URL OUT.mp4 WIDTH HEIGHT FRAMES FPS
import { spawn } from 'node:child_process';
import { openPage } from './launch.mjs';

const [url, out, width, height, frames, fps] = process.argv.slice(2);
const { browser, page } = await openPage(url, width, height);

const ffmpeg = spawn('ffmpeg', ['-v', 'error', '-y', '-f', 'image2pipe', '-framerate', fps,
  '-c:v', 'mjpeg', '-i', '-', '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '14',
  '-pix_fmt', 'yuv420p', out], { stdio: ['pipe', 'inherit', 'inherit'] });
const start = performance.now();
for (let i = 0; i < Number(frames); i++) {
  const jpeg = await page.screenshot({ type: 'jpeg', quality: 90 });
  if (!ffmpeg.stdin.write(jpeg)) await new Promise((r) => ffmpeg.stdin.once('drain', r));
}
ffmpeg.stdin.end();
await new Promise((r) => ffmpeg.on('close', r));
const seconds = (performance.now() - start) / 1000;
await browser.close();
console.log(JSON.stringify({ frames: Number(frames), wall_s: seconds, fps: Number(frames) / seconds }));
