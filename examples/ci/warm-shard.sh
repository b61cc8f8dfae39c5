#!/usr/bin/env bash
# One job of a parallel CI warm: warm this job's shard of the manifest into a
# scratch cache and the shared remote (CCKEY_REMOTE). `cckey warm --shard
# auto` reads the job's index from the CI system:
#   GitHub Actions (strategy.matrix): CCKEY_SHARD_INDEX (0..N-1) and
#     CCKEY_SHARD_COUNT, which the workflow sets from strategy.job-index and
#     strategy.job-total (GitHub exports no index variable of its own);
#   GitLab CI (parallel: N): CI_NODE_INDEX (1..N) and CI_NODE_TOTAL;
#   CircleCI (parallelism): CIRCLE_NODE_INDEX and CIRCLE_NODE_TOTAL;
#   Buildkite (parallelism): BUILDKITE_PARALLEL_JOB and _JOB_COUNT.
# Every job must be given the same manifest. CCKEY names the cckey binary
# (default: cckey on PATH).
set -euo pipefail
manifest=${1:?usage: warm-shard.sh MANIFEST}
: "${CCKEY_REMOTE:?set CCKEY_REMOTE to the shared cache, e.g. redis://cache-host:6379}"
cache=${CCKEY_CACHE_DIR:-$(mktemp -d)}
exec "${CCKEY:-cckey}" warm "$manifest" --cache-dir "$cache" --shard auto -q
