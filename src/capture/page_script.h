// The script pagereel injects into every page before the page's own scripts run.
#ifndef PAGEREEL_CAPTURE_PAGE_SCRIPT_H_
#define PAGEREEL_CAPTURE_PAGE_SCRIPT_H_

namespace pagereel::capture {

// Makes every clock a page can read agree with frame time to the millisecond:
//  - performance.now(), requestAnimationFrame timestamps and Date are rounded to whole
//    milliseconds (Chromium adds random sub-100 us coarsening that differs between
//    processes) and shifted so they read 0 at frame 0, not at navigation (loading and
//    waiting for readiness take some virtual time); SVG document clocks likewise;
//  - Math.random() is seeded, the same in every page and every lane;
//  - window.__pagereel.state() reports fonts and window.pagereel.ready, for the wait
//    before frame 0.
inline constexpr const char* kPageScript = R"JS((() => {
  if (window.__pagereel) return;
  let origin = 0;
  const whole = (t) => Math.round(t);
  const perfNow = performance.now.bind(performance);
  performance.now = function now() { return whole(perfNow()) - origin; };
  const raf = window.requestAnimationFrame.bind(window);
  window.requestAnimationFrame = function requestAnimationFrame(callback) {
    return raf((t) => callback(whole(t) - origin));
  };
  const RealDate = Date;
  const dateNow = () => whole(RealDate.now()) - origin;
  function PagereelDate(...args) {
    if (!new.target) return new RealDate(dateNow()).toString();
    return args.length ? new RealDate(...args) : new RealDate(dateNow());
  }
  PagereelDate.prototype = RealDate.prototype;
  PagereelDate.now = dateNow;
  PagereelDate.parse = RealDate.parse;
  PagereelDate.UTC = RealDate.UTC;
  window.Date = PagereelDate;

  // Math.random from a fixed seed (sfc32), so a page that draws random numbers draws the
  // same ones in every lane and every render. crypto.getRandomValues stays truly random.
  let a = 0x9e3779b9, b = 0x243f6a88, c = 0xb7e15162, d = 1;
  Math.random = function random() {
    a |= 0; b |= 0; c |= 0; d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };

  // A page may not close itself mid-film; the browser would refuse anyway, so the call is
  // reported (through a binding pagereel installs) and the render stops with a message.
  window.close = function close() {
    if (typeof window.__pagereelSignal === 'function') window.__pagereelSignal('close');
  };

  const status = { fonts: false, ready: 'none', error: '' };
  let watching = false;
  const watch = () => {
    if (watching) return;
    watching = true;
    document.fonts.ready.then(() => { status.fonts = true; });
    const contract = window.pagereel;
    const ready = contract && contract.ready;
    if (ready && typeof ready.then === 'function') {
      status.ready = 'pending';
      Promise.resolve(ready).then(
          () => { status.ready = 'resolved'; },
          (e) => { status.ready = 'rejected'; status.error = String((e && e.message) || e); });
    }
  };
  Object.defineProperty(window, '__pagereel', {
    value: Object.freeze({
      setOrigin(ms) {
        origin = ms;
        // SVG (SMIL) documents keep their own clock, which ran while the page loaded:
        // hold each one until frame 0's animation-frame turn, so it too reads 0 there.
        const held = [...document.querySelectorAll('svg')].filter(
            (svg) => !svg.ownerSVGElement && svg.pauseAnimations && !svg.animationsPaused());
        held.forEach((svg) => svg.pauseAnimations());
        if (held.length) raf(() => held.forEach((svg) => svg.unpauseAnimations()));
      },
      state() { watch(); return JSON.stringify(status); },
    }),
    enumerable: false,
  });
})();)JS";

}  // namespace pagereel::capture

#endif  // PAGEREEL_CAPTURE_PAGE_SCRIPT_H_
