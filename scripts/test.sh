#!/usr/bin/env bash
# The whole test suite: build, C++ unit tests (GoogleTest via ctest), then the Python /
# end-to-end tests (pytest), which drive the built binary on the real traces in ../shared.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --deps

BUILD=${RANKSCOPE_BUILD_DIR:-build/dev}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DRANKSCOPE_BUILD_TESTS=ON -DRANKSCOPE_BUILD_BENCH=ON >/dev/null
cmake --build "$BUILD"
ctest --test-dir "$BUILD" --output-on-failure -j2
RANKSCOPE_BIN="$PWD/$BUILD/src/rankscope/cli/rankscope" python3 -m pytest -q tests/python "$@"
