// Starts browserless (the npm package @browserless.io/browserless) for bench/serve on
// Debian's chrome-headless-shell, without the playwright browser download it expects.
// See ../README.md ("browserless") for what this took and why.
//
//   PLAYWRIGHT_BROWSERS_PATH=DIR HOST=127.0.0.1 PORT=3000 CONCURRENT=2 QUEUED=100 \
//     node start.mjs
// where DIR/chromium-1208/chrome-linux64/chrome is a link to the browser (start.sh makes it).
//
// browserless refuses to start when a route's browser is not installed; only its
// "chromium" browser is (the link above), so the routes of chrome, edge, firefox and webkit
// are disabled here through its SDK (Browserless.disableRoutes), found by their names in the
// package's own route files.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Browserless } from '@browserless.io/browserless';

const pkgDir = path.join(path.dirname(fileURLToPath(import.meta.url)),
  'node_modules', '@browserless.io', 'browserless');
const disabled = [];
for (const browser of ['chrome', 'edge', 'firefox', 'webkit']) {
  for (const kind of ['http', 'ws']) {
    const dir = path.join(pkgDir, 'build', 'routes', browser, kind);
    const files = await readdir(dir).catch(() => []);
    for (const file of files.filter((f) => f.endsWith('.js'))) {
      const text = await readFile(path.join(dir, file), 'utf8');
      for (const m of text.matchAll(/name = BrowserlessRoutes\.(\w+)/g)) disabled.push(m[1]);
    }
  }
}
const browserless = new Browserless();
browserless.disableRoutes(...disabled);
await browserless.start();
const stop = async () => { await browserless.stop().catch(() => {}); process.exit(0); };
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
