#!/usr/bin/env bash
# The entry point of warm-job.yaml's pods: warm shard JOB_COMPLETION_INDEX of
# CCKEY_SHARDS of the manifest into a scratch cache and the shared remote
# (CCKEY_REMOTE). CCKEY names the cckey binary (default: cckey on PATH).
set -euo pipefail
manifest=${1:?usage: warm-shard.sh MANIFEST}
: "${JOB_COMPLETION_INDEX:?run this in an Indexed Job (or set JOB_COMPLETION_INDEX)}"
: "${CCKEY_SHARDS:?set CCKEY_SHARDS to the number of completions of the Job}"
: "${CCKEY_REMOTE:?set CCKEY_REMOTE to the shared cache}"
cache=${CCKEY_CACHE_DIR:-$(mktemp -d)}
exec "${CCKEY:-cckey}" warm "$manifest" --cache-dir "$cache" --shard auto --shards "$CCKEY_SHARDS" -q
