#!/usr/bin/env bash
# Installs what the tests need, builds with warnings as errors, and runs the test suite
# (everything but tests labelled 'slow'; pass --all to run those too).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake --preset ci
cmake --build --preset ci
if [ "${1:-}" = "--all" ]; then
  ctest --test-dir build --output-on-failure -j2 --timeout 900
else
  ctest --preset ci
fi
