#!/usr/bin/env bash
# Warm a kernel suite as a Slurm job array writing to one shared cache.
# Every array task compiles its own shard of the manifest (cckey warm --shard
# auto takes the task's rank among SLURM_ARRAY_TASK_MIN.._MAX by _STEP, of
# _COUNT, so any --array=A-B[:S][%L] covers the manifest once) into a
# node-local cache folder and the shared remote; GPU nodes and CI runners
# then read the remote.
#
#   sbatch --export=ALL,CCKEY_REMOTE=redis://cache-host:6379 \
#          examples/slurm/warm-array.sh suite.jsonl
#
# The manifest must be the same file for every task (shards are computed
# from it). CCKEY names the cckey binary (default: cckey on PATH).
#SBATCH --job-name=cckey-warm
#SBATCH --array=0-3
#SBATCH --cpus-per-task=8
#SBATCH --time=01:00:00
set -euo pipefail
manifest=${1:?usage: warm-array.sh MANIFEST}
: "${CCKEY_REMOTE:?set CCKEY_REMOTE to the shared cache, e.g. redis://cache-host:6379}"
: "${SLURM_ARRAY_TASK_ID:?run this as a Slurm array job (sbatch), or set the SLURM_ARRAY_* variables}"
cache=${CCKEY_CACHE_DIR:-${TMPDIR:-/tmp}/cckey-warm-${SLURM_ARRAY_JOB_ID:-0}-$SLURM_ARRAY_TASK_ID}
exec "${CCKEY:-cckey}" warm "$manifest" --cache-dir "$cache" --shard auto \
  -j "${SLURM_CPUS_PER_TASK:-$(nproc)}" -q
