// Where one HeadlessExperimental.beginFrame's time goes (issue 19, item 1): a bare
// chrome-headless-shell with pagereel's begin-frame switches, one 1280x720 target, N frames
// one period (16.68 ms of frame time) apart, each sent as soon as the one before answered.
// Prints the round trip's quantiles; with TRACE=categories also Chromium's own trace events
// per frame (ms of each event per frame, summed over threads and processes).
//
//   node --experimental-websocket bench/live/begin_frame_trace.mjs URL none|jpeg|png N
//   TRACE=devtools,viz,cc,gpu,benchmark,toplevel node --experimental-websocket ... URL jpeg 200
//
// Needs Node 20 or later (its WebSocket); run alone, under the build lock.
import { spawn } from 'node:child_process';

const [url, mode, frames] = [process.argv[2], process.argv[3], Number(process.argv[4] || 300)];
const port = 9400 + Math.floor(Math.random() * 500);
const browser = spawn(process.env.PAGEREEL_BROWSER || '/usr/bin/chromium-headless-shell', [
  `--remote-debugging-port=${port}`, '--no-sandbox', '--disable-gpu', '--hide-scrollbars',
  '--run-all-compositor-stages-before-draw', '--disable-threaded-animation', '--disable-checker-imaging',
  '--disable-image-animation-resync', '--disable-new-content-rendering-timeout', '--enable-begin-frame-control',
  `--user-data-dir=/tmp/begin-frame-trace-${port}`, 'about:blank'], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
const endpoint = await new Promise((resolve) => browser.stderr.on('data', (d) => {
  const m = /ws:\/\/\S+/.exec(d.toString());
  if (m) resolve(m[0]);
}));
const ws = new WebSocket(endpoint);
await new Promise((resolve) => { ws.onopen = resolve; });
let nextId = 0;
const pending = new Map();
const events = [];
let traced;
ws.onmessage = (e) => {
  const m = JSON.parse(e.data);
  if (m.method === 'Tracing.dataCollected') events.push(...m.params.value);
  if (m.method === 'Tracing.tracingComplete') traced();
  if (m.id && pending.has(m.id)) { pending.get(m.id)(m); pending.delete(m.id); }
};
const call = (method, params = {}, sessionId) => new Promise((resolve) => {
  const id = ++nextId;
  pending.set(id, resolve);
  ws.send(JSON.stringify({ id, method, params, sessionId }));
});
const { result: { targetId } } = await call('Target.createTarget',
  { url: 'about:blank', width: 1280, height: 720, enableBeginFrameControl: true });
const { result: { sessionId } } = await call('Target.attachToTarget', { targetId, flatten: true });
let frameTime = performance.now() + 1000;
const beginFrame = (screenshot) => {
  frameTime += 16.68;
  const params = { frameTimeTicks: frameTime, interval: 16.68 };
  if (screenshot) params.screenshot = screenshot;
  return call('HeadlessExperimental.beginFrame', params, sessionId);
};
call('Page.navigate', { url }, sessionId);
for (let i = 0; i < 60; i++) await beginFrame(null);  // The load.
const screenshot = { jpeg: { format: 'jpeg', quality: 80 }, png: { format: 'png', optimizeForSpeed: true } }[mode] || null;
for (let i = 0; i < 30; i++) await beginFrame(screenshot);  // Warm-up.
if (process.env.TRACE) {
  await call('Tracing.start', { traceConfig: { includedCategories: process.env.TRACE.split(',') }, transferMode: 'ReportEvents' });
}
const took = [];
for (let i = 0; i < frames; i++) {
  const began = performance.now();
  await beginFrame(screenshot);
  took.push(performance.now() - began);
}
took.sort((a, b) => a - b);
const q = (p) => took[Math.floor(p * (took.length - 1))].toFixed(1);
console.log(`${mode}: beginFrame round trip p50 ${q(0.5)} ms, p90 ${q(0.9)} ms, p99 ${q(0.99)} ms (${frames} frames)`);
if (process.env.TRACE) {
  const done = new Promise((resolve) => { traced = resolve; });
  await call('Tracing.end');
  await done;
  const byName = {};
  for (const e of events) {
    if (e.ph === 'X' && e.dur !== undefined) (byName[e.name] ||= []).push(e.dur / 1000);
  }
  const rows = Object.entries(byName).map(([name, d]) => [name, d.length, d.reduce((a, b) => a + b, 0) / frames]);
  rows.sort((a, b) => b[2] - a[2]);
  for (const [name, count, perFrame] of rows.slice(0, Number(process.env.TOP || 25))) {
    console.log(`${perFrame.toFixed(2).padStart(7)} ms/frame ${String(count).padStart(6)} events  ${name}`);
  }
}
ws.close();
process.kill(-browser.pid, 'SIGKILL');
process.exit(0);
