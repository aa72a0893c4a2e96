// Injected into every document a Snapshot opens, before the page's own scripts. It lets a
// page say when it is ready (window.triggerCapture()) and lets pagereel see when a page
// that says nothing has settled: it keeps count of the work the page has asked for and not
// yet had (timers, animation frames, idle callbacks, posted tasks, fetch() and XHR calls
// and the reading of their bodies, image decodes, WebAssembly compiles, font loads), and
// notes the last time the page ran an animation frame of its own, changed its DOM, or
// posted a message to a MessagePort (how schedulers such as React's split their work into
// tasks). Work it cannot see the end of (workers, sockets, event streams, broadcast
// channels, IndexedDB, frames, media elements) makes the page wait as long as the old
// default did: 700 ms without a change.
(() => {
  if (window.__pagereelSnapshot) return;
  const signal = window.__pagereelSignal;
  const now = () => performance.now();
  const state = { lastActivity: now() };
  const touch = () => { state.lastActivity = now(); };
  // pagereel's own timers, which the page's count leaves out.
  const ownTimeout = window.setTimeout.bind(window);

  Object.defineProperty(window, 'triggerCapture', {
    value: () => { try { signal('trigger'); } catch (e) {} },
    configurable: true, writable: true,
  });

  // Timers the page set and that have not run: id -> when they are due. Intervals are
  // left out: a clock that ticks for ever is not work the page is finishing.
  const timers = new Map();
  const setTimeout0 = window.setTimeout;
  const clearTimeout0 = window.clearTimeout;
  const clearInterval0 = window.clearInterval;
  window.setTimeout = function setTimeout(handler, delay, ...args) {
    if (typeof handler !== 'function') return setTimeout0.call(window, handler, delay, ...args);
    let id = 0;
    id = setTimeout0.call(window, () => {
      timers.delete(id);
      return handler.apply(window, args);
    }, delay);
    timers.set(id, now() + Math.max(0, Number(delay) || 0));
    return id;
  };
  window.clearTimeout = function clearTimeout(id) {
    timers.delete(id);
    return clearTimeout0.call(window, id);
  };
  window.clearInterval = function clearInterval(id) {
    timers.delete(id);  // The two clear either kind.
    return clearInterval0.call(window, id);
  };

  // Animation frames and idle callbacks asked for and not yet run.
  const callbacks = (request, cancel, name) => {
    const pending = new Set();
    const request0 = window[request];
    const cancel0 = window[cancel];
    if (!request0) return pending;
    window[request] = function (callback, ...rest) {
      let id = 0;
      id = request0.call(window, (...a) => {
        pending.delete(id);
        if (name === 'frame') touch();
        return callback(...a);
      }, ...rest);
      pending.add(id);
      return id;
    };
    window[cancel] = function (id) {
      pending.delete(id);
      return cancel0.call(window, id);
    };
    return pending;
  };
  // A page that keeps asking for animation frames is drawing (a chart animating in).
  const frames = callbacks('requestAnimationFrame', 'cancelAnimationFrame', 'frame');
  const idles = callbacks('requestIdleCallback', 'cancelIdleCallback', 'idle');

  // fetch() until its promise settles, the reading of a body until it is read, XHRs until
  // their loadend, scheduler.postTask() tasks until they ran. Each is let go in a callback
  // registered before the page's own, so when pagereel looks next (a task later), the
  // page's continuation has run and counted whatever it started.
  let calls = 0;
  const track = (promise) => {
    calls++;
    const done = () => { calls--; touch(); };
    promise.then(done, done);
    return promise;
  };
  const wrapPromise = (owner, name) => {
    const f = owner && owner[name];
    if (typeof f !== 'function') return;
    owner[name] = function (...a) { return track(f.apply(this, a)); };
  };
  wrapPromise(window, 'fetch');
  if (window.Response) {
    for (const m of ['arrayBuffer', 'blob', 'bytes', 'formData', 'json', 'text']) {
      wrapPromise(Response.prototype, m);
    }
  }
  if (window.scheduler) wrapPromise(window.scheduler, 'postTask');
  wrapPromise(window, 'createImageBitmap');
  if (window.HTMLImageElement) wrapPromise(HTMLImageElement.prototype, 'decode');
  if (window.WebAssembly) {
    for (const m of ['compile', 'compileStreaming', 'instantiate', 'instantiateStreaming']) {
      wrapPromise(WebAssembly, m);
    }
  }
  if (window.FontFace) wrapPromise(FontFace.prototype, 'load');
  if (window.FontFaceSet) wrapPromise(FontFaceSet.prototype, 'load');

  // Sources of work whose end the page's script cannot see: from their first use on, the
  // page must also have been unchanged for `kUnseenQuietMs`, and their messages count as
  // changes.
  const kUnseenQuietMs = 700;
  const unseen = () => { state.unseen = true; touch(); };
  for (const name of ['Worker', 'SharedWorker', 'WebSocket', 'EventSource', 'BroadcastChannel',
                      'RTCPeerConnection']) {
    const C = window[name];
    if (typeof C !== 'function') continue;
    window[name] = new Proxy(C, {
      construct(target, args, newTarget) {
        const made = Reflect.construct(target, args, newTarget);
        unseen();
        const port = name === 'SharedWorker' ? made.port : made;
        for (const e of ['message', 'open', 'error', 'close']) port.addEventListener(e, unseen);
        return made;
      },
    });
    if (C.prototype && typeof C.prototype.postMessage === 'function') {
      const post0 = C.prototype.postMessage;
      C.prototype.postMessage = function (...a) {
        unseen();
        return post0.apply(this, a);
      };
    }
  }
  if (window.IDBFactory) {
    const open0 = IDBFactory.prototype.open;
    IDBFactory.prototype.open = function (...a) {
      unseen();
      return open0.apply(this, a);
    };
  }
  if (window.XMLHttpRequest) {
    // Counted before send(): a synchronous one ends inside it. open() on one still running
    // ends it without a loadend.
    const ends = new WeakMap();
    const open0 = XMLHttpRequest.prototype.open;
    const send0 = XMLHttpRequest.prototype.send;
    XMLHttpRequest.prototype.open = function (...a) {
      const end = ends.get(this);
      if (end) end();
      return open0.apply(this, a);
    };
    XMLHttpRequest.prototype.send = function (...a) {
      calls++;
      const end = () => {
        if (ends.get(this) !== end) return;
        ends.delete(this);
        this.removeEventListener('loadend', end);
        calls--;
        touch();
      };
      ends.set(this, end);
      this.addEventListener('loadend', end);
      try {
        return send0.apply(this, a);
      } catch (e) {
        end();
        throw e;
      }
    };
  }
  if (window.MessagePort) {
    const post0 = MessagePort.prototype.postMessage;
    MessagePort.prototype.postMessage = function (...a) {
      touch();
      return post0.apply(this, a);
    };
  }

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
      ownTimeout(poll, 25);
    };
    poll();
  });

  // What the page still has to do before `until` (performance.now() ms), in words; empty
  // when nothing.
  const pendingWork = (until) => {
    const left = [];
    let soon = 0;
    for (const due of timers.values()) if (due <= until) soon++;
    if (soon) left.push(`${soon} timer${soon > 1 ? 's' : ''}`);
    if (frames.size) left.push('an animation frame');
    if (idles.size) left.push('an idle callback');
    if (calls) left.push(`${calls} fetch/XHR call${calls > 1 ? 's' : ''}`);
    if (finiteAnimationRunning()) left.push('a CSS or Web Animation');
    // Style and layout first: a font is asked for when text first needs it.
    if (document.documentElement) document.documentElement.getBoundingClientRect();
    if (document.fonts && document.fonts.status === 'loading') left.push('fonts');
    return left.join(', ');
  };

  // Resolves with 'settled' once the page has nothing left to do before the cap (no timer
  // due, no animation frame or idle callback asked for, no fetch or XHR unfinished, no
  // finite animation running, no font loading) and nothing has changed for `quietMs` since
  // the later of the call and the page's last activity; with 'cap:<what was left>' after
  // `capMs`. Requests of the page's own elements (images, stylesheets, fonts) are watched
  // by pagereel over DevTools, not here.
  const waitForSettled = (quietMs, capMs) => new Promise((resolve) => {
    const start = now();
    const until = start + capMs;
    const poll = () => {
      const t = now();
      const left = pendingWork(until);
      const need = state.unseen || window.frames.length > 0 ||
          document.querySelector('video, audio') ? Math.max(quietMs, kUnseenQuietMs) : quietMs;
      const quiet = t - Math.max(start, state.lastActivity);
      if (!left && quiet >= need) return resolve('settled');
      if (t >= until) return resolve('cap:' + (left || 'changes'));
      ownTimeout(poll, left ? 10 : Math.max(1, Math.min(50, need - quiet)));
    };
    poll();
  });

  Object.defineProperty(window, '__pagereelSnapshot', {
    value: { waitForQuiet, waitForSettled, pendingWork }, configurable: false, enumerable: false,
  });
})();
