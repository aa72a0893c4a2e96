#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a rendered film: installs what pagereel
# needs (Debian packages only), builds it, and renders the bundled lower-third example.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake --preset default
cmake --build --preset default
mkdir -p out
./build/src/cli/pagereel render examples/lower-third -o out/lower-third.mp4
echo
echo "Done. The film is at $(pwd)/out/lower-third.mp4"
echo "The binary is ./build/src/cli/pagereel; try './build/src/cli/pagereel render --help'."
