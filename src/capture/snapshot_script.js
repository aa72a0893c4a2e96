// Injected into every document a Snapshot opens, before the page's own scripts. It lets a
// page say when it is ready (window.triggerCapture()) and lets pagereel see when a page
// that says nothing has settled: it notes the last time the page ran an animation frame
// of its own, changed its DOM, or had a finite animation or transition running.
(() => {
  if (window.__pagereelSnapshot) return;
  const signal = window.__pagereelSignal;
  const now = () => performance.now();
  const state = { lastActivity: now() };
  const touch = () => { state.lastActivity = now(); };

  Object.defineProperty(window, 'triggerCapture', {
    value: () => { try { signal('trigger'); } catch (e) {} },
    configurable: true, writable: true,
  });

  // A page that keeps asking for animation frames is drawing (a chart animating in).
  const raf = window.requestAnimationFrame.bind(window);
  window.requestAnimationFrame = (callback) => raf((t) => { touch(); return callback(t); });

  new MutationObserver(touch).observe(document, {
    subtree: true, childList: true, attributes: true, characterData: true,
  });

  const finiteAnimationRunning = () => {
    if (!document.getAnimations) return false;
    for (const a of document.getAnimations()) {
      if (a.playState !== 'running' || !a.effect) continue;
      const end = a.effect.getComputedTiming().endTime;
      if (Number.isFinite(end)) return true;
    }
    return false;
  };

  // Resolves with 'quiet' once nothing has changed for `quietMs`, no finite animation runs
  // and no font is loading; with 'cap' after `capMs` whatever happens.
  const waitForQuiet = (quietMs, capMs) => new Promise((resolve) => {
    const start = now();
    const poll = () => {
      const t = now();
      const busy = finiteAnimationRunning() ||
          (document.fonts && document.fonts.status === 'loading');
      if (busy) touch();
      if (!busy && t - state.lastActivity >= quietMs) return resolve('quiet');
      if (t - start >= capMs) return resolve('cap');
      setTimeout(poll, 25);
    };
    poll();
  });

  Object.defineProperty(window, '__pagereelSnapshot', {
    value: { waitForQuiet }, configurable: false, enumerable: false,
  });
})();
