// Started by parent.js: posts its animation frame timestamps and Date.now() (minus
// pagereel's epoch, 2026-01-01T00:00:00Z), its clock in a setTimeout(..., 500), and its
// setInterval(..., 100) tick count.
const epoch = Date.UTC(2026, 0, 1);
let ticks = 0;
setTimeout(() => postMessage({ timeout: performance.now() }), 500);
setInterval(() => { ticks += 1; postMessage({ ticks }); }, 100);
requestAnimationFrame(function frame(t) {
  postMessage({ raf: t, date: Date.now() - epoch });
  requestAnimationFrame(frame);
});
