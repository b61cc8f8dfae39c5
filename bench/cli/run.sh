#!/usr/bin/env bash
# CLI throughput: cckey batch against bench/cli/baseline.py on generated
# manifests (bench/cli/gen_manifest.py), in one run. Checks that both give
# the same keys, then reports the best of N runs: wall seconds, lines/s,
# CPU seconds (user + system, steadier on a shared machine), lines per CPU
# second, peak RSS (GNU time), and the Python script's wall and CPU times
# with the ratios, and the floor: how long `cat` takes to read the manifest
# into /dev/null (one thread copying the page cache, nothing else done).
# Python runs up to 10^6 lines; the inline variant up to INLINE_MAX lines
# (default 200000: 4 KiB a line).
# Usage: bench/cli/run.sh BUILD_DIR [LINES...]   (default 1000000)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cckey=$(cd "$1" && pwd)/cckey
shift
sizes=("${@:-1000000}")
reps=${CCKEY_BENCH_REPS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
inline_max=${INLINE_MAX:-200000}
best() {   # best wall seconds, the CPU seconds and peak RSS (KiB) of that run, of $reps runs of "$@"
  local b=1e9 cpu=0 rss=0 t u s m
  for _ in $(seq "$reps"); do
    /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >/dev/null
    read -r t u s m <"$work/time"
    if awk "BEGIN{exit !($t < $b)}"; then b=$t; cpu=$(awk "BEGIN{print $u + $s}"); rss=$m; fi
  done
  echo "$b $cpu $rss"
}
printf '%-9s %-11s %8s %10s %7s %10s %8s %9s %8s %8s %8s %7s\n' lines mode wall_s lines/s cpu_s lines/cpu_s rss_MiB python_s py_cpu_s x_wall x_cpu cat_s
for n in "${sizes[@]}"; do
  for mode in source_file inline; do
    [ "$mode" = inline ] && [ "$n" -gt "$inline_max" ] && continue
    dir="$work/$mode-$n"
    python3 "$here/gen_manifest.py" "$dir" "$n" $([ "$mode" = inline ] && echo --inline)
    "$cckey" batch -q "$dir/manifest.jsonl" >"$work/c.keys"
    py_s=- py_cpu=-
    if [ "$n" -le 1000000 ]; then
      python3 "$here/baseline.py" "$dir/manifest.jsonl" >"$work/p.keys"
      cmp -s "$work/c.keys" "$work/p.keys" || { echo "keys differ from the Python script's ($mode, $n)" >&2; exit 1; }
      read -r py_s py_cpu _ < <(reps=1 best python3 "$here/baseline.py" "$dir/manifest.jsonl")
    fi
    read -r c_s c_cpu c_rss < <(best "$cckey" batch -q "$dir/manifest.jsonl")
    read -r cat_s _ < <(best cat "$dir/manifest.jsonl")
    awk -v n="$n" -v m="$mode" -v c="$c_s" -v cc="$c_cpu" -v r="$c_rss" -v p="$py_s" -v pc="$py_cpu" -v k="$cat_s" 'BEGIN {
      printf "%-9d %-11s %8.2f %10.0f %7.2f %10.0f %8.1f %9s %8s %8s %8s %7.2f\n", n, m, c, n / c, cc, n / cc, r / 1024,
             p, pc, p == "-" ? "-" : sprintf("%.1f", p / c), p == "-" ? "-" : sprintf("%.1f", pc / cc), k }'
    rm -rf "$dir"
  done
done
