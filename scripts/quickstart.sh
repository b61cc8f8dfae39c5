#!/usr/bin/env bash
# Fresh machine to keys: install dependencies, build, and run the main job
# (cckey batch over the example kernel suite).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
echo "== cckey batch examples/manifest.jsonl (first 5 of $(grep -c . examples/manifest.jsonl) keys)"
build/cckey batch examples/manifest.jsonl -o build/examples.keys
head -n 5 build/examples.keys
echo "== all keys are in build/examples.keys"
