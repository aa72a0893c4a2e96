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
  const lead = config.lead;  // Film time while the page loads: -lead.
  const film = () => (shift === null ? -lead : Math.max(0, realDateNow() - epoch - shift));

  const signal = (message) => {
    if (typeof window.__pagereelSignal === 'function') window.__pagereelSignal(message);
  };

  // Response bodies the page reads (r.json() and the like) and WebAssembly compiles. A
  // fetch() lets page time go on once its headers are in, and its body came on the wall
  // clock: what r.json() gave landed a frame apart between renders; so did a wasm compile.
  // The page tells Page how many are pending, and Page lets the page's tasks run, with page
  // time held, until none is before it draws a frame.
  let bodiesPending = 0;
/*__PAGEREEL_COMMON__*/
  const holdTimeFor = (work) => {
    bodiesPending += 1;
    signal('bodies:' + bodiesPending);
    const done = () => {
      bodiesPending -= 1;
      signal('bodies:' + bodiesPending);
    };
    work.then(done, done);
    return work;
  };
  wrapWallClockWork(window, holdTimeFor);

  // Timers. Chromium's virtual time runs a timer set while page time stands still (in an
  // animation frame, or in a task run where a grant of time ended) only where a later
  // grant ends: a 50 ms setTimeout chain started in an animation frame ticked every 67 ms
  // at 30 fps. So each timer tells Page where it was set and its delay ('timer:F:DELAY',
  // F the film ms now), and Page ends a grant where it is due (page.cc, AdvanceTo); an
  // interval tells each next run as it runs. The delay as Chromium takes it: whole ms, at
  // least 0, and at least 4 ms for a timer set from one nested six deep (HTML's rule;
  // checked against headless-shell's own timing of nested setTimeout(0) and setInterval(0)).
  let timerNesting = 0;
  const timerCall = (f, nesting, args) => {
    const outer = timerNesting;
    timerNesting = nesting;
    try {
      return f.apply(window, args);
    } finally {
      timerNesting = outer;
    }
  };
  const timerDelay = (delay, nesting) => {
    const ms = Math.max(0, Math.trunc(Number(delay)) || 0);
    return nesting > 6 ? Math.max(4, ms) : ms;
  };
  // Only the top document's: Page hears the end of its turn of animation frames, not of
  // its frames' (which run after it), so theirs would be heard in time in some renders
  // only. A frame's timer set in its animation frame runs at the next grant's end.
  const timersTold = window === window.top;
  const timerSet = (ms) => {
    if (timersTold) signal('timer:' + film() + ':' + ms);
  };
  const setTimeoutReal = window.setTimeout;
  const setIntervalReal = window.setInterval;
  window.setTimeout = function setTimeout(f, delay, ...args) {
    const nesting = timerNesting + 1;
    timerSet(timerDelay(delay, nesting));
    if (typeof f !== 'function') return setTimeoutReal.call(window, f, delay, ...args);
    return setTimeoutReal.call(window, () => timerCall(f, nesting, args), delay);
  };
  window.setInterval = function setInterval(f, delay, ...args) {
    const nesting = timerNesting + 1;
    timerSet(timerDelay(delay, nesting));
    if (typeof f !== 'function') return setIntervalReal.call(window, f, delay, ...args);
    let runs = 0;  // Each run nests one deeper: a 0 ms interval waits 4 ms from its 7th.
    return setIntervalReal.call(window, () => {
      runs += 1;
      timerSet(timerDelay(delay, nesting + runs));
      return timerCall(f, nesting + runs - 1, args);
    }, delay);
  };

  // WebSockets. A socket opens, and answers, on the wall clock: the answer to a message
  // sent at load was in frame 0 in one render and not in the next; one sent by a timer at
  // 500 ms came in frame 15 or 16. So page time is held while a socket connects (until
  // open, error or close) and, after the page sends, until the socket's next message (or
  // its close). Page keeps the waits ('socket:+S.W:connect|answer:URL', 'socket:-S.W'):
  // an answer that has not come within a second, or a connection within 5 s, is given up
  // (listed in the summary), and that socket is not waited for again. What a server sends
  // unasked, on its own schedule, still arrives on the wall clock.
  const RealWebSocket = window.WebSocket;
  if (typeof RealWebSocket === 'function') {
    let sockets = 0;
    let waits = 0;
    const state = new WeakMap();  // WebSocket -> { n, waiting: the id of its wait, or null }
    const wait = (s, kind, url) => {
      s.waiting = s.n + '.' + ++waits;
      signal('socket:+' + s.waiting + ':' + kind + ':' + url);
    };
    const settle = (s) => {
      if (s.waiting) signal('socket:-' + s.waiting);
      s.waiting = null;
    };
    window.WebSocket = class WebSocket extends RealWebSocket {
      constructor(...args) {
        super(...args);
        const s = { n: ++sockets, waiting: null, answering: false };
        state.set(this, s);
        wait(s, 'connect', this.url);
        // Before any listener of the page's: the page's own run in the same task, before
        // Page hears of it (a handler that sends starts the next wait).
        for (const type of ['open', 'message', 'error', 'close']) {
          this.addEventListener(type, () => settle(s));
        }
        this.addEventListener('message', () => onMessage(s));
      }
    };
    // A send made while the socket's own message is being handled answers it (a pong to
    // the server's ping, an acknowledgement) and waits for nothing: the flag stays up until
    // a task after the message's, posted by pagereel's listener, which runs first.
    const answered = new MessageChannel();
    const answering = [];
    answered.port1.onmessage = () => {
      const s = answering.shift();
      if (s) s.answering = false;
    };
    const onMessage = (s) => {
      s.answering = true;
      answering.push(s);
      answered.port2.postMessage(0);
    };
    const sendReal = RealWebSocket.prototype.send;
    RealWebSocket.prototype.send = function send(...args) {
      const result = sendReal.apply(this, args);
      const s = state.get(this);
      if (s && !s.waiting && !s.answering && this.readyState === RealWebSocket.OPEN) {
        wait(s, 'answer', this.url);
      }
      return result;
    };
  }

  // OffscreenCanvas on the main thread, shown in the frame that drew it. A canvas handed
  // to transferControlToOffscreen() sends its pictures to the compositor on a begin frame
  // of its own, which came before the frame was drawn in some frames and after it in others
  // (the canvas drops begin frames that are late by the wall clock, and virtual time is
  // behind it): the previous frame's picture showed at random. So the page gets an
  // OffscreenCanvas of its own, not tied to the element, and what it drew is copied onto
  // the element (an ordinary canvas, painted with the document) after each of the page's
  // animation frame callbacks and at the start of every frame (for drawing done by timers
  // and events). Handed to a worker, it goes there as it is, and the worker script sends
  // its picture back at the end of every turn of the worker's timers and animation frames,
  // before the page's time moves to the frame (see postMessage below, worker_script.js).
  const transferReal = HTMLCanvasElement.prototype.transferControlToOffscreen;
  // The page's OffscreenCanvas -> { element, used (the page took a context), context }.
  const shown = new Map();
  const transferred = new WeakSet();  // Elements whose control the page took.
  let canvasesReceived = 0;  // Pictures of worker canvases received (Page waits for them).
  const showOffscreen = () => {
    for (const [canvas, s] of shown) {
      if (!s.used) continue;
      if (s.element.width !== canvas.width) s.element.width = canvas.width;
      if (s.element.height !== canvas.height) s.element.height = canvas.height;
      if (!s.context) s.context = s.element.getContext('2d');
      if (!s.context || !canvas.width || !canvas.height) continue;
      s.context.clearRect(0, 0, canvas.width, canvas.height);
      s.context.drawImage(canvas, 0, 0);
    }
  };
  if (transferReal && typeof OffscreenCanvas === 'function') {
    HTMLCanvasElement.prototype.transferControlToOffscreen = function transferControlToOffscreen() {
      if (transferred.has(this)) {
        throw new DOMException('Cannot transfer control from a canvas for more than one time.',
                               'InvalidStateError');
      }
      transferred.add(this);
      const canvas = new OffscreenCanvas(this.width, this.height);
      shown.set(canvas, { element: this, used: false, context: null });
      return canvas;
    };
    const getContextReal = OffscreenCanvas.prototype.getContext;
    OffscreenCanvas.prototype.getContext = function getContext(...args) {
      const context = getContextReal.apply(this, args);
      const s = shown.get(this);
      if (s && context) s.used = true;
      return context;
    };
    // A worker that gets one of the page's OffscreenCanvases gets a MessagePort first (a
    // message the worker script takes for itself), on which the worker script sends the
    // canvas's picture back as an ImageBitmap; both sides number the canvases in the order
    // findCanvases meets them in the worker's messages.
    const postReal = Worker.prototype.postMessage;
    const channels = new WeakMap();  // Worker -> { port, elements (by number) }
    const drawBack = (elements) => (e) => {
      const element = elements[e.data && e.data.canvas];
      const bitmap = e.data && e.data.bitmap;
      if (bitmap) signal('canvases:' + ++canvasesReceived);
      if (!element || !bitmap) return;
      if (element.width !== bitmap.width) element.width = bitmap.width;
      if (element.height !== bitmap.height) element.height = bitmap.height;
      const context = element.getContext('2d');
      if (context) {
        context.clearRect(0, 0, element.width, element.height);
        context.drawImage(bitmap, 0, 0);
      }
      bitmap.close();
    };
    Worker.prototype.postMessage = function postMessage(message, transfer) {
      const found = [];
      findCanvases(message, 0, found);
      const ours = found.filter((canvas) => shown.has(canvas) && !shown.get(canvas).used);
      let channel = channels.get(this);
      if (!channel && ours.length) {
        const pipe = new MessageChannel();
        channel = { port: pipe.port1, elements: [] };
        channel.port.onmessage = drawBack(channel.elements);
        channels.set(this, channel);
        postReal.call(this, { __pagereelCanvasPort: pipe.port2 }, [pipe.port2]);
      }
      if (channel) {
        for (const canvas of found) {
          // Numbered as the worker will number them: every OffscreenCanvas it receives.
          const s = shown.get(canvas);
          channel.elements.push(s && !s.used ? s.element : null);
          shown.delete(canvas);
        }
      }
      return postReal.call(this, message, transfer);
    };
  }

  // Messages between the page and its dedicated workers. A worker handles a message when
  // it arrives, on the wall clock, and its answer reaches the page in whichever frame is
  // running then: dotlottie-web's DotLottieWorker asks its worker for its state before it
  // tells the page it has loaded, and the 'load' event came a frame apart between renders.
  // So the page and its workers count what they sent and got (script_common.js), and Page
  // lets their tasks run, with page time held, until every message sent has been handled
  // (page.cc, AwaitWorkerTraffic).
  const trafficLater = new MessageChannel();
  let trafficQueued = false;
  const flushTraffic = countWorkerTraffic(window, signal, () => {
    if (trafficQueued) return;
    trafficQueued = true;
    trafficLater.port2.postMessage(0);
  });
  trafficLater.port1.onmessage = () => {
    trafficQueued = false;
    flushTraffic();
  };

  // performance.now() and requestAnimationFrame timestamps: film time, whole ms.
  const realNow = performance.now.bind(performance);
  performance.now = function now() { return film(); };
  // The page's animation frame callbacks for the coming turn and for the one running: the
  // last of a turn to run tells Page the turn ended ('turn:N'), after whatever they told
  // it (the timers they set: page.cc, AdvanceTo). pagereel's own (tick, below) runs first
  // in each turn and opens it.
  const raf = window.requestAnimationFrame.bind(window);
  let nextTurn = new Set();
  let thisTurn = new Set();
  let turnOpen = false;
  const endTurnIfDone = () => {
    if (turnOpen && thisTurn.size === 0) {
      turnOpen = false;
      signal('turn:' + ticks);
    }
  };
  window.requestAnimationFrame = function requestAnimationFrame(callback) {
    const id = raf(() => {
      // One asked for before pagereel's own in the turn (by a video frame callback) is
      // still in nextTurn.
      if (!thisTurn.delete(id)) nextTurn.delete(id);
      try {
        callback(film());
      } finally {
        if (shown.size) queueMicrotask(showOffscreen);
        endTurnIfDone();
      }
    });
    nextTurn.add(id);
    return id;
  };

  // Date: the epoch plus film time; Math.random from a fixed seed (sfc32), the same in
  // every page, worker and lane.
  installFilmClocks(window, epoch, film);

  // document.timeline and animation start times count from this document's time origin,
  // not from frame 0. timelineShift is measured at this document's first animation frame.
  // Before it, the timeline reads film time (-lead while the page loads), and a start time
  // set then (Motion sets one at creation) is kept in film time and made exact at that
  // first frame, before the frame's styles are computed.
  let timelineShift = null;
  const pendingStarts = new Map();  // Animation -> [film time, raw start time set].
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
      return timelineShift === null ? film() : micro(raw - timelineShift);
    },
  });
  const startTime = Object.getOwnPropertyDescriptor(Animation.prototype, 'startTime');
  const onDocumentTimeline = (animation) => animation.timeline === document.timeline;
  Object.defineProperty(Animation.prototype, 'startTime', {
    configurable: true,
    enumerable: true,
    get() {
      const raw = startTime.get.call(this);
      if (raw === null || !onDocumentTimeline(this)) return raw;
      if (timelineShift === null) {
        const pending = pendingStarts.get(this);
        return pending && pending[1] === raw ? pending[0] : raw;
      }
      return micro(raw - timelineShift);
    },
    set(value) {
      if (value === null || !onDocumentTimeline(this)) {
        startTime.set.call(this, value);
      } else if (timelineShift === null) {
        // As far from the timeline's time as the page asked, until the first frame.
        const raw = value - film() + (rawTimeline() || 0);
        startTime.set.call(this, raw);
        pendingStarts.set(this, [value, startTime.get.call(this)]);
      } else {
        startTime.set.call(this, value + timelineShift);
      }
    },
  });
  const applyPendingStarts = () => {
    for (const [animation, [value, raw]] of pendingStarts) {
      // Unless the page moved or ended it since.
      if (animation.playState !== 'idle' && startTime.get.call(animation) === raw) {
        startTime.set.call(animation, value + timelineShift);
      }
    }
    pendingStarts.clear();
  };
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
  // reports each frame's count and time so the engine can tell a frame that did not run
  // (or ran twice), also when a report arrives late.
  const top = window === window.top;
  let ticks = 0;  // Animation frames of the top document since frame 0...
  let lastTick = -1;  // ...and the film time of the last one.
  let lastFrame = -1;  // Film time of this document's last animation frame.
  let tickId = raf(function tick() {
    if (shown.size) showOffscreen();
    if (shift !== null) {
      if (frameCallbacks.size) runVideoFrameCallbacks();
      if (playingMedia.size) endPlayedMedia();
      if (timelineShift === null && rawTimeline() !== null) {
        timelineShift = rawTimeline() - film();
        applyPendingStarts();
      }
      lastFrame = film();
      if (top) {
        ticks += 1;
        lastTick = film();
        signal('frame:' + ticks + ':' + lastTick);
        thisTurn = nextTurn;
        nextTurn = new Set();
        turnOpen = true;
        endTurnIfDone();
      }
    }
    tickId = raf(tick);
  });
  // Unhandled promise rejections. Chromium reports one in a task after the frame it
  // happened in, when page time already stands at the next frame's (an animation frame's
  // rejection of frame 25 was listed at frame 26, and the page's own handler reads 26's
  // time too). This listener, the first, runs just before Chromium reports it, and tells
  // Page the time and that of the last animation frame, so Page can list it at its frame.
  window.addEventListener('unhandledrejection', () => {
    if (shift !== null) signal('rejection:' + film() + ':' + lastFrame);
  }, true);
  // A page that cancels animation frames by number must not cancel this one.
  const caf = window.cancelAnimationFrame.bind(window);
  window.cancelAnimationFrame = function cancelAnimationFrame(id) {
    if (id === tickId) return;
    caf(id);
    nextTurn.delete(id);
    if (thisTurn.delete(id)) endTurnIfDone();
  };
  // Chromium still has the prefixed pair; they are the same as the two above.
  window.webkitRequestAnimationFrame = window.requestAnimationFrame;
  window.webkitCancelAnimationFrame = window.cancelAnimationFrame;

  if (config.deviceMemory) {
    Object.defineProperty(Navigator.prototype, 'deviceMemory',
                          { configurable: true, get: () => config.deviceMemory });
  }

  window.close = function close() { signal('close'); };

  // Dialogs. A film has nobody to answer one, and a real one stops the page's main thread
  // (and with it the film) until it is answered. Each is answered here at once, as a user
  // who dismisses it would: alert() returns, confirm() is false, prompt() is null. The
  // engine lists it in the summary (--strict fails the render on it). A dialog this
  // cannot catch (beforeunload) is dismissed by the engine through DevTools.
  const dialog = (type, answer) => function (message) {
    // With the film time: the signal can reach the engine after the frame has moved on.
    signal('dialog:' + JSON.stringify({
      type, message: message === undefined ? '' : String(message), t: shift === null ? null : film(),
    }));
    return answer;
  };
  window.alert = dialog('alert', undefined);
  window.confirm = dialog('confirm', false);
  window.prompt = dialog('prompt', null);
  // A top document that starts unloading runs no more animation frames: say why.
  if (top) addEventListener('beforeunload', () => signal('leaving'), true);

  // Video, frame-exact. A <video> playing for real follows the media pipeline's own clock,
  // which is not the film's: it runs ahead by a frame or more, differently in every lane.
  // So videos never really play. Each one keeps a model of its playback on film time, and
  // before every frame the engine calls syncVideos(), which seeks each video to where its
  // model says and resolves once every seek has landed. What the page sees (currentTime,
  // paused, ended, play(), pause() and their events) follows the model.
  const media = HTMLMediaElement.prototype;
  const real = {
    play: media.play,
    pause: media.pause,
    currentTime: Object.getOwnPropertyDescriptor(media, 'currentTime'),
    paused: Object.getOwnPropertyDescriptor(media, 'paused'),
    ended: Object.getOwnPropertyDescriptor(media, 'ended'),
  };
  // <video> -> { playing, base (s), since (film ms), ended, shown (s, the last seek),
  //              landed (resolves the sync waiting on a seek), unseekable }
  const models = new WeakMap();
  // Every media element is modelled, <audio> too: the film's sound is made from the models
  // (soundChanged below), so no element ever really plays. Seeking (syncVideos) is for videos.
  const isVideo = (el) => el instanceof HTMLMediaElement;
  // Real autoplay would start the media clock behind the model's back (and a playing
  // video's compositor shows a picture ahead of the one asked for), so the autoplay
  // attribute is taken off every video as it arrives and kept here instead.
  const autoplaying = new WeakSet();
  const autoplay = Object.getOwnPropertyDescriptor(media, 'autoplay');
  const takeAutoplay = (el) => {
    if (!el.hasAttribute('autoplay')) return;
    autoplaying.add(el);
    el.removeAttribute('autoplay');
  };
  Object.defineProperty(media, 'autoplay', {
    configurable: true,
    enumerable: true,
    get() { return isVideo(this) ? autoplaying.has(this) : autoplay.get.call(this); },
    set(value) {
      if (!isVideo(this)) { autoplay.set.call(this, value); return; }
      if (value) autoplaying.add(this); else autoplaying.delete(this);
    },
  });
  const fire = (el, type) => Promise.resolve().then(() => el.dispatchEvent(new Event(type)));
  const modelOf = (el) => {
    let m = models.get(el);
    if (!m) {
      m = { playing: el.autoplay, base: 0, since: film(), ended: false, shown: null };
      models.set(el, m);
      if (m.playing) { fire(el, 'play'); fire(el, 'playing'); soundChanged(el, 'changed'); }
    }
    return m;
  };
  const modelTime = (el, m) => {
    if (!m.playing) return m.base;
    let t = m.base + ((film() - m.since) / 1000) * el.playbackRate;
    const d = el.duration;
    if (Number.isFinite(d) && d > 0) {
      if (el.loop) {
        t %= d;
      } else if (t >= d) {
        // Playback ended: the model stops there, as a real element would.
        soundEnded(el, m.since + ((d - m.base) * 1000) / el.playbackRate);
        m.playing = false;
        m.base = d;
        m.ended = true;
        fire(el, 'timeupdate'); fire(el, 'pause'); fire(el, 'ended');
        return d;
      }
    }
    return t;
  };
  Object.defineProperty(media, 'currentTime', {
    configurable: true,
    enumerable: true,
    get() {
      if (!isVideo(this)) return real.currentTime.get.call(this);
      return modelTime(this, modelOf(this));
    },
    set(value) {
      if (!isVideo(this)) { real.currentTime.set.call(this, value); return; }
      const m = modelOf(this);
      m.base = Number(value);
      m.since = film();
      m.ended = false;
      soundChanged(this, 'changed', 'seek');
      fire(this, 'seeking'); fire(this, 'seeked'); fire(this, 'timeupdate');
    },
  });
  Object.defineProperty(media, 'paused', {
    configurable: true,
    enumerable: true,
    get() { return isVideo(this) ? !modelOf(this).playing : real.paused.get.call(this); },
  });
  Object.defineProperty(media, 'ended', {
    configurable: true,
    enumerable: true,
    get() {
      if (!isVideo(this)) return real.ended.get.call(this);
      const m = modelOf(this);
      modelTime(this, m);
      return m.ended;
    },
  });
  // readyState: the real element's buffering follows the wall clock and the machine's load
  // (2, 3 or 4 at the same frame in different lanes), and a film never stalls (the engine
  // seeks and waits for every frame's picture), so once the metadata is in, the page sees
  // HAVE_ENOUGH_DATA, as from a video that is fully buffered.
  real.readyState = Object.getOwnPropertyDescriptor(media, 'readyState');
  Object.defineProperty(media, 'readyState', {
    configurable: true,
    enumerable: true,
    get() {
      const state = real.readyState.get.call(this);
      if (!isVideo(this) || state < HTMLMediaElement.HAVE_METADATA) return state;
      return HTMLMediaElement.HAVE_ENOUGH_DATA;
    },
  });
  media.play = function play() {
    if (!isVideo(this)) return real.play.call(this);
    const m = modelOf(this);
    if (!m.playing) {
      m.base = m.ended ? 0 : modelTime(this, m);
      m.ended = false;
      m.since = film();
      m.playing = true;
      soundChanged(this, 'changed');
      fire(this, 'play'); fire(this, 'playing');
    }
    return Promise.resolve();
  };
  media.pause = function pause() {
    if (!isVideo(this)) { real.pause.call(this); return; }
    const m = modelOf(this);
    if (m.playing) {
      m.base = modelTime(this, m);
      m.playing = false;
      soundChanged(this, pauseReason.get(this) || 'paused');
      fire(this, 'timeupdate'); fire(this, 'pause');
    }
  };
  // The engine learns (once) that this document has videos, and from then on syncs them
  // before every frame. The message travels with the page's other events, so it arrives
  // before the end of the budget in which the video appeared.
  const videos = document.getElementsByTagName('video');
  let reported = false;
  const watchVideos = new MutationObserver((records) => {
    pauseRemoved(records);
    for (const r of records) {
      if (r.type === 'attributes') {
        if (isVideo(r.target)) takeAutoplay(r.target);
        continue;
      }
      for (const node of r.addedNodes) {
        if (node.nodeType !== Node.ELEMENT_NODE) continue;
        if (isVideo(node)) takeAutoplay(node);
        else if (node.firstElementChild) [...node.getElementsByTagName('video')].forEach(takeAutoplay);
      }
    }
    if (!reported && videos.length) {
      reported = true;
      signal('video');
    }
  });
  watchVideos.observe(document, {
    childList: true, subtree: true, attributes: true, attributeFilter: ['autoplay'],
  });
  // The real element's own playback events (from pagereel's seeks and pauses) must not
  // reach the page, which gets the model's instead: they are stopped at the window, before
  // any listener of the page, and a seek that landed resolves the sync waiting for it.
  // canplay and canplaythrough pass the first time (pages wait for them to start).
  const modelled = ['play', 'playing', 'pause', 'seeking', 'seeked', 'timeupdate', 'ended', 'waiting'];
  const once = { canplay: new WeakSet(), canplaythrough: new WeakSet() };
  const intercept = (e) => {
    const el = e.target;
    if (!e.isTrusted || !isVideo(el)) return;
    if (once[e.type]) {
      if (!once[e.type].has(el)) { once[e.type].add(el); return; }
    } else if (e.type === 'seeked' || e.type === 'error') {
      const m = models.get(el);
      if (m && m.landed) { const done = m.landed; m.landed = null; done(); }
      if (e.type === 'error') return;
    }
    e.stopImmediatePropagation();
  };
  for (const type of [...modelled, 'canplay', 'canplaythrough', 'error']) {
    window.addEventListener(type, intercept, true);
  }
  // Seeks every video of this document to its model's time; resolves when all have landed.
  const syncVideos = () => Promise.all([...document.querySelectorAll('video')].map((el) => {
    const m = modelOf(el);
    if (!real.paused.get.call(el)) {
      // Something started it for real after all: stop it, and seek even if nothing moved.
      real.pause.call(el);
      m.shown = null;
    }
    if (el.error || !el.currentSrc) return null;
    return new Promise((resolve) => {
      const seek = () => {
        // The first sync always seeks: a video that autoplayed for real may already show
        // a later picture than its currentTime says.
        const target = modelTime(el, m);
        const ranges = el.seekable;
        let reachable = false;
        for (let i = 0; i < ranges.length; i++) {
          reachable ||= target >= ranges.start(i) && target <= ranges.end(i);
        }
        if (!reachable && !m.unseekable) {
          // Served without HTTP Range support, a video can only be at its start, and
          // would stand still. Say so once; the engine lists it with the page's errors.
          m.unseekable = true;
          signal('unseekable:' + el.currentSrc);
        }
        if (m.shown === target &&
            real.readyState.get.call(el) >= HTMLMediaElement.HAVE_CURRENT_DATA &&
            !el.seeking) {
          resolve();
          return;
        }
        m.shown = target;
        m.landed = resolve;  // Called by intercept() on the seek's seeked (or an error).
        real.currentTime.set.call(el, target);
      };
      if (real.readyState.get.call(el) >= HTMLMediaElement.HAVE_METADATA) {
        seek();
      } else {
        m.landed = resolve;  // An error before the metadata ends the wait too.
        el.addEventListener('loadedmetadata', () => { m.landed = null; seek(); }, { once: true });
      }
    });
  }));

  // How many videos do not yet show the picture for the time they were sought to. A seek's
  // seeked event can come before its picture: the decoded frame reaches what drawImage(video),
  // texImage2D(video) and new VideoFrame(video) read on another thread, so under load a copy
  // made right after the seek read the previous seek's picture (plain headless-shell beside
  // two CPU hogs: 19 of 1600 seeks in one set of runs, 2 of 2000 in another; the element's
  // own picture, drawn later by the compositor, was right). new VideoFrame(video) reads what drawImage would: a video is behind while
  // that picture's span [timestamp, timestamp + duration) does not hold the sought time (a
  // millisecond of slack at both ends for the float seconds and a seek to a frame's edge).
  // Where WebCodecs is missing (not a secure context), for a picture without a duration or
  // one the page may not read (a cross-origin video without CORS; a file:// page's own
  // video unless render allows file access, render_app.cc), the video counts as shown. The
  // engine asks again until none is behind (page.cc, AwaitVideoPictures).
  const videosBehind = (late) => {
    if (typeof VideoFrame !== 'function') return 0;
    let behind = 0;
    for (const el of document.querySelectorAll('video')) {
      const m = models.get(el);
      if (!m || m.shown === null || el.error || !el.currentSrc) continue;
      let frame = null;
      try {
        frame = new VideoFrame(el);
        const at = m.shown * 1e6;
        if (frame.duration &&
            (at < frame.timestamp - 1000 || at >= frame.timestamp + frame.duration + 1000)) {
          behind++;
          if (late) signal('video-late:' + el.currentSrc);
        }
      } catch (e) {
        // No picture to read: nothing to compare.
      } finally {
        if (frame) frame.close();
      }
    }
    return behind;
  };

  // Sound. Nothing really plays (the models above stand in for every media element, in
  // the document or not: new Audio(), cloneNode()), so the film's sound is made afterwards
  // from what the page did (audio/README.md): each element is a sound, and each stretch in
  // which its model plays with one rate, volume and loop is a span, told to the engine as
  // it starts and ends ("sound:" messages, on film time in ms). A change of rate, volume,
  // mute or loop, or a seek, ends the span and starts the next where it left off.
  const soundIds = new WeakMap();  // element -> { id, span (the settings of the open one) }
  let soundCount = 0;
  const playingMedia = new Set();  // Elements whose span is open, for endPlayedMedia().
  const pauseReason = new WeakMap();  // Set while pagereel pauses an element (its removal).
  const mediaUrl = (el) => {
    if (el.srcObject) return 'srcobject:' + el.srcObject.constructor.name;  // Left out (page.cc).
    if (el.currentSrc) return el.currentSrc;
    if (el.src) return el.src;
    // Before the browser picked one: the first <source> child of a type it can play.
    const source = [...el.querySelectorAll(':scope > source[src]')]
      .find((c) => !c.type || el.canPlayType(c.type) !== '');
    return source ? source.src : '';
  };
  // A sound's id in an iframe names the frame by its place under the top one ("1.0": the
  // first frame of the top's second), the same in every lane, so two iframes of one URL
  // are two sounds; taken at the frame's first sound.
  let soundIdPrefixText = null;
  const soundIdPrefix = () => {
    if (soundIdPrefixText !== null) return soundIdPrefixText;
    const path = [];
    for (let w = window; w !== w.parent; w = w.parent) {
      let i = 0;
      while (i < w.parent.frames.length && w.parent.frames[i] !== w) i++;
      path.unshift(i);
    }
    soundIdPrefixText = top ? '' : 'frame ' + path.join('.') + ' ' + location.href + '#';
    return soundIdPrefixText;
  };
  const soundEnded = (el, at) => {
    const s = soundIds.get(el);
    if (!s || !s.span) return;
    signal('sound:' + JSON.stringify({ id: s.id, t: at, end: 'media' }));
    s.span = null;
    playingMedia.delete(el);
  };
  const soundChanged = (el, why, seek) => {
    const m = models.get(el);
    if (!m) return;
    let s = soundIds.get(el);
    const url = mediaUrl(el);
    const rate = el.playbackRate;
    const volume = el.muted ? 0 : el.volume;
    // Silent (muted, as most autoplaying videos are): no span, and its media is not fetched.
    const span = m.playing && rate > 0 && volume > 0 && url ? JSON.stringify({
      url, rate, pitch: el.preservesPitch !== false, volume, loop: el.loop,
    }) : null;
    if (!seek && (s ? s.span : null) === span) return;
    let t = film();
    if (s && s.span) signal('sound:' + JSON.stringify({ id: s.id, t, end: why }));
    if (s) s.span = span;
    if (!span) { playingMedia.delete(el); return; }
    if (!s) {
      s = { id: soundIdPrefix() + 'media-' + ++soundCount, span };
      soundIds.set(el, s);
    }
    let offset = m.base + ((t - m.since) / 1000) * rate;
    const d = el.duration;
    if (el.loop && Number.isFinite(d) && d > 0) offset %= d;
    // Started while the page loaded (film time -lead): it is that far in at frame 0.
    if (t < 0) { offset -= (t / 1000) * rate; t = 0; }
    const source = '<' + el.localName + ' src=' + url.split('/').pop().slice(0, 60) + '>';
    signal('sound:' + JSON.stringify({ id: s.id, source, t, offset, ...JSON.parse(span) }));
    playingMedia.add(el);
  };
  // Speech synthesis has no media to make the film's sound from: told (url "speech:"), so
  // the summary lists it as left out and --strict fails (page.cc).
  let speeches = 0;
  if (window.SpeechSynthesis) {
    const speak = SpeechSynthesis.prototype.speak;
    SpeechSynthesis.prototype.speak = function (u) {
      const id = soundIdPrefix() + 'speech-' + ++speeches;
      const source = 'speechSynthesis.speak(' + JSON.stringify(String(u && u.text).slice(0, 40)) + ')';
      signal('sound:' + JSON.stringify({ id, source, t: Math.max(0, film()), url: 'speech:', offset: 0, rate: 1, pitch: true, volume: 1, loop: false }));
      return speak.call(this, u);
    };
  }
  // Each frame: media that ran out since (its model learns it here, not only when read).
  const endPlayedMedia = () => {
    for (const el of [...playingMedia]) {
      const m = models.get(el);
      if (m) modelTime(el, m);
    }
  };
  // The page's own changes to what a span plays with: the model's time so far is taken at
  // the old rate (a new rate does not rescale the time already played).
  const settingsChanging = (el) => {
    const m = models.get(el);
    if (m && m.playing) { m.base = modelTime(el, m); m.since = film(); }
  };
  for (const name of ['playbackRate', 'volume', 'muted', 'loop', 'preservesPitch']) {
    const d = Object.getOwnPropertyDescriptor(media, name);
    if (!d || !d.set) continue;
    Object.defineProperty(media, name, {
      configurable: true,
      enumerable: true,
      get() { return d.get.call(this); },
      set(value) {
        settingsChanging(this);
        d.set.call(this, value);
        soundChanged(this, 'changed');
      },
    });
  }
  // An element taken out of the document pauses (as the specification says, and Chromium
  // does), unless it was put back in the same task; an <audio autoplay> put in starts.
  const pauseRemoved = (records) => {
    for (const r of records) {
      for (const node of r.removedNodes) {
        if (node.nodeType !== Node.ELEMENT_NODE) continue;
        const found = node instanceof HTMLMediaElement ? [node] : node.querySelectorAll('audio, video');
        for (const el of found) {
          if (el.isConnected || !models.has(el) || !models.get(el).playing) continue;
          pauseReason.set(el, 'removed');
          media.pause.call(el);
          pauseReason.delete(el);
        }
      }
      for (const node of r.addedNodes) {
        if (node.nodeType !== Node.ELEMENT_NODE) continue;
        const found = node instanceof HTMLAudioElement ? [node] : node.querySelectorAll('audio');
        for (const el of found) {
          takeAutoplay(el);
          if (el.isConnected && autoplaying.has(el)) modelOf(el);
        }
      }
    }
  };

  // Web Audio, on film time. A real AudioContext plays on the sound card's clock, which
  // under virtual time runs apart from the film (3 s of film moved one 0.18 s: issue 16),
  // and nothing can tap its output at film speed. So the page's AudioContext (and
  // webkitAudioContext) is a stand-in: a real OfflineAudioContext, so every node, buffer,
  // decodeAudioData, AnalyserNode and AudioWorklet is the browser's own, with an
  // AudioContext's face (currentTime on film time, state, resume, suspend, close). Before
  // every frame the engine has it render up to the frame's time (advanceAudio, through
  // syncVideos), so what a page reads from an AnalyserNode, and the sound itself, is the
  // same in every run and lane (issue 16 measured identical output and readings run to run;
  // render/web_audio_render_test.cc checks both across lane counts).
  //
  // Rendered as the film goes, not in one piece at the end: an OfflineAudioContext gives
  // its buffer only once its whole length is rendered, and the page changes its graph as
  // film time passes (a node made at 3 s starts at 3 s only if the render is at 3 s when the
  // page makes it). What the graph renders is recorded by an AudioWorklet between the
  // page's destination (a gain node standing in for it) and the real one, kept here on film
  // samples and taken by the engine with the timeline (takeWebAudio, page.cc): each
  // context is one sound, handed over in pieces (capture/web_audio.h). The render stops
  // short of the frame's time
  // by less than one render quantum (128 samples, 2.7 ms): an event the page schedules at
  // or after currentTime is never behind it, so it lands on its exact sample.
  const audioRate = 48000;  // The film's (encode/sound.h).
  const quantum = 128;      // Samples per render quantum.
  // An OfflineAudioContext is made with its length: one hour (its memory is taken as it
  // renders; four such contexts in one page were made and rendered a minute each here).
  const audioLength = audioRate * 3600;
  const RealOffline = window.OfflineAudioContext;
  const audioStates = new WeakMap();  // stand-in -> its state (below)
  const audioContexts = [];            // The states, in the order the page made them.
  const filmSample = () => Math.max(0, film()) * (audioRate / 1000);  // film() is whole ms.
  const leftOutSound = (source, reason) => signal('sound:' + JSON.stringify({
    id: 'left-out', t: Math.max(0, film()), source, leftOut: reason,
  }));
  // The recorder: passes its input on and posts what it heard, in blocks that end where
  // the engine asked the render to stop ('flush', in quanta of the context's time), so the
  // samples of a render are here when it ends.
  //
  // It counts the quanta it rendered itself (`frame`) rather than read the worklet's
  // currentFrame: Chromium sets that after each quantum only if the audio graph's lock is
  // free at that instant (BaseAudioContext::UpdateWorkletGlobalScopeOnRenderingThread
  // takes it with TryLock), so it can stand a quantum behind. Read here, one that lagged
  // in a render's last quantum kept that render's samples back, and the frame waited for
  // them until the render failed (issue 16: the analyser test of
  // render/web_audio_render_test.cc stalled so at frame 112 in 1 of 86 runs with three of
  // it at once; counting, its recorder saw currentFrame lag in that very quantum in 2 of
  // 81). It is made before the context renders, where currentFrame is 0 whatever the lock
  // did, and runs in every quantum from then on (it is connected to the destination and
  // never ends).
  const recorderModule = 'data:text/javascript;base64,' + btoa(`
    registerProcessor('pagereel-recorder', class extends AudioWorkletProcessor {
      static get parameterDescriptors() {
        return [{ name: 'flush', defaultValue: 0, minValue: 0, automationRate: 'k-rate' }];
      }
      constructor() { super(); this.left = []; this.right = []; this.frame = currentFrame; }
      process(inputs, outputs, parameters) {
        const input = inputs[0];
        const left = new Float32Array(128);
        const right = new Float32Array(128);
        if (input.length) { left.set(input[0]); right.set(input[input.length > 1 ? 1 : 0]); }
        for (const output of outputs) {
          if (output.length) output[0].set(left);
          if (output.length > 1) output[1].set(right);
        }
        this.left.push(left);
        this.right.push(right);
        this.frame += 128;
        if (this.frame >= parameters.flush[0] * 128) {
          const n = this.left.length * 128;
          const l = new Float32Array(n);
          const r = new Float32Array(n);
          this.left.forEach((block, i) => l.set(block, i * 128));
          this.right.forEach((block, i) => r.set(block, i * 128));
          this.port.postMessage({ at: this.frame - n, l, r }, [l.buffer, r.buffer]);
          this.left = [];
          this.right = [];
        }
        return true;
      }
    });`);
  // Set below where Web Audio exists: before every frame, with the timeline, and when a
  // frame's sync takes too long.
  let advanceAudio = () => Promise.resolve();
  let takeWebAudio = () => '[]';
  let audioWaits = () => '';
  const seconds = (samples) => (samples / audioRate).toFixed(3);
  // advanceAudio's failure as the engine takes it: a message, '' when it rendered.
  const audioFault = (endMs) => advanceAudio(endMs).then(() => '', (e) => String((e && e.message) || e));
  // The recorder is an AudioWorklet, which a document that is not a secure context (a
  // data: URL, http:// from another host than this one) does not have: there a real
  // AudioContext plays on the wall clock, and the summary says its sound is not in the film.
  const RealAudioContext = window.AudioContext;
  if (typeof RealOffline === 'function' && typeof Worklet === 'function' &&
      typeof AudioWorkletNode === 'function') {
    const offline = RealOffline.prototype;
    const realSuspend = offline.suspend;
    const realResume = offline.resume;
    const realStartRendering = offline.startRendering;
    const base = BaseAudioContext.prototype;
    const baseDestination = Object.getOwnPropertyDescriptor(base, 'destination').get;
    const realAddModule = Worklet.prototype.addModule;
    // Context time now, in samples: film samples since the context's time began, standing
    // still while the page has it suspended. Each run of it from a resume() on is one of
    // s.runs: context sample ctxAt at film sample filmAt.
    const contextSample = (s, film = filmSample()) => {
      if (s.state !== 'running') return s.stoppedAt;
      const run = s.runs[s.runs.length - 1];
      return run.ctxAt + film - run.filmAt;
    };
    // Where context samples [at, at + n) go in the film: [[film sample, first, count]]. What
    // a run did not render before a suspend() is rendered after the resume(), and belongs
    // before the suspension.
    const filmPlaces = (s, at, n) => {
      const out = [];
      for (let k = 0; k < s.runs.length && n > 0; k++) {
        const next = k + 1 < s.runs.length ? s.runs[k + 1].ctxAt : Infinity;
        if (at >= next) continue;
        const count = Math.min(n, next - at);
        out.push([s.runs[k].filmAt + at - s.runs[k].ctxAt, at, count]);
        at += count;
        n -= count;
      }
      return out;
    };
    function AudioContext(options) {
      if (!new.target) throw new TypeError("Failed to construct 'AudioContext': Please use the 'new' operator");
      const ctx = new RealOffline({ numberOfChannels: 2, length: audioLength, sampleRate: audioRate });
      Object.setPrototypeOf(ctx, new.target.prototype);
      // The real context's own state changes (each render the engine asks for) are not
      // the page's: stopped before any listener of the page (this one is the first).
      ctx.addEventListener('statechange', (e) => { if (e.isTrusted) e.stopImmediatePropagation(); });
      const s = {
        ctx,
        id: (top ? '' : location.href + '#') + 'audio-context-' + (audioContexts.length + 1),
        state: 'running',
        runs: [{ ctxAt: 0, filmAt: filmSample() }],
        stoppedAt: 0,             // Context sample it stands at while suspended or closed.
        rendered: 0,              // Context samples rendered.
        started: false,
        received: 0,              // Context samples the recorder sent.
        arrived: null,            // Resolves a render's wait for its samples.
        waiting: null,            // The render under way: { target, step } (audioWaits).
        fault: '',                // Why the recorder's samples cannot be used.
        blocks: [],               // [film sample, left, right] not yet taken.
        bus: ctx.createGain(),
      };
      // The page's destination: a gain node (it can be connected to as the real one)
      // dressed as an AudioDestinationNode.
      s.bus.channelCount = 2;
      s.bus.channelCountMode = 'explicit';
      s.bus.channelInterpretation = 'speakers';
      Object.setPrototypeOf(s.bus, AudioDestinationNode.prototype);
      Object.defineProperty(s.bus, 'maxChannelCount', { value: 2 });
      s.ready = realAddModule.call(ctx.audioWorklet, recorderModule).then(() => {
        const recorder = new AudioWorkletNode(ctx, 'pagereel-recorder', {
          numberOfInputs: 1, numberOfOutputs: 1, outputChannelCount: [2],
          channelCount: 2, channelCountMode: 'explicit', channelInterpretation: 'speakers',
        });
        AudioNode.prototype.connect.call(s.bus, recorder);
        recorder.connect(baseDestination.call(ctx));
        s.flush = recorder.parameters.get('flush');
        recorder.port.onmessage = (e) => {
          const { at, l, r } = e.data;
          if (at !== s.received) {
            // Placed where it says, it would be misplaced or overlap: the render fails instead.
            s.fault = `its recorder sent samples from ${seconds(at)} s where ${seconds(s.received)} s was next`;
            if (s.arrived) s.arrived();
            return;
          }
          for (const [film, from, count] of filmPlaces(s, at, l.length)) {
            s.blocks.push([film, l.subarray(from - at, from - at + count), r.subarray(from - at, from - at + count)]);
          }
          s.received = at + l.length;
          if (s.arrived) s.arrived();
        };
      });
      audioStates.set(ctx, s);
      audioContexts.push(s);
      signal('video');  // The engine calls syncVideos() in this document from now on.
      // As Chromium's (with autoplay allowed): running at once, and a statechange after.
      Promise.resolve().then(() => ctx.dispatchEvent(new Event('statechange')));
      return ctx;
    }
    AudioContext.prototype = Object.create(base, {
      constructor: { value: AudioContext, writable: true, configurable: true },
      [Symbol.toStringTag]: { value: 'AudioContext', configurable: true },
    });
    const stateOf = (ctx) => {
      const s = audioStates.get(ctx);
      if (!s) throw new TypeError('Illegal invocation');
      return s;
    };
    const setState = (s, state) => {
      if (s.state === state) return;
      s.state = state;
      s.ctx.dispatchEvent(new Event('statechange'));
    };
    const getters = {
      currentTime() { return contextSample(stateOf(this)) / audioRate; },
      state() { return stateOf(this).state; },
      destination() { return stateOf(this).bus; },
      baseLatency() { return quantum / audioRate; },
      outputLatency() { return 0; },
      sinkId() { return ''; },
    };
    for (const [name, get] of Object.entries(getters)) {
      Object.defineProperty(AudioContext.prototype, name, { get, enumerable: true, configurable: true });
    }
    const closed = (what) => Promise.reject(new DOMException(
        `Failed to execute '${what}' on 'AudioContext': Cannot ${what} a closed AudioContext.`, 'InvalidStateError'));
    Object.assign(AudioContext.prototype, {
      resume() {
        const s = stateOf(this);
        if (s.state === 'closed') return closed('resume');
        if (s.state === 'suspended') {
          // Context time carries on from where it stood; runs before it that are rendered
          // are no longer needed.
          s.runs = s.runs.filter((run, k) => (k + 1 < s.runs.length ? s.runs[k + 1].ctxAt : s.stoppedAt) > s.rendered);
          s.runs.push({ ctxAt: s.stoppedAt, filmAt: filmSample() });
          setState(s, 'running');
        }
        return Promise.resolve();
      },
      suspend() {
        const s = stateOf(this);
        if (s.state === 'closed') return closed('suspend');
        if (s.state === 'running') {
          s.stoppedAt = contextSample(s);
          setState(s, 'suspended');
        }
        return Promise.resolve();
      },
      close() {
        const s = stateOf(this);
        if (s.state === 'closed') return closed('close');
        s.stoppedAt = contextSample(s);
        setState(s, 'closed');
        return Promise.resolve();
      },
      getOutputTimestamp() {
        return { contextTime: this.currentTime, performanceTime: performance.now() };
      },
      setSinkId() { return Promise.resolve(); },
      // Sound from media elements and streams cannot enter a graph rendered offline: the
      // element's own sound is in the film as the element played it (dry, without the
      // graph's effects), a stream's is not. Each gives a silent node and is named in the
      // render's summary.
      createMediaElementSource(element) {
        leftOutSound('createMediaElementSource(<' + element.localName + '>)',
                     "the graph's effects on a media element are not in the film (its sound is, as played)");
        return this.createGain();
      },
      createMediaStreamSource() {
        leftOutSound('createMediaStreamSource()', "a MediaStream's sound is not recorded");
        return this.createGain();
      },
      createMediaStreamTrackSource() {
        leftOutSound('createMediaStreamTrackSource()', "a MediaStream's sound is not recorded");
        return this.createGain();
      },
      createMediaStreamDestination() {
        // Nothing sent here is heard, in a film as on a page.
        const node = this.createGain();
        Object.defineProperty(node, 'stream', { value: new MediaStream() });
        return node;
      },
    });
    window.AudioContext = AudioContext;
    window.webkitAudioContext = AudioContext;

    // "Start now" (start(), start(0), or any time already past) starts at currentTime,
    // as on a real context, not at the render's position a fraction of a quantum behind.
    for (const proto of [AudioScheduledSourceNode.prototype, AudioBufferSourceNode.prototype]) {
      const realStart = proto.start;
      if (!Object.prototype.hasOwnProperty.call(proto, 'start')) continue;
      proto.start = function start(when, ...rest) {
        const s = audioStates.get(this.context);
        if (s && !(when < 0)) {
          const now = contextSample(s) / audioRate;
          if (!(when >= now)) when = now;
        }
        return realStart.call(this, when === undefined ? 0 : when, ...rest);
      };
    }
    // Work the browser does on the wall clock, whose end would land in any frame: page
    // time is held until it is done (holdTimeFor), as for response bodies.
    const holdResult = (owner, name) => {
      const real = owner[name];
      owner[name] = { [name](...args) { return holdTimeFor(real.apply(this, args)); } }[name];
    };
    holdResult(base, 'decodeAudioData');
    holdResult(Worklet.prototype, 'addModule');
    holdResult(offline, 'startRendering');

    // Renders each running context up to the film's present (less than a quantum short), or,
    // where the film ends at `endMs` of film time, on to it and past it to the next quantum,
    // so the last frame's sound is whole (no frame after it hears where the render stood).
    const realTime = Object.getOwnPropertyDescriptor(base, 'currentTime').get;
    const realState = Object.getOwnPropertyDescriptor(base, 'state').get;
    const contextName = (s) => s.id.replace(/^(.*#)?audio-context-(\d+)$/,
                                            (all, url, n) => 'AudioContext ' + n + (url ? ' of ' + url.slice(0, -1) : ''));
    advanceAudio = (endMs) => Promise.all(audioContexts.map(async (s) => {
      if (s.state !== 'running') return;
      await s.ready;
      const target = endMs === undefined
          ? Math.floor(contextSample(s) / quantum) * quantum
          : Math.ceil(contextSample(s, endMs * (audioRate / 1000)) / quantum) * quantum;
      if (target <= s.rendered || target >= audioLength) return;
      s.flush.value = target / quantum;
      s.waiting = { target, step: 'render' };
      const reached = realSuspend.call(s.ctx, target / audioRate);
      if (s.started) {
        realResume.call(s.ctx);
      } else {
        s.started = true;
        realStartRendering.call(s.ctx).catch(() => {});
      }
      try {
        await reached;
      } catch (e) {
        throw new Error(`${contextName(s)} could not be rendered to ${seconds(target)} s of its time: ${e.message}`);
      }
      s.waiting.step = 'samples';
      while (s.received < target && !s.fault) await new Promise((resolve) => { s.arrived = resolve; });
      s.arrived = null;
      if (s.fault) throw new Error(`${contextName(s)} rendered to ${seconds(target)} s of its time, but ${s.fault}`);
      s.waiting = null;
      s.rendered = target;
    }));
    // What the renders under way wait for, for the engine's message when a frame's sync
    // takes too long: the context's render that never reached its end, or the samples that
    // never came.
    audioWaits = () => audioContexts.filter((s) => s.waiting).map((s) => {
      const { target, step } = s.waiting;
      return step === 'render'
          ? `${contextName(s)} did not reach ${seconds(target)} s of its time (it stands at ` +
            `${realTime.call(s.ctx).toFixed(3)} s, ${realState.call(s.ctx)})`
          : `${contextName(s)} reached ${seconds(target)} s of its time, but its recorder's samples ` +
            `stop at ${seconds(s.received)} s`;
    }).join('; ');
    // Left and right as base64 of little-endian float32, interleaved.
    const pcmText = (l, r) => {
      const pcm = new Float32Array(l.length * 2);
      for (let i = 0; i < l.length; i++) {
        pcm[2 * i] = l[i];
        pcm[2 * i + 1] = r[i];
      }
      const bytes = new Uint8Array(pcm.buffer);
      if (bytes.toBase64) return bytes.toBase64();
      let text = '';
      for (let i = 0; i < bytes.length; i += 0x8000) {
        text += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
      }
      return btoa(text);
    };
    // What the contexts rendered since the last call, as JSON: [{id, at (film sample),
    // pcm (pcmText)}], about `limit` samples of it at most ('[]' once all is taken): a lane
    // that pre-rolled far into a long film has minutes of sound to hand over, which in one
    // message would be hundreds of MB.
    takeWebAudio = (limit) => {
      const taken = [];
      for (const s of audioContexts) {
        let k = 0;
        while (k < s.blocks.length && limit > 0) limit -= s.blocks[k++][1].length;
        for (const [at, l, r] of s.blocks.splice(0, k)) taken.push({ id: s.id, at, pcm: pcmText(l, r) });
      }
      return JSON.stringify(taken);
    };
  } else if (typeof RealAudioContext === 'function') {
    window.AudioContext = class AudioContext extends RealAudioContext {
      constructor(...args) {
        super(...args);
        leftOutSound('AudioContext', 'Web Audio is recorded only in a secure context (https://, ' +
                     'file://, http://localhost): serve the page from one');
      }
    };
  }

  // requestVideoFrameCallback: Chromium runs these when its compositor takes a new picture
  // of the video, which after pagereel's seeks came in the frame or the next at random (one
  // render in 7 missed frame 54). The page's callbacks run instead in pagereel's own
  // animation frame at the start of every frame whose picture moved, once the seek landed,
  // before the page's own animation frame callbacks, as the specification orders them.
  // mediaTime is the model's time (the time the video was sought to), not the PTS of the
  // video frame shown, which a page's script cannot know.
  const frameCallbacks = new Map();  // <video> -> { callbacks, shown, presented }
  let frameCallbackId = 0;
  HTMLVideoElement.prototype.requestVideoFrameCallback = function requestVideoFrameCallback(f) {
    let c = frameCallbacks.get(this);
    if (!c) {
      c = { callbacks: new Map(), shown: null, presented: 0 };
      frameCallbacks.set(this, c);
    }
    c.callbacks.set(++frameCallbackId, f);
    return frameCallbackId;
  };
  HTMLVideoElement.prototype.cancelVideoFrameCallback = function cancelVideoFrameCallback(id) {
    for (const c of frameCallbacks.values()) c.callbacks.delete(id);
  };
  const runVideoFrameCallbacks = () => {
    for (const [el, c] of frameCallbacks) {
      const m = models.get(el);
      if (!c.callbacks.size || !m || m.shown === null || m.shown === c.shown) continue;
      c.shown = m.shown;
      c.presented += 1;
      const callbacks = [...c.callbacks.values()];
      c.callbacks.clear();
      const now = film();
      const metadata = {
        presentationTime: now, expectedDisplayTime: now, width: el.videoWidth,
        height: el.videoHeight, mediaTime: m.shown, presentedFrames: c.presented,
        processingDuration: 0,
      };
      for (const f of callbacks) {
        try {
          f.call(el, now, metadata);
        } catch (e) {
          window.reportError(e);
        }
      }
    }
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
      // Before every frame (in documents that signalled 'video'): videos sought to the
      // frame's time, AudioContexts rendered up to it. Resolves with why an AudioContext
      // could not be rendered ('' when all were), and, after a colon, how many videos do
      // not show their picture yet (videosBehind).
      syncVideos() {
        return Promise.all([syncVideos(), audioFault()]).then(([, fault]) => videosBehind(false) + ':' + fault);
      },
      videosBehind() { return videosBehind(false); },
      // The engine stopped waiting for the pictures: names each video still behind.
      videosLate() { videosBehind(true); },
      // Where the film ends, at `ms` of film time: AudioContexts rendered on to it and past
      // it to the next render quantum, so the last frame's sound is whole. Answers as
      // syncVideos does, with no video behind.
      endAudio(ms) { return audioFault(ms).then((fault) => '0:' + fault); },
      takeWebAudio(limit) { return takeWebAudio(limit); },
      audioWaits() { return audioWaits(); },
      // What the reports said so far, "count:ms", for a report that has not arrived.
      ticks() { return ticks + ':' + lastTick; },
    }),
    enumerable: false,
  });
})();
