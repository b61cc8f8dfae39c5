#!/usr/bin/env bash
# Before/after in one run (issue 25's constraint): the CLI against the json +
# hashlib script (bench/cli/run.sh) and the library against the OpenSSL loop
# (cckey_bench_scale), and the manifest parser against simdjson
# (cckey_bench_parse, where both builds have it), for two builds, alternating them ROUNDS times so that
# a shared machine's load falls on both alike. Prints each tool's own table,
# labelled by build and round.
# Usage: bench/before_after.sh BEFORE_BUILD AFTER_BUILD [ROUNDS]   (default 2)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 2 ] || { echo "usage: $0 BEFORE_BUILD AFTER_BUILD [ROUNDS]" >&2; exit 2; }
before=$1 after=$2 rounds=${3:-2}
for b in "$before" "$after"; do
  [ -x "$b/cckey" ] && [ -x "$b/bench/cckey_bench_scale" ] ||
    { echo "$b: no cckey or bench/cckey_bench_scale (build with benches on)" >&2; exit 2; }
done
lines=${CCKEY_BA_LINES:-200000 1000000}
keys=${CCKEY_BA_KEYS:-1000000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/cli/gen_manifest.py" "$work/parse" "${CCKEY_BA_PARSE_LINES:-1000000}" >/dev/null
for r in $(seq "$rounds"); do
  for b in "$before" "$after"; do
    label=$([ "$b" = "$before" ] && echo before || echo after)
    echo "== round $r, $label ($b), load $(cut -d' ' -f1-3 /proc/loadavg)"
    # shellcheck disable=SC2086
    INLINE_MAX=200000 "$here/cli/run.sh" "$b" $lines
    "$b/bench/cckey_bench_scale" --max "$keys"
    if [ -x "$b/bench/cckey_bench_parse" ]; then "$b/bench/cckey_bench_parse" "$work/parse/manifest.jsonl" 3; fi
  done
done
