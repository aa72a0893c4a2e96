// A static file server for the bench pages, on loopback only.
//
//   node server.mjs [--port 8091] [--host 127.0.0.1] [--image-delay MS]
//
// Serves this folder (node_modules included, so pages load Chart.js and fonts from npm
// packages). Any URL may carry ?delay=MS to hold its response that long; --image-delay adds
// a delay to every image and font response. Nothing is cached (Cache-Control: no-store), so
// every capture loads every file. Logs nothing; answers 404 outside this folder.
import http from 'node:http';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
function flag(name, fallback) {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
}
const host = flag('--host', '127.0.0.1');
const port = Number(flag('--port', '8091'));
const imageDelayMs = Number(flag('--image-delay', '0'));

const types = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.css': 'text/css', '.json': 'application/json', '.jpg': 'image/jpeg', '.png': 'image/png',
  '.svg': 'image/svg+xml', '.woff2': 'font/woff2', '.woff': 'font/woff',
};
const delayed = new Set(['.jpg', '.png', '.svg', '.woff2', '.woff']);

const server = http.createServer(async (req, res) => {
  const u = new URL(req.url, 'http://localhost');
  const file = path.join(root, decodeURIComponent(u.pathname));
  if (!file.startsWith(root + path.sep) && file !== root) {
    res.writeHead(404).end();
    return;
  }
  const ext = path.extname(file);
  let delayMs = Number(u.searchParams.get('delay') || 0);
  if (delayed.has(ext)) delayMs += imageDelayMs;
  try {
    const body = await fs.readFile(file);
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    res.writeHead(200, { 'Content-Type': types[ext] || 'application/octet-stream',
      'Content-Length': body.length, 'Cache-Control': 'no-store' });
    res.end(body);
  } catch {
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
  }
});
server.listen(port, host, () => console.error(`pages: http://${host}:${port}/ serving ${root}`));
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
