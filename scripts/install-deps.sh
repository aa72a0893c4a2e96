#!/usr/bin/env bash
# Installs everything pagereel needs to build, test and run on Debian 12, from Debian's
# packages only (nothing is downloaded from anywhere else). Safe to run again.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
else
  SUDO=
fi

packages=(
  # Toolchain.
  build-essential cmake ninja-build ccache pkg-config git
  # clang builds the thread-safety preset (its analysis checks the GUARDED_BY annotations).
  clang
  # The browser pagereel drives (the ELF lives at /usr/lib/chromium/chromium-headless-shell),
  # and its fonts: films must not depend on the machine, and the development machines' image
  # has DejaVu's extra faces (italic, condensed) too, so every machine gets them. Noto CJK
  # and Noto Color Emoji, so Chinese, Japanese and Korean text and emoji draw out of the box
  # (with DejaVu alone they came out as empty boxes and nothing).
  chromium-headless-shell fonts-dejavu-core fonts-dejavu-extra fonts-noto-cjk
  fonts-noto-color-emoji
  # Encoding, image decode.
  libavcodec-dev libavformat-dev libavfilter-dev libavutil-dev libswscale-dev
  libturbojpeg0-dev libspng-dev
  # SRT outputs of `pagereel live` on their own socket (a dead receiver noticed in 1.5 s):
  # the GnuTLS flavour, the libsrt Debian's FFmpeg already links.
  libsrt-gnutls-dev
  # Parsing, CLI, text formatting, HTTP.
  libsimdjson-dev nlohmann-json3-dev libcli11-dev libfmt-dev libboost1.81-dev
  # Show files of `pagereel live` (TOML); its sources' sound: a private PulseAudio daemon
  # per show, read with libpulse-simple (docs/live.md, "Sound"). Without the daemon a show
  # runs silent.
  libtomlplusplus-dev pulseaudio libpulse-dev
  # Tests and benchmarks.
  googletest libgtest-dev libgmock-dev libbenchmark-dev ffmpeg rt-tests python3 curl
)

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
# Node.js runs the reference benchmark (puppeteer-core) and builds the probe report's chart
# bundle. Some images ship Node.js with its own npm; Debian's npm conflicts with that one.
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)
$SUDO apt-get install -y --no-install-recommends "${packages[@]}"
