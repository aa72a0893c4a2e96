// Injected into every document of a page pagereel renders, before the page's own scripts.
// capture::Page puts its settings (a JSON object) in place of the config placeholder.
(() => {
  if (window.__pagereel) return;
  const config = __PAGEREEL_CONFIG__;
  const epoch = config.epoch;  // Date.now() at frame 0, ms.

  // Film time. Under virtual time, Date.now() reads the virtual clock floored to the
  // millisecond; frames are drawn half a millisecond past whole milliseconds, so
  // Date.now() - epoch - shift is exactly the frame's time in ms. Before frame 0 (while the
  // page loads and gets ready) film time stands at 0, so a clock never runs backwards.
  const RealDate = Date;
  const realDateNow = RealDate.now;
  let shift = config.shift;  // null until frame 0's time is known.
  const film = () => (shift === null ? 0 : Math.max(0, realDateNow() - epoch - shift));

  const signal = (message) => {
    if (typeof window.__pagereelSignal === 'function') window.__pagereelSignal(message);
  };

  // performance.now() and requestAnimationFrame timestamps: film time, whole ms.
  performance.now = function now() { return film(); };
  const raf = window.requestAnimationFrame.bind(window);
  window.requestAnimationFrame = function requestAnimationFrame(callback) {
    return raf(() => callback(film()));
  };

  // Date: the epoch plus film time.
  function PagereelDate(...args) {
    if (!new.target) return new RealDate(epoch + film()).toString();
    return args.length ? new RealDate(...args) : new RealDate(epoch + film());
  }
  PagereelDate.prototype = RealDate.prototype;
  PagereelDate.now = function now() { return epoch + film(); };
  PagereelDate.parse = RealDate.parse;
  PagereelDate.UTC = RealDate.UTC;
  Object.defineProperty(RealDate.prototype, 'constructor', { value: PagereelDate });
  window.Date = PagereelDate;

  // document.timeline and animation start times count from this document's time origin,
  // not from frame 0. timelineShift is measured at this document's first animation frame.
  let timelineShift = null;
  const timelineProto = Object.getPrototypeOf(Object.getPrototypeOf(document.timeline));
  const timelineTime = Object.getOwnPropertyDescriptor(timelineProto, 'currentTime');
  const rawTimeline = () => timelineTime.get.call(document.timeline);
  const micro = (t) => Math.round(t * 1000) / 1000;
  Object.defineProperty(timelineProto, 'currentTime', {
    configurable: true,
    enumerable: true,
    get() {
      const raw = timelineTime.get.call(this);
      if (this !== document.timeline || raw === null) return raw;
      return timelineShift === null ? 0 : micro(raw - timelineShift);
    },
  });
  const startTime = Object.getOwnPropertyDescriptor(Animation.prototype, 'startTime');
  const onDocumentTimeline = (animation) => animation.timeline === document.timeline;
  Object.defineProperty(Animation.prototype, 'startTime', {
    configurable: true,
    enumerable: true,
    get() {
      const raw = startTime.get.call(this);
      if (raw === null || !onDocumentTimeline(this) || timelineShift === null) return raw;
      return micro(raw - timelineShift);
    },
    set(value) {
      const shifted = value === null || !onDocumentTimeline(this) || timelineShift === null;
      startTime.set.call(this, shifted ? value : value + timelineShift);
    },
  });
  const currentTime = Object.getOwnPropertyDescriptor(Animation.prototype, 'currentTime');
  Object.defineProperty(Animation.prototype, 'currentTime', {
    configurable: true,
    enumerable: true,
    get() {
      const raw = currentTime.get.call(this);
      return raw === null ? raw : micro(raw);
    },
    set(value) { currentTime.set.call(this, value); },
  });

  // pagereel's own animation frame, every frame: it keeps a frame requested (so a
  // beginFrame always runs the page's animation frame), measures the timeline shift, and
  // reports each frame's time so the engine can tell a frame that did not run.
  const top = window === window.top;
  raf(function tick() {
    if (shift !== null) {
      if (timelineShift === null && rawTimeline() !== null) timelineShift = rawTimeline() - film();
      if (top) signal('frame:' + film());
    }
    raf(tick);
  });

  // Math.random from a fixed seed (sfc32), the same in every page and lane.
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

  if (config.deviceMemory) {
    Object.defineProperty(Navigator.prototype, 'deviceMemory',
                          { configurable: true, get: () => config.deviceMemory });
  }

  window.close = function close() { signal('close'); };
  // A top document that starts unloading runs no more animation frames: say why.
  if (top) addEventListener('beforeunload', () => signal('leaving'), true);

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
      // Frame 0 is next: from now on film time is floor(virtual ms) - value.
      start(value) {
        if (shift !== null) return;
        shift = value;
        // SVG (SMIL) documents keep their own clock, which ran while the page loaded:
        // hold each one until frame 0's animation frame, so it too reads 0 there.
        const held = [...document.querySelectorAll('svg')].filter(
            (svg) => !svg.ownerSVGElement && svg.pauseAnimations && !svg.animationsPaused());
        held.forEach((svg) => svg.pauseAnimations());
        if (held.length) raf(() => held.forEach((svg) => svg.unpauseAnimations()));
      },
      // Resolves with the page's readiness once promises already settled have run.
      async state() { watch(); await null; await null; return JSON.stringify(status); },
    }),
    enumerable: false,
  });
})();
