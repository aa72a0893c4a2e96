// The modules page's entry module.
import { clock, place } from './lib/motion.js';
import { colors } from './lib/palette.js';

window.moduleBits = (window.moduleBits || 0) | (1 << 0);

const orbs = colors.map((color) => {
  const el = document.createElement('div');
  el.className = 'orb';
  el.style.background = color;
  document.body.appendChild(el);
  return el;
});

let late = null;
import('./lib/late.js').then((m) => {
  late = m;
  window.moduleBits |= 1 << 3;
});

requestAnimationFrame(function frame(ts) {
  orbs.forEach((el, i) => place(el, i, ts));
  if (late) late.decorate(ts);
  paintCodes([ts, window.moduleBits, clock()]);
  requestAnimationFrame(frame);
});
