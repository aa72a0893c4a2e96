// Injected into every document of a page whose shared workers pagereel brings onto film
// time (PageOptions::shared_workers, render), after page_script.js and before the page's
// own scripts.
//
// Why: a page and its shared worker talk over the port of `new SharedWorker(...)`, a
// MessagePort, on the wall clock: a message the page sent in one frame was answered in
// that frame or the next, at random. Here the page's end of each such port counts what it
// sends and receives and tells the engine ('port:page:ID:SENT:RECEIVED:STARTED'); the
// worker's end counts what it handles and posts (worker_script.js), and page time is held
// until the two agree (page.cc, PortsSettled), as for dedicated workers.
//
// Each port gets its id in a first message, which the worker script takes for itself. A
// port delivers nothing until its owner starts it (sets onmessage or calls start()): what
// the worker posts is waited for only once the page's end is started, so a page that never
// listens does not hold the film.
(() => {
  const RealSharedWorker = window.SharedWorker;
  const signal = window.__pagereelSignal;
  if (typeof RealSharedWorker !== 'function' || typeof signal !== 'function') return;
  const realPost = MessagePort.prototype.postMessage;
/*__PAGEREEL_COMMON__*/

  // Counts are told in a task after the handlers ran: a handler may answer, and the engine
  // must not see the message received before it sees the answer sent.
  const unsent = new Set();
  const later = new MessageChannel();
  let queued = false;
  later.port1.onmessage = () => {
    queued = false;
    for (const p of unsent) {
      signal('port:page:' + p.id + ':' + p.sent + ':' + p.received + ':' + (p.started ? 1 : 0));
    }
    unsent.clear();
  };
  const report = (p) => {
    unsent.add(p);
    if (queued) return;
    queued = true;
    realPost.call(later.port2, 0);
  };

  // Unique among the page's documents: drawn from crypto, so the page's seeded Math.random
  // is not drawn from.
  const prefix = Array.from(crypto.getRandomValues(new Uint32Array(2)), (n) => n.toString(36))
                     .join('') + '.';
  let ports = 0;
  window.SharedWorker = class SharedWorker extends RealSharedWorker {
    constructor(...args) {
      super(...args);
      const port = this.port;
      const p = { id: prefix + ++ports, sent: 0, received: 0, started: false };
      realPost.call(port, { __pagereelPortId: p.id });
      countPort(port, () => {
        p.sent += 1;
        report(p);
      }, () => {
        if (p.started) return;
        p.started = true;
        report(p);
      });
      port.addEventListener('message', () => {
        p.received += 1;
        report(p);
      });
      report(p);
    }
  };
})();
