#!/usr/bin/env bash
# Builds (if needed) and runs the whole test suite through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${CCKEY_BUILD_DIR:-build}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" "$@"
