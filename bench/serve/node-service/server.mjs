// The Node baseline that `pagereel serve` is measured against (bench/serve/serve_bench.sh):
// the strongest simple capture service a user would write on puppeteer-core, doing what a
// careful seed service does.
//
// - One chrome-headless-shell for the whole process, launched once (relaunched if it dies);
//   no browser launch per capture.
// - A fresh incognito browser context per capture (browser.createBrowserContext()), closed
//   after it, so no storage leaks from one capture to the next.
// - At most CONCURRENCY captures at once (default: the number of CPUs); up to QUEUE_MAX more
//   wait in a FIFO queue, each at most QUEUE_MAX_WAIT_MS; past either bound the answer is
//   503 with a Retry-After computed from the recent drain rate.
// - A client that leaves takes its queued capture out of the queue, and closes the context
//   of its running capture (logged as 499).
// - Waits for network idle (puppeteer's networkidle0: no connection for 500 ms) and captures.
//
// Routes (the query names are those of `pagereel serve`):
//   GET /v1/screenshot?url=&type=png|jpeg|webp&quality=&width=&height=&wait=
//   GET /v1/pdf?url=&format=A4&landscape=true|false&printBackground=true|false&wait=
//   POST /v1/screenshot?type=&width=&height=  with the HTML document as the body
//        (Content-Type text/html): page.setContent(html, {waitUntil: 'load'})
//   GET /healthz, GET /v1/status
// wait=networkidle (default), load, or a number of milliseconds (after load). The service
// has no `quiet` strategy and does not honour page readiness signals: a user's first
// service does not, which is what the wait-strategy comparison shows.
//
// Configuration, all from the environment:
//   HOST (127.0.0.1), PORT (8090), CONCURRENCY (CPUs), QUEUE_MAX (100),
//   QUEUE_MAX_WAIT_MS (20000), TIMEOUT_MS (30000), CHROME_PATH (Debian's headless shell),
//   LOG (1: one JSON line per capture on stderr; 0: none).
import http from 'node:http';
import os from 'node:os';
import puppeteer from 'puppeteer-core';

function envInt(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    console.error(`node-service: ${name}=${raw} is not a non-negative integer`);
    process.exit(2);
  }
  return value;
}

const config = {
  host: process.env.HOST || '127.0.0.1',
  port: envInt('PORT', 8090),
  concurrency: Math.max(1, envInt('CONCURRENCY', os.availableParallelism())),
  queueMax: envInt('QUEUE_MAX', 100),
  queueMaxWaitMs: envInt('QUEUE_MAX_WAIT_MS', 20000),
  timeoutMs: envInt('TIMEOUT_MS', 30000),
  chromePath: process.env.CHROME_PATH || '/usr/lib/chromium/chromium-headless-shell',
  log: process.env.LOG !== '0',
};

// ---------------------------------------------------------------------------------------
// The browser: one process, relaunched when it disconnects.

const chromeArgs = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-dev-shm-usage', '--mute-audio', '--hide-scrollbars'];
let browserPromise = null;
let browserRestarts = 0;

function getBrowser() {
  if (!browserPromise) {
    browserPromise = puppeteer.launch({
      executablePath: config.chromePath,
      headless: 'shell',
      args: chromeArgs,
      protocolTimeout: config.timeoutMs + 10000,
    }).then((browser) => {
      browser.on('disconnected', () => {
        browserRestarts++;
        browserPromise = null;
      });
      return browser;
    }, (err) => {
      browserPromise = null;
      throw err;
    });
  }
  return browserPromise;
}

// ---------------------------------------------------------------------------------------
// Admission: CONCURRENCY slots and a bounded FIFO of waiters.

class Overloaded extends Error {}

let running = 0;
const waiting = [];             // entries {grant, refuse, timer}
const recentDone = [];          // completion times (ms) of the last 10 s, for Retry-After

function acquire() {
  if (running < config.concurrency && waiting.length === 0) {
    running++;
    return { promise: Promise.resolve(), cancel() {} };
  }
  if (waiting.length >= config.queueMax) {
    return { promise: Promise.reject(new Overloaded('queue full')), cancel() {} };
  }
  let entry;
  const promise = new Promise((grant, refuse) => {
    entry = { grant, refuse, timer: null };
    entry.timer = setTimeout(() => {
      removeWaiter(entry);
      refuse(new Overloaded('waited too long in the queue'));
    }, config.queueMaxWaitMs);
    waiting.push(entry);
  });
  return { promise, cancel() { if (removeWaiter(entry)) entry.refuse(new Error('client left')); } };
}

function removeWaiter(entry) {
  const i = waiting.indexOf(entry);
  if (i < 0) return false;
  waiting.splice(i, 1);
  clearTimeout(entry.timer);
  return true;
}

function release() {
  const now = Date.now();
  recentDone.push(now);
  while (recentDone.length && recentDone[0] < now - 10000) recentDone.shift();
  const next = waiting.shift();
  if (next) {
    clearTimeout(next.timer);
    next.grant();  // the slot passes straight to the next waiter
  } else {
    running--;
  }
}

function retryAfterSeconds() {
  const now = Date.now();
  while (recentDone.length && recentDone[0] < now - 10000) recentDone.shift();
  const perSecond = recentDone.length / 10;
  if (perSecond <= 0) return 5;
  return Math.min(60, Math.max(1, Math.ceil((waiting.length + 1) / perSecond)));
}

// ---------------------------------------------------------------------------------------
// Requests.

class BadRequest extends Error {
  constructor(param, detail) { super(`bad parameter: ${param}`); this.detail = detail; }
}

function intParam(q, name, fallback, min, max) {
  const raw = q.get(name);
  if (raw === null || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new BadRequest(name, `${name} must be an integer from ${min} to ${max}, got '${raw}'`);
  }
  return Number(raw);
}

function boolParam(q, name, fallback) {
  const raw = q.get(name);
  if (raw === null || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new BadRequest(name, `${name} must be true or false, got '${raw}'`);
}

function parseCommon(q, html) {
  if (html !== undefined) {
    // A posted document is set as the page's content and captured at its load event.
    if (q.get('url')) throw new BadRequest('url', 'give either url or a posted document');
    return { html, wait: 'load' };
  }
  const url = q.get('url');
  if (!url) throw new BadRequest('url', 'url is required');
  let parsed;
  try { parsed = new URL(url); } catch { throw new BadRequest('url', `url is not a URL: '${url}'`); }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new BadRequest('url', 'url must be http or https');
  }
  const wait = q.get('wait') || 'networkidle';
  if (wait !== 'networkidle' && wait !== 'load' && !/^\d+$/.test(wait)) {
    throw new BadRequest('wait', `wait must be networkidle, load or milliseconds, got '${wait}'`);
  }
  return { url, wait };
}

function parseScreenshot(q, html) {
  const spec = parseCommon(q, html);
  spec.type = q.get('type') || 'png';
  if (!['png', 'jpeg', 'webp'].includes(spec.type)) {
    throw new BadRequest('type', `type must be png, jpeg or webp, got '${spec.type}'`);
  }
  spec.quality = q.get('quality') === null ? undefined : intParam(q, 'quality', 80, 0, 100);
  if (spec.type === 'png') spec.quality = undefined;
  spec.width = intParam(q, 'width', 1280, 1, 4096);
  spec.height = intParam(q, 'height', 720, 1, 4096);
  return spec;
}

function parsePdf(q) {
  const spec = parseCommon(q);
  spec.format = q.get('format') || 'A4';
  if (!/^(A[0-6]|Letter|Legal|Tabloid|Ledger)$/i.test(spec.format)) {
    throw new BadRequest('format', `format must be A0-A6, Letter, Legal, Tabloid or Ledger`);
  }
  spec.landscape = boolParam(q, 'landscape', false);
  spec.printBackground = boolParam(q, 'printBackground', true);
  return spec;
}

// Runs one capture in its own incognito context. `signal` aborts it when the client leaves.
async function capture(kind, spec, signal) {
  const browser = await getBrowser();
  const context = await browser.createBrowserContext();
  const onAbort = () => { context.close().catch(() => {}); };
  signal.addEventListener('abort', onAbort);
  const t0 = performance.now();
  try {
    const page = await context.newPage();
    if (kind === 'screenshot') {
      await page.setViewport({ width: spec.width, height: spec.height, deviceScaleFactor: 1 });
    }
    const fixedMs = /^\d+$/.test(spec.wait) ? Number(spec.wait) : null;
    let response;
    try {
      if (spec.html !== undefined) {
        await page.setContent(spec.html, { waitUntil: 'load', timeout: config.timeoutMs });
      } else {
        response = await page.goto(spec.url, {
          waitUntil: spec.wait === 'networkidle' ? 'networkidle0' : 'load',
          timeout: config.timeoutMs,
        });
      }
    } catch (err) {
      if (err.name === 'TimeoutError') throw Object.assign(err, { status: 504 });
      throw Object.assign(err, { status: signal.aborted ? 499 : 422 });
    }
    if (response && !response.ok()) {
      throw Object.assign(new Error(`the page answered HTTP ${response.status()}`), { status: 422 });
    }
    if (fixedMs) await new Promise((r) => setTimeout(r, fixedMs));
    const t1 = performance.now();
    const bytes = kind === 'screenshot'
      ? await page.screenshot({ type: spec.type, quality: spec.quality })
      : await page.pdf({ format: spec.format, landscape: spec.landscape,
        printBackground: spec.printBackground });
    return { bytes: Buffer.from(bytes), waitMs: t1 - t0, captureMs: performance.now() - t1 };
  } finally {
    signal.removeEventListener('abort', onAbort);
    await context.close().catch(() => {});
  }
}

const contentTypes = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp', pdf: 'application/pdf' };
let served = 0;

function sendJson(res, status, body, headers = {}) {
  if (res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

async function handleCapture(kind, q, req, res, html) {
  const start = performance.now();
  let spec;
  try {
    spec = kind === 'screenshot' ? parseScreenshot(q, html) : parsePdf(q);
  } catch (err) {
    if (err instanceof BadRequest) return sendJson(res, 400, { error: err.message, detail: err.detail });
    throw err;
  }
  const controller = new AbortController();
  const onClose = () => { if (!res.writableFinished) controller.abort(); };
  res.on('close', onClose);
  const slot = acquire();
  controller.signal.addEventListener('abort', () => slot.cancel());
  let status = 200, result = null, detail;
  try {
    await slot.promise;
  } catch (err) {
    status = err instanceof Overloaded ? 503 : 499;
    detail = err.message;
  }
  if (status === 200) {
    try {
      result = await capture(kind, spec, controller.signal);
    } catch (err) {
      status = controller.signal.aborted ? 499 : (err.status || 502);
      detail = err.message;
    } finally {
      release();
    }
  }
  res.off('close', onClose);
  if (status === 200) {
    served++;
    res.writeHead(200, { 'Content-Type': contentTypes[kind === 'pdf' ? 'pdf' : spec.type],
      'Content-Length': result.bytes.length });
    res.end(result.bytes);
  } else if (status === 503) {
    sendJson(res, 503, { error: 'overloaded', detail }, { 'Retry-After': String(retryAfterSeconds()) });
  } else if (status !== 499) {
    sendJson(res, status, { error: status === 504 ? 'timeout' : status === 422 ? 'page could not be loaded' : 'capture failed', detail });
  }
  if (config.log) {
    process.stderr.write(JSON.stringify({ route: kind,
      url: spec.html !== undefined ? `html (${Buffer.byteLength(spec.html)} bytes)` : spec.url, status, wait: spec.wait,
      wait_ms: result ? Math.round(result.waitMs) : undefined,
      capture_ms: result ? Math.round(result.captureMs) : undefined,
      total_ms: Math.round(performance.now() - start), bytes: result ? result.bytes.length : 0,
      detail }) + '\n');
  }
}

const server = http.createServer((req, res) => {
  const u = new URL(req.url, 'http://localhost');
  if (req.method === 'POST' && u.pathname === '/v1/screenshot') {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > 8 << 20) { sendJson(res, 413, { error: 'too large', detail: 'at most 8 MiB' }); req.destroy(); }
      else chunks.push(chunk);
    });
    req.on('end', () => {
      handleCapture('screenshot', u.searchParams, req, res, Buffer.concat(chunks).toString('utf8')).catch((err) => {
        sendJson(res, 500, { error: 'internal error', detail: String(err && err.message) });
      });
    });
    return;
  }
  if (req.method !== 'GET') return sendJson(res, 405, { error: 'method not allowed', detail: 'use GET, or POST a document to /v1/screenshot' });
  if (u.pathname === '/healthz') return sendJson(res, 200, { ok: true });
  if (u.pathname === '/v1/status') {
    return sendJson(res, 200, { running, waiting: waiting.length, served, browserRestarts,
      concurrency: config.concurrency, queueMax: config.queueMax });
  }
  const kind = u.pathname === '/v1/screenshot' ? 'screenshot' : u.pathname === '/v1/pdf' ? 'pdf' : null;
  if (!kind) return sendJson(res, 404, { error: 'not found', detail: u.pathname });
  handleCapture(kind, u.searchParams, req, res).catch((err) => {
    sendJson(res, 500, { error: 'internal error', detail: String(err && err.message) });
  });
});

await getBrowser();
server.listen(config.port, config.host, () => {
  console.error(`node-service: listening on http://${config.host}:${config.port} ` +
    `(concurrency ${config.concurrency}, queue ${config.queueMax}, max wait ${config.queueMaxWaitMs} ms)`);
});

async function shutdown() {
  server.close();
  const browser = await browserPromise?.catch(() => null);
  await browser?.close().catch(() => {});
  process.exit(0);
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
