#!/usr/bin/env bash
# The GPU checks, as one prepared script for the H200 machine (under 5
# minutes). Build on the CPU machine first and carry the build directory:
#
#   cmake -S . -B build -DCCKEY_PORTABLE_CLI=ON && cmake --build build -j
#   bench/gpu.sh [BUILD_DIR]          # default: build
# (CCKEY_PORTABLE_CLI links jansson statically: the GPU machine may lack it.)
#
# Steps: the device list, `cckey selftest --backend cuda`, `cckey selftest
# --backend opencl`, then `cckey_bench --gpu` (end to end on 4 GiB of 4 KiB
# messages, kernel-only and pinned host-to-device rows where the CUDA
# backend has the hooks of bench/gpu_hooks.h, mixed lengths, and auto vs cpu
# vs cuda across batch sizes within a time budget). Logs and the CSV go to
# $OUT (default BUILD_DIR/gpu-out); a short table is printed last.
#
# Exit status: 0 all steps passed; 1 a step failed (including a bench that
# found no usable CUDA backend on a machine with a GPU); 77 no GPU here
# (nothing was run: the script says so and stops).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${OUT:-$build/gpu-out}
mkdir -p "$out"
cli=$build/cckey
bench=$build/bench/cckey_bench
t_start=$(date +%s)

if ! { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; } && [ ! -e /dev/nvidia0 ]; then
  echo "gpu.sh: no NVIDIA GPU found (no working nvidia-smi, no /dev/nvidia0); nothing to run."
  exit 77
fi
for f in "$cli" "$bench"; do
  if [ ! -x "$f" ]; then
    echo "gpu.sh: $f is missing: build first (cmake --build $build) and carry $build"
    exit 1
  fi
  missing=$(ldd "$f" 2>/dev/null | grep 'not found' || true)
  [ -n "$missing" ] && printf 'gpu.sh: %s lacks shared libraries on this machine:\n%s\n' "$f" "$missing"
done

names=() rcs=() secs=() notes=()
# step NAME TIMEOUT LOG CMD...: run with a time limit, keep the log, record the outcome.
step() {
  local name=$1 limit=$2 log=$3
  shift 3
  echo
  echo "==== $name ===="
  local t0=$(date +%s)
  timeout --kill-after=10 "$limit" "$@" 2>&1 | tee "$out/$log"
  local rc=${PIPESTATUS[0]} note=""
  case $rc in
    0) note="ok" ;;
    77) note="skipped (not available here)" ;;
    124|137) note="TIMED OUT after ${limit}s" ;;
    *) note="FAILED" ;;
  esac
  if [ "$rc" = 2 ] && grep -q 'unknown command' "$out/$log"; then note="not in this build (unknown command)"; fi
  names+=("$name") rcs+=("$rc") secs+=($(( $(date +%s) - t0 ))) notes+=("$note")
}

echo "gpu.sh: $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), build $build, out $out"
nvidia-smi -L 2>/dev/null || true
nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.current,pcie.link.width.current --format=csv 2>/dev/null || true

step "selftest cuda" 90 selftest-cuda.log "$cli" selftest --backend cuda
step "selftest opencl" 90 selftest-opencl.log "$cli" selftest --backend opencl

# The end-to-end workload is 4 GiB; a machine short of memory gets less.
free_kib=$(awk '/MemAvailable/ {print $2}' /proc/meminfo 2>/dev/null || echo 0)
gpu_bytes=4G
[ "${free_kib:-0}" -lt $((16 * 1024 * 1024)) ] && gpu_bytes=1G
# What is left of the 5 minutes, less a margin, bounds the bench; its size
# sweep gets what the fixed parts leave.
left=$(( 285 - ($(date +%s) - t_start) ))
[ "$left" -lt 60 ] && left=60
sweep=$(( left - 110 ))
[ "$sweep" -lt 20 ] && sweep=20
step "cckey_bench --gpu" "$left" bench-gpu.log "$bench" --gpu --gpu-bytes "$gpu_bytes" --gpu-budget "$sweep" \
  --csv "$out/gpu-bench.csv"

echo
echo "==== gpu.sh summary ($(( $(date +%s) - t_start )) s; logs and CSV in $out) ===="
sed -n '/^== gpu summary ==/,$p' "$out/bench-gpu.log" 2>/dev/null | sed '1d'
echo
printf '%-20s %4s %6s  %s\n' step rc seconds result
fail=0
for i in "${!names[@]}"; do
  printf '%-20s %4s %6s  %s\n' "${names[$i]}" "${rcs[$i]}" "${secs[$i]}" "${notes[$i]}"
  # A GPU is present, so a bench that found no usable CUDA backend failed;
  # a selftest command this build lacks is reported, not failed.
  case ${rcs[$i]} in
    0) ;;
    77) [[ ${names[$i]} == selftest* ]] || fail=1 ;;
    2) [[ ${notes[$i]} == not\ in* ]] || fail=1 ;;
    *) fail=1 ;;
  esac
done
exit $fail
