#!/usr/bin/env bash
# Installs everything rankscope needs on a fresh Debian 12 machine, then the project itself.
#   apt:  compiler toolchain and the C++ libraries (simdjson, isa-l, CLI11, fmt, ...), Chromium
#         (the web UI's browser tests), Node.js and npm when the machine has none (the web UI's
#         build: `npm ci` runs from the CMake build, web/CMakeLists.txt)
#   pip:  PyTorch 2.13.0 (the local CPU wheel), pytest, Playwright (drives the system Chromium;
#         it never downloads a browser), py-spy, and rankscope (`pip install .`)
# With --deps, only the dependencies (what the test suite needs to build and run).
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev
  libsimdjson-dev libisal-dev libcli11-dev libfmt-dev nlohmann-json3-dev
  libcpp-httplib-dev libgtest-dev libgmock-dev libbenchmark-dev libxlsxwriter-dev
  libopenmpi-dev openmpi-bin
  prometheus tmux chromium
)
# Node.js and npm build the web UI; a machine that already has them (e.g. from NodeSource) keeps its own.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then APT_PACKAGES+=(nodejs npm); fi
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing apt packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

PY=${PYTHON:-python3}
# torch==2.13.0 resolves to the machine's local CPU wheel; never ask for an unpinned torch.
if ! $PY -c "import torch, pytest, jsonschema, playwright" 2>/dev/null; then
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 $PY -m pip install -q "torch==2.13.0" "pytest>=7" "jsonschema>=4.18" "playwright==1.65.2"
fi
# py-spy: the daemon takes the stack of a rank whose collector cannot answer (docs/hang.md).
if ! command -v py-spy >/dev/null 2>&1; then
  $PY -m pip install -q "py-spy==0.4.3"
fi
if [ "${1:-}" = "--deps" ]; then
  exit 0
fi
$PY -m pip install -q .
echo "setup: installed $(command -v rankscope)"
