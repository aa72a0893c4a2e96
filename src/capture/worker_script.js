// Injected into every dedicated worker of a page pagereel renders (classic, module and
// blob: workers alike), by Runtime.evaluate on the worker's session while it waits for the
// debugger at its start, before its own script. capture::Page puts its settings (a JSON
// object) in place of the config placeholder.
//
// Why: under virtual time a worker's clocks follow the page's virtual clock, but its
// timers fire only when something wakes its thread, so a worker's setTimeout(f, 500) ran
// at frame 15 in one render and frame 29 in the next (measured on headless-shell 156), and
// its animation frames never run under begin-frame control. Here the worker's timers,
// clocks, animation frames and Math.random follow the film, and nothing reads a real clock.
//
// Page drives it before every grant of virtual time to the page, with
//   __pagereelWorker.advance(T)   (awaited)
// T: the virtual time the page is about to reach, in ms since it was created (timers run
// on it, as the page's do). First the results of wall-clock work that came since the last
// advance (fetch, bodies, wasm; it waits for those in flight) are handed over, then the
// timers run. The promise resolves once every timer due by T has run (each
// as a task of its own, so microtasks run between them, in order of due time, the clocks
// standing at its due time) and then the worker's animation frame callbacks: whatever
// they posted to the page is in the page's queue before the page's time moves, so the
// page receives it in the same frame in every render. It resolves with the number of
// canvas pictures sent to the page so far, which Page waits for the page to have.
(() => {
  if (self.__pagereelWorker) return;
  const config = __PAGEREEL_CONFIG__;  // { epoch, lead, t, shift, shared }
  const epoch = config.epoch;  // Date.now() at frame 0, ms.
  let now = config.t;          // Virtual time, ms since the page was created.
  let shift = config.shift;    // Frame 0's whole-ms virtual time; null until it is known.
  // Film time, whole ms: 0 until frame 0, as in the page (see page_script.js).
  const film = () => (shift === null ? -config.lead : Math.max(0, Math.floor(now) - shift));

  // While the worker waits for the debugger its global object does not yet inherit
  // setTimeout and the like: what follows defines its own properties, which stay, and
  // reads no inherited global but constructors.
  const timers = new Map();  // id -> { due, seq, f, args, every (null: once), nesting }
  let nextId = 1;
  let seq = 0;
  let nesting = 0;
  let target = -Infinity;  // The T of the advance() running, if one is.
  let waiter = null;       // Its promise's resolve.
  let pumping = false;
  const channel = new MessageChannel();

  const due = () => {
    let best = null;
    for (const [id, t] of timers) {
      if (t.due > Math.max(now, target)) continue;
      if (!best || t.due < best[1].due || (t.due === best[1].due && t.seq < best[1].seq)) {
        best = [id, t];
      }
    }
    return best;
  };
  const pump = () => {
    if (pumping) return;
    pumping = true;
    channel.port2.postMessage(0);
  };
  const rafs = [];
  const cancelled = new Set();
  const finish = () => {
    if (target > -Infinity) now = Math.max(now, target);
    target = -Infinity;
    // Animation frames run from frame 0 on, as the page's (no frame is drawn before it).
    for (const [id, callback] of shift === null ? [] : rafs.splice(0)) {
      if (cancelled.delete(id)) continue;
      try {
        callback(film());
      } catch (e) {
        self.reportError(e);
      }
    }
    const resolve = waiter;
    waiter = null;
    // What the timers and animation frames posted is counted before advance() resolves: the
    // engine looks at the counts as soon as it has.
    if (trafficQueued) flushTraffic();
    if (resolve) sendCanvases().then(() => resolve(canvasesSent));
  };
  // One timer per task: the next is queued before this one runs.
  channel.port1.onmessage = () => {
    pumping = false;
    const next = due();
    if (!next) {
      if (waiter) finish();
      return;
    }
    const [id, t] = next;
    now = Math.max(now, t.due);
    if (t.every === null) {
      timers.delete(id);
    } else {
      t.due = now + t.every;
      t.seq = seq++;
    }
    nesting = t.nesting + 1;
    pump();
    try {
      if (typeof t.f === 'function') t.f.apply(self, t.args);
      else (0, eval)(String(t.f));
    } finally {
      nesting = 0;
    }
  };
  const add = (f, ms, args, repeat) => {
    let delay = Math.max(0, Number(ms) || 0);
    if (nesting >= 5 && delay < 4) delay = 4;  // HTML's clamp, as the page's timers have it.
    const id = nextId++;
    timers.set(id, {
      due: now + delay, seq: seq++, f, args, every: repeat ? Math.max(delay, 1) : null, nesting,
    });
    if (delay === 0) pump();
    return id;
  };
  self.setTimeout = function setTimeout(f, ms, ...args) { return add(f, ms, args, false); };
  self.setInterval = function setInterval(f, ms, ...args) { return add(f, ms, args, true); };
  self.clearTimeout = function clearTimeout(id) { timers.delete(id); };
  self.clearInterval = function clearInterval(id) { timers.delete(id); };

  // Messages from and to the page, counted (page_script.js says why): the page's messages
  // this worker has handled and its own it has posted, told to Page through a binding in a
  // task after the handlers ran.
  const traffic = { id: null, handled: 0, posted: 0 };
  const trafficLater = new MessageChannel();
  let trafficQueued = false;
  // Its own counts first, then those of the workers it started: when the engine sees that
  // this worker received what a worker it started posted, it already knows what this one
  // posted in turn (it forwards, say, to the page).
  const flushTraffic = () => {
    trafficQueued = false;
    const binding = self.__pagereelWorkerSignal;
    if (traffic.id !== null && typeof binding === 'function') {
      binding('worker:' + traffic.id + ':' + traffic.handled + ':' + traffic.posted);
    }
    flushStartedTraffic();
    flushPorts();
  };
  trafficLater.port1.onmessage = () => { if (trafficQueued) flushTraffic(); };
  const reportTraffic = () => {
    if (trafficQueued) return;
    trafficQueued = true;
    trafficLater.port2.postMessage(0);
  };
  const postReal = self.postMessage;
  if (typeof postReal === 'function') {
    // (An own property of the worker's global object, not of DedicatedWorkerGlobalScope's
    // prototype.)
    self.postMessage = function postMessage(...args) {
      const result = postReal.apply(self, args);
      traffic.posted += 1;
      reportTraffic();
      return result;
    };
  }

  // A shared worker's ports, one per page (document) connected to it: what it handles and
  // posts on each is counted as shared_port_script.js counts the page's end, told as
  // 'port:worker:ID:HANDLED:POSTED'. A port is known by the id its page sends first on it,
  // which comes only once the worker has started its end (set onmessage or called
  // start()); until then a started port is told as waiting ('port:waiting:N', N of them),
  // and the engine waits for its id.
  const unsentPorts = new Set();
  let portsWaiting = 0;
  let portsWaitingTold = 0;
  const flushPorts = () => {
    const binding = self.__pagereelWorkerSignal;
    if (typeof binding !== 'function') return;
    for (const p of unsentPorts) binding('port:worker:' + p.id + ':' + p.handled + ':' + p.posted);
    unsentPorts.clear();
    if (portsWaiting !== portsWaitingTold) {
      portsWaitingTold = portsWaiting;
      binding('port:waiting:' + portsWaiting);
    }
  };
  if (config.shared) {
    EventTarget.prototype.addEventListener.call(self, 'connect', (e) => {
      const port = e.ports && e.ports[0];
      if (!port) return;
      const p = { id: null, handled: 0, posted: 0, started: false };
      const changed = () => {
        if (p.id !== null) unsentPorts.add(p);
        reportTraffic();
      };
      countPort(port, () => {
        p.posted += 1;
        changed();
      }, () => {
        if (p.started) return;
        p.started = true;
        if (p.id === null) portsWaiting += 1;
        reportTraffic();
      });
      port.addEventListener('message', (m) => {
        const data = m.data;
        if (p.id === null && data && typeof data.__pagereelPortId === 'string') {
          p.id = data.__pagereelPortId;
          if (p.started) portsWaiting -= 1;
          p.started = true;  // (A message came: the port is started, however it was.)
          m.stopImmediatePropagation();
          changed();
          return;
        }
        p.handled += 1;
        changed();
      });
    }, true);
  }

  // OffscreenCanvases the page handed over (page_script.js keeps their elements): their
  // pictures go back to the page at the end of every advance, after the worker's timers
  // and animation frames, so the frame shows what the worker drew for it. The page sends a
  // MessagePort for them first, in a message taken here; canvases are numbered in the order
  // findCanvases meets them in the messages that follow, as the page numbers them.
  let canvasPort = null;
  const pageCanvases = [];
  let canvasesSent = 0;  // Pictures sent so far, which advance() resolves with.
  EventTarget.prototype.addEventListener.call(self, 'message', (e) => {
    const data = e.data;
    if (data && data.__pagereelCanvasPort) {
      canvasPort = data.__pagereelCanvasPort;
      e.stopImmediatePropagation();
      return;
    }
    if (data && data.__pagereelWorkerId) {
      traffic.id = data.__pagereelWorkerId;
      e.stopImmediatePropagation();
      reportTraffic();
      return;
    }
    if (canvasPort) findCanvases(data, 0, pageCanvases);
    traffic.handled += 1;
    reportTraffic();
  }, true);
  // Resolves once every drawn canvas's picture is on its way to the page.
  const sendCanvases = () => {
    if (!canvasPort) return Promise.resolve();
    return Promise.all(pageCanvases.map((canvas, number) => {
      if (!canvas.width || !canvas.height) return null;
      return createImageBitmap(canvas).then(
          (bitmap) => {
            canvasPort.postMessage({ canvas: number, bitmap }, [bitmap]);
            canvasesSent += 1;
          },
          () => {});
    }));
  };

  // Animation frames (dedicated workers have them; the real ones never run under
  // begin-frame control): after the timers of each advance, stamped with film time.
  let rafId = 0;
  if (typeof self.requestAnimationFrame === 'function') {
    self.requestAnimationFrame = function requestAnimationFrame(callback) {
      rafs.push([++rafId, callback]);
      return rafId;
    };
    self.cancelAnimationFrame = function cancelAnimationFrame(id) { cancelled.add(id); };
  }

  // Clocks: film time in whole ms, as the page's; the page's Math.random.
  performance.now = function now() { return film(); };
/*__PAGEREEL_COMMON__*/
  // Workers this worker starts (pagereel attaches them as it does the page's). Before the
  // clocks: it draws its ids from the real Math.random.
  const flushStartedTraffic = countWorkerTraffic(self, (message) => {
    if (typeof self.__pagereelWorkerSignal === 'function') self.__pagereelWorkerSignal(message);
  }, () => reportTraffic());
  installFilmClocks(self, epoch, film);

  // Work that completes on the wall clock (fetch, response bodies, WebAssembly compiles):
  // its result is handed to the worker's script only in advance(), before the timers, so
  // what follows from it runs at the same point of the film in every render. (Without
  // this, dotlottie-web's worker compiled its wasm and fetched its animation on the wall
  // clock, and its animation started a frame apart from render to render.)
  let working = 0;      // Work started whose result has not come.
  const arrived = [];   // Each settles a caller's promise with a result that came.
  let whenIdle = null;  // Resolves release()'s wait once `working` is 0.
  const hold = (work) => new Promise((resolve, reject) => {
    working += 1;
    const come = (settle) => (value) => {
      arrived.push(() => settle(value));
      working -= 1;
      if (working === 0 && whenIdle) {
        const idle = whenIdle;
        whenIdle = null;
        idle();
      }
    };
    Promise.resolve(work).then(come(resolve), come(reject));
  });
  wrapWallClockWork(self, hold);
  const fetchReal = self.fetch;  // An own property of the global object, as postMessage.
  if (typeof fetchReal === 'function') {
    self.fetch = function fetch(...args) { return hold(fetchReal.apply(self, args)); };
  }
  const nextTask = () => new Promise((resolve) => {
    const c = new MessageChannel();
    c.port1.onmessage = () => resolve();
    c.port2.postMessage(0);
  });
  // Waits for the work in flight and hands over every result, until none is left (what a
  // result leads to may start more: a fetch, then its body).
  const release = async () => {
    for (;;) {
      if (working > 0) await new Promise((resolve) => { whenIdle = resolve; });
      if (!arrived.length) return;
      for (const settle of arrived.splice(0)) settle();
      await nextTask();  // The callers' continuations run first.
    }
  };

  Object.defineProperty(self, '__pagereelWorker', {
    value: Object.freeze({
      // Frame 0 is at virtual time shift + 0.5 ms: from then on the clocks run.
      start(s) { if (shift === null) shift = s; },
      advance(t) {
        return release().then(() => new Promise((resolve) => {
          waiter = resolve;
          target = Math.max(t, now);
          pump();
        }));
      },
    }),
  });
})();
