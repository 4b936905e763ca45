#!/usr/bin/env bash
# Installs what the build and the tests need beyond the Rust toolchain, if it
# is missing. Debian/Ubuntu, via apt-get and pip:
# - cmake and libclang (HiGHS is compiled from C++ source by highs-sys, whose
#   bindings are generated with bindgen);
# - chromium (the HTML reports are rendered headless in scripts/check-html.sh);
# - DuckDB's Python package, with which a test runs sql/aggregate.sql. When the
#   system Python lacks it, it goes into a virtual environment in
#   target/python-duckdb (Debian's Python refuses system-wide pip installs).
set -euo pipefail
cd "$(dirname "$0")/.."

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 && sudo="sudo"
fi

missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
dpkg -s libclang-dev >/dev/null 2>&1 || missing+=(libclang-dev)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
venv="target/python-duckdb"
need_duckdb=1
if python3 -c 'import duckdb' >/dev/null 2>&1 || "$venv/bin/python3" -c 'import duckdb' >/dev/null 2>&1; then
  need_duckdb=0
else
  command -v python3 >/dev/null 2>&1 || missing+=(python3)
  python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
fi

if [ ${#missing[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "prereqs: please install ${missing[*]} with your package manager" >&2
    exit 1
  fi
  if [ "$(id -u)" -ne 0 ] && [ -z "$sudo" ]; then
    echo "prereqs: run as root or install sudo to get ${missing[*]}" >&2
    exit 1
  fi
  echo "prereqs: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ "$need_duckdb" -eq 1 ]; then
  echo "prereqs: installing DuckDB's Python package into $venv" >&2
  mkdir -p target
  python3 -m venv "$venv"
  "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check duckdb
fi
