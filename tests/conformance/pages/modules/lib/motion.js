// Motion of the modules page's orbs, a pure function of time.
import { colors } from './palette.js';

window.moduleBits = (window.moduleBits || 0) | (1 << 1);

export function clock() {
  return performance.now();
}

export function place(el, i, ms) {
  const a = ms / 1000 * (1 + i * 0.25) * Math.PI;
  const x = 40 + i * (560 / colors.length) + Math.cos(a) * 30;
  const y = 262 + Math.sin(a) * 50;
  el.style.transform = `translate(${x.toFixed(2)}px, ${y.toFixed(2)}px)`;
}
