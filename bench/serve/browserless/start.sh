#!/usr/bin/env bash
# Starts browserless on 127.0.0.1 with Debian's chrome-headless-shell standing in for the
# Chromium build playwright-core would download (chromium-1208 for playwright-core 1.58.2).
# Usage: [PORT=3000] [CONCURRENT=2] [QUEUED=100] [TIMEOUT=30000]
#        [CHROME_PATH=/usr/lib/chromium/chromium-headless-shell] bench/serve/browserless/start.sh
# Runs `npm ci` here first when node_modules is missing. Execs node, so the caller's pid is
# browserless's.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -d "$here/node_modules/@browserless.io/browserless" ]; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
browsers=${PLAYWRIGHT_BROWSERS_PATH:-${TMPDIR:-/tmp}/pagereel-bench-pw-browsers}
# The folder name playwright-core looks for: its registry's chromium revision.
revision=$(node -e "
  const p = require('$here/node_modules/playwright-core/browsers.json');
  console.log(p.browsers.find((b) => b.name === 'chromium').revision)")
mkdir -p "$browsers/chromium-$revision/chrome-linux64"
ln -sfn "${CHROME_PATH:-/usr/lib/chromium/chromium-headless-shell}" \
  "$browsers/chromium-$revision/chrome-linux64/chrome"
export PLAYWRIGHT_BROWSERS_PATH=$browsers
export HOST=${HOST:-127.0.0.1} PORT=${PORT:-3000}
export CONCURRENT=${CONCURRENT:-$(nproc)} QUEUED=${QUEUED:-100} TIMEOUT=${TIMEOUT:-30000}
# Everything but trace and verbose (the default when DEBUG is unset adds trace).
export DEBUG=${DEBUG:-browserless*,-**:trace,-**:verbose}
# browserless reads some files relative to the working directory (node_modules/...).
cd "$here"
exec node start.mjs
