// The page's module worker: imports its helper statically, then posts its own animation
// frame timestamps through it.
import { post } from './module-helper.js';
requestAnimationFrame(function frame(t) {
  post({ raf: t });
  requestAnimationFrame(frame);
});
