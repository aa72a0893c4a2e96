  // script_common.js: inserted by embed_page_script.cmake where page_script.js,
  // worker_script.js and shared_port_script.js say so, so the page and its workers share
  // one copy of these.
  //
  // installFilmClocks(global, epoch, film): Date reads epoch + film() (film time, whole ms),
  // and Math.random is sfc32 from a fixed seed, the same numbers in every page, worker,
  // lane and render.
  const installFilmClocks = (global, epoch, film) => {
    const RealDate = global.Date;
    function PagereelDate(...args) {
      if (!new.target) return new RealDate(epoch + film()).toString();
      return args.length ? new RealDate(...args) : new RealDate(epoch + film());
    }
    PagereelDate.prototype = RealDate.prototype;
    PagereelDate.now = function now() { return epoch + film(); };
    PagereelDate.parse = RealDate.parse;
    PagereelDate.UTC = RealDate.UTC;
    Object.defineProperty(RealDate.prototype, 'constructor', { value: PagereelDate });
    global.Date = PagereelDate;

    let a = 0x9e3779b9, b = 0x243f6a88, c = 0xb7e15162, d = 1;
    global.Math.random = function random() {
      a |= 0; b |= 0; c |= 0; d |= 0;
      const t = (((a + b) | 0) + d) | 0;
      d = (d + 1) | 0;
      a = b ^ (b >>> 9);
      b = (c + (c << 3)) | 0;
      c = (c << 21) | (c >>> 11);
      c = (c + t) | 0;
      return (t >>> 0) / 4294967296;
    };
  };

  // The OffscreenCanvases in a message, in the order both the page (when it posts them to a
  // worker) and the worker script (when it receives them) meet them: they number the
  // canvases by it.
  const findCanvases = (value, depth, out) => {
    if (typeof OffscreenCanvas === 'function' && value instanceof OffscreenCanvas) {
      out.push(value);
    } else if (depth < 3 && value && typeof value === 'object' && !ArrayBuffer.isView(value)) {
      for (const key of Object.keys(value)) findCanvases(value[key], depth + 1, out);
    }
  };

  // countPort(port, posted, started): one MessagePort of a shared worker's (the page's end,
  // shared_port_script.js, or the worker's, worker_script.js) calls posted() after each of
  // its postMessage calls and started() when it starts delivering messages (its onmessage
  // is set, or start() called). Own properties of that port, so other MessagePorts
  // (MessageChannel's) are untouched.
  const countPort = (port, posted, started) => {
    const proto = MessagePort.prototype;
    const realPost = proto.postMessage;
    const realStart = proto.start;
    const realOnmessage = Object.getOwnPropertyDescriptor(proto, 'onmessage');
    Object.defineProperties(port, {
      postMessage: {
        value: function postMessage(...message) {
          const result = realPost.apply(this, message);
          posted();
          return result;
        },
        configurable: true,
        writable: true,
      },
      start: {
        value: function start() {
          realStart.call(this);
          started();
        },
        configurable: true,
        writable: true,
      },
      onmessage: {
        get() { return realOnmessage.get.call(this); },
        set(handler) {
          realOnmessage.set.call(this, handler);
          started();
        },
        configurable: true,
      },
    });
  };

  // Work a page or worker starts that completes on the wall clock, not on page time:
  // response bodies it reads (r.json() and the like) and WebAssembly compiles (dotlottie-web
  // compiled its wasm in a worker and started its animation a frame apart from render to
  // render). wrapWallClockWork(global, wrap) replaces each such function f with one that
  // returns wrap(promise f gave), so the caller can count them or hold their results.
  const wrapWallClockWork = (global, wrap) => {
    const replace = (owner, names) => {
      if (!owner) return;
      for (const name of names) {
        const real = owner[name];
        if (typeof real !== 'function') continue;
        owner[name] = { [name](...args) { return wrap(real.apply(this, args)); } }[name];
      }
    };
    replace(global.Response && global.Response.prototype,
            ['arrayBuffer', 'blob', 'bytes', 'formData', 'json', 'text']);
    replace(global.WebAssembly, ['compile', 'compileStreaming', 'instantiate', 'instantiateStreaming']);
  };

  // countWorkerTraffic(global, signal, changed): the messages a page (or a worker) and each
  // dedicated worker it starts send each other, counted on this side. Each worker gets its
  // ID in a first message, which the worker script takes for itself and names in its own
  // counts ('worker:ID:HANDLED:POSTED', worker_script.js); the engine holds page time until
  // the two agree (page.cc, AwaitWorkerTraffic). After a change it calls changed(); the
  // function it returns then sends signal('traffic:ID:SENT:RECEIVED') for each worker whose
  // counts changed. Call it in a task after the handlers ran (a handler may answer).
  const countWorkerTraffic = (global, signal, changed) => {
    const RealWorker = global.Worker;
    if (typeof RealWorker !== 'function') return () => {};
    const post = RealWorker.prototype.postMessage;
    const traffic = new WeakMap();  // Worker -> { id, sent, received }
    const unsent = new Set();
    const flush = () => {
      for (const t of unsent) signal('traffic:' + t.id + ':' + t.sent + ':' + t.received);
      unsent.clear();
    };
    const report = (t) => {
      unsent.add(t);
      changed();
    };
    // Unique among the page's documents and workers; the real Math.random, so the page's
    // seeded one is not drawn from.
    const prefix = Math.random().toString(36).slice(2) + '.';
    let workers = 0;
    global.Worker = class Worker extends RealWorker {
      constructor(...args) {
        super(...args);
        const t = { id: prefix + ++workers, sent: 0, received: 0 };
        traffic.set(this, t);
        post.call(this, { __pagereelWorkerId: t.id });
        this.addEventListener('message', () => { t.received += 1; report(t); });
        report(t);
      }
    };
    RealWorker.prototype.postMessage = function postMessage(...args) {
      const result = post.apply(this, args);
      const t = traffic.get(this);
      if (t) {
        t.sent += 1;
        report(t);
      }
      return result;
    };
    return flush;
  };
