// offscreen-worker.html's worker: draws the time each message brings onto the canvas the
// page handed over (row 0 in timecode.html's format, and a box that moves with it).
const BITS = 20, CELL_W = 32, CELL_H = 40;
let ctx = null;
onmessage = (e) => {
  if (e.data.canvas) {
    ctx = e.data.canvas.getContext('2d');
    return;
  }
  const ts = e.data.ts;
  ctx.fillStyle = '#000';
  ctx.fillRect(0, 0, 640, 360);
  const value = Math.max(0, Math.round(ts));
  for (let b = 0; b < BITS; b++) {
    ctx.fillStyle = (value >> (BITS - 1 - b)) & 1 ? '#fff' : '#000';
    ctx.fillRect(b * CELL_W, 0, CELL_W, CELL_H);
  }
  ctx.fillStyle = '#3c3';
  ctx.fillRect((ts / 4) % 600, 200, 40, 40);
};
