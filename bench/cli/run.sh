#!/usr/bin/env bash
# CLI throughput: cckey batch against bench/cli/baseline.py on generated
# manifests (bench/cli/gen_manifest.py), in one run. Checks that both give
# the same keys, then reports the best of N wall times, lines/s, the ratio
# and peak RSS (GNU time).
# Usage: bench/cli/run.sh BUILD_DIR [LINES...]   (default 1000000)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cckey=$(cd "$1" && pwd)/cckey
shift
sizes=("${@:-1000000}")
reps=${CCKEY_BENCH_REPS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
best() {   # best wall seconds and the peak RSS (KiB) of that run, of $reps runs of "$@"
  local b=1e9 rss=0 t m
  for _ in $(seq "$reps"); do
    /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null
    read -r t m <"$work/time"
    if awk "BEGIN{exit !($t < $b)}"; then b=$t; rss=$m; fi
  done
  echo "$b $rss"
}
printf '%-10s %-12s %10s %12s %10s %12s %8s\n' lines mode seconds lines/s rss_MiB python_s x_python
for n in "${sizes[@]}"; do
  for mode in source_file inline; do
    dir="$work/$mode-$n"
    python3 "$here/gen_manifest.py" "$dir" "$n" $([ "$mode" = inline ] && echo --inline)
    "$cckey" batch -q "$dir/manifest.jsonl" >"$work/c.keys"
    py_s=-
    if [ "$n" -le 1000000 ]; then
      python3 "$here/baseline.py" "$dir/manifest.jsonl" >"$work/p.keys"
      cmp -s "$work/c.keys" "$work/p.keys" || { echo "keys differ from the Python script's ($mode, $n)" >&2; exit 1; }
      read -r py_s _ < <(CCKEY_BENCH_REPS=1 reps=1 best python3 "$here/baseline.py" "$dir/manifest.jsonl")
    fi
    read -r c_s c_rss < <(best "$cckey" batch -q "$dir/manifest.jsonl")
    awk -v n="$n" -v m="$mode" -v c="$c_s" -v r="$c_rss" -v p="$py_s" 'BEGIN {
      printf "%-10d %-12s %10.3f %12.0f %10.1f %12s %8s\n", n, m, c, n / c, r / 1024, p,
             p == "-" ? "-" : sprintf("%.1f", p / c) }'
    rm -rf "$dir"
  done
done
