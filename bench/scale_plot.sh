#!/usr/bin/env bash
# Plot cckey_bench_scale's CSV: keys/s against n, one line per candidate
# (the OpenSSL loop, cckey on 1 thread, cckey on all threads), each in the
# same colour in both panels: wall-clock keys/s, and keys per CPU second of
# the process (the steadier figure on a shared machine).
#   bench/scale_plot.sh scale.csv scale.png "title"
set -euo pipefail
csv=$1 out=$2 title=${3:-cckey_bench_scale}
dat=$(mktemp)
trap 'rm -f "$dat"' EXIT
# One row per n: wall and CPU rates of each candidate ("-" where missing).
awk -F, 'NR > 1 {
    c = $2 == "openssl-loop" ? 1 : ($3 == 1 ? 2 : 3); ns[$1] = 1
    wall[$1, c] = $4; cpu[$1, c] = ($5 == "" ? "-" : $5); if (c == 3) all = $3 }
  END {
    printf "n openssl-loop-1t cckey-1t cckey-%st openssl-loop-1t cckey-1t cckey-%st\n", all, all
    for (n in ns) {
      printf "%s", n
      for (c = 1; c <= 3; c++) printf " %s", ((n, c) in wall) ? wall[n, c] : "-"
      for (c = 1; c <= 3; c++) printf " %s", ((n, c) in cpu) ? cpu[n, c] : "-"
      printf "\n" } }' "$csv" | sort -n -k1,1 > "$dat"
gnuplot -e "dat='$dat'; out='$out'; heading='$title'" "$(dirname "$0")/scale_plot.gp"
