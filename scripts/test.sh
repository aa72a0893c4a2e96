#!/usr/bin/env bash
# Installs what the tests need, builds with warnings as errors (with GCC, and with clang's
# thread-safety analysis), and runs the test suite (everything but tests labelled 'slow';
# pass --all to run those too).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake --preset ci
cmake --build --preset ci
# The same code under clang with -Wthread-safety: every GUARDED_BY is checked. Of its tests
# only the fuzz targets' run (tests/fuzz): their seeds always, fuzzing (label slow) with --all.
cmake --preset thread-safety
cmake --build --preset thread-safety
if [ "${1:-}" = "--all" ]; then
  ctest --test-dir build --output-on-failure -j2 --timeout 900
  ctest --test-dir build-clang -L fuzz --output-on-failure
else
  ctest --preset ci
  ctest --test-dir build-clang -L fuzz -LE slow --output-on-failure
fi
