// offscreen-worker's worker: paints a time onto each canvas the page handed over, as one
// row of 20 cells of 32x40 px, white for 1, most significant bit first.
let a = null, b = null;
const paint = (context, value) => {
  const v = Math.round(Math.max(0, value)) & 0xFFFFF;
  for (let bit = 0; bit < 20; bit++) {
    context.fillStyle = (v >> (19 - bit)) & 1 ? '#fff' : '#000';
    context.fillRect(bit * 32, 0, 32, 40);
  }
};
onmessage = (e) => {
  if (e.data.canvases) {
    a = e.data.canvases[0].getContext('2d');
    b = e.data.canvases[1].getContext('2d');
    paint(a, 0);
    paint(b, 0);
    requestAnimationFrame(function frame(t) {
      paint(a, t);
      requestAnimationFrame(frame);
    });
  } else if (b) {
    paint(b, e.data.ts);
  }
};
