// The fair naive reference for bench/render_bench.sh: the strongest simple thing a user could
// write instead of pagereel. One browser (Debian's chrome-headless-shell, launch.mjs), two
// tabs taking alternate frames (tab k takes frames n = k, k+2, ...). For frame n at
// t = n / fps the tab pauses and seeks every animation to t (document.getAnimations():
// pause(), currentTime = t * 1000, for CSS animations, CSS transitions and Web Animations;
// gsap.globalTimeline.pause() and totalTime(t) when the page has GSAP; pauseAnimations() and
// setCurrentTime(t) on each outermost <svg> for SMIL), waits one requestAnimationFrame turn,
// and takes Page.captureScreenshot (JPEG q90) on its own DevTools session. The JPEGs go to
// one ffmpeg subprocess in film order, reordered by frame index through a window of at most
// 8 frames. Timing runs from before the browser is launched to ffmpeg's exit, as pagereel's
// and raw_floor's do.
//
// What it gets right and wrong, checked against `pagereel render` (150 frames at 30 fps):
// - bench/compositions/light (two CSS animations): right. At 1280x720 the bar's right edge
//   is within 1 px of pagereel's and the title's position within 2 px in all 150 frames
//   (both fade and slide follow), and frames at 1920x1080 match by eye. The title's glyphs
//   are spaced slightly differently because launch.mjs does not pass pagereel's
//   --font-render-hinting=none; that is the browser's switches, not the seeking.
// - bench/compositions/heavy: the CSS parts (orbiting blurred lights, tilting cards, the SVG
//   path drawn by a CSS dash offset, the crawl) match pagereel. The 1500-particle canvas does
//   not: it is drawn by the page's own requestAnimationFrame loop, which seeking cannot
//   reach. It keeps running at 60 Hz on the wall clock in both tabs while frames are taken
//   at about 3 per second, so each film frame advances the particles by a third of a second
//   of wall time instead of 1/30 s (they jump tens of pixels a frame where pagereel's move
//   one or two), their colours cycle on wall time, alternate frames come from the two tabs'
//   separate copies of the simulation, and no two runs give the same film.
// In general, anything that reads a clock itself (requestAnimationFrame timestamps,
// performance.now, Date, setTimeout; canvas, WebGL, lottie, Chart.js, d3 timers, <video>)
// is filmed at wall-clock time, not at t. An animation that finished before the first seek
// without a fill mode is no longer listed by getAnimations() and is never brought back.
// pagereel gives every one of these clocks the frame's time. The rAF-driven page's drawing
// between captures (in both tabs) is part of what this reference costs, as it would be for a
// user.
//
// Choices that make it as fast as it simply can be: one rAF turn after the seek (two cost
// about 15 % more on the light page and changed no frame; none was as right there, because
// captureScreenshot forces its own redraw, but that is not documented behaviour). Not
// page.screenshot(): puppeteer runs it under a mutex per browser, so the second tab would
// wait for the first. H.264 with pagereel's default settings (libx264 veryfast, CRF 14 =
// its --quality 90), so both do the same encoding work.
//
// node seek.mjs URL OUT.mp4 WIDTH HEIGHT FRAMES FPS
// Prints one JSON line: {frames, wall_s, fps, setup_s (launch, loads, fonts), tabs}.
import { spawn } from 'node:child_process';
import { openPage } from './launch.mjs';

const [url, out, width, height, framesArg, fpsArg] = process.argv.slice(2);
const frames = Number(framesArg);
const fps = Number(fpsArg);
const kTabs = 2;
const kWindow = 8;  // frames a tab may run ahead of the next one ffmpeg needs

const start = performance.now();
const { browser, page: first } = await openPage(url, width, height);
const pages = [first];
for (let i = 1; i < kTabs; i++) {
  const page = await browser.newPage();
  await page.setViewport({ width: Number(width), height: Number(height) });
  await page.goto(url, { waitUntil: 'load' });
  pages.push(page);
}
const tabs = await Promise.all(pages.map(async (page) => {
  await page.evaluate(() => document.fonts.ready.then(() => {}));
  return { page, cdp: await page.createCDPSession() };
}));
const setupSeconds = (performance.now() - start) / 1000;

// Runs in the page: seek everything that can be seeked to t seconds, then wait for the next
// animation frame, which draws the seek.
function seek(t) {
  for (const a of document.getAnimations()) {
    a.pause();
    a.currentTime = t * 1000;
  }
  if (window.gsap) {
    window.gsap.globalTimeline.pause();
    window.gsap.globalTimeline.totalTime(t);
  }
  for (const svg of document.querySelectorAll('svg')) {
    if (!svg.ownerSVGElement) {
      svg.pauseAnimations();
      svg.setCurrentTime(t);
    }
  }
  return new Promise((resolve) => requestAnimationFrame(resolve));
}

const ffmpeg = spawn('ffmpeg', ['-v', 'error', '-y', '-f', 'image2pipe', '-framerate', String(fps),
  '-c:v', 'mjpeg', '-i', '-', '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '14',
  '-pix_fmt', 'yuv420p', out], { stdio: ['pipe', 'inherit', 'inherit'] });
const ffmpegDone = new Promise((resolve) => ffmpeg.on('close', resolve));

// Film-order writer: frames arrive from the tabs out of order; `next` is the one ffmpeg needs.
const ready = new Map();
let next = 0;
let wakeups = [];
let writing = Promise.resolve();
function wake() {
  const w = wakeups;
  wakeups = [];
  for (const resolve of w) resolve();
}
async function untilInWindow(n) {
  while (n >= next + kWindow) await new Promise((resolve) => wakeups.push(resolve));
}
function deliver(n, jpeg) {
  ready.set(n, jpeg);
  writing = writing.then(async () => {
    while (ready.has(next)) {
      const bytes = ready.get(next);
      ready.delete(next);
      next++;
      wake();
      if (!ffmpeg.stdin.write(bytes)) await new Promise((resolve) => ffmpeg.stdin.once('drain', resolve));
    }
  });
  return writing;
}

await Promise.all(tabs.map(async ({ page, cdp }, k) => {
  for (let n = k; n < frames; n += kTabs) {
    await untilInWindow(n);
    await page.evaluate(seek, n / fps);
    const { data } = await cdp.send('Page.captureScreenshot',
      { format: 'jpeg', quality: 90, captureBeyondViewport: false });
    deliver(n, Buffer.from(data, 'base64'));
  }
}));
await writing;
ffmpeg.stdin.end();
const code = await ffmpegDone;
const seconds = (performance.now() - start) / 1000;
await browser.close();
if (code !== 0) {
  console.error(`seek.mjs: ffmpeg exited with ${code}`);
  process.exit(1);
}
console.log(JSON.stringify({ frames, wall_s: seconds, fps: frames / seconds, setup_s: setupSeconds,
  tabs: kTabs }));
