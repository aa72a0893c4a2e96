// The page's classic worker: posts its own animation frame timestamps, its clock in a
// setTimeout(..., 500), and its count of setInterval(..., 100) ticks.
let ticks = 0;
setTimeout(() => postMessage({ timeout: performance.now() }), 500);
setInterval(() => { ticks += 1; postMessage({ ticks }); }, 100);
requestAnimationFrame(function frame(t) {
  postMessage({ raf: t });
  requestAnimationFrame(frame);
});
