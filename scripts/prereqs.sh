#!/usr/bin/env bash
# Installs what the build needs beyond the Rust toolchain, if it is missing:
# cmake and libclang (HiGHS is compiled from C++ source by highs-sys, whose
# bindings are generated with bindgen), and chromium (the HTML reports are
# rendered headless in CI). Debian/Ubuntu, via apt-get.
set -euo pipefail

missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
dpkg -s libclang-dev >/dev/null 2>&1 || missing+=(libclang-dev)
# Headless Chromium renders the HTML reports in scripts/check-html.sh.
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "prereqs: please install ${missing[*]} (cmake, libclang, chromium) with your package manager" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "prereqs: run as root or install sudo to get ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "prereqs: installing ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
