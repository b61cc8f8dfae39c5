/* warm --shard K/N: which tuples one of N workers takes. The unit is a
 * build (tuples of one language, device, source and options share one
 * compile), so no build is split across shards. Units are dealt out by
 * estimated cost, largest first, each to the least loaded shard (ties: the
 * unit's hash, then the lower shard), which every shard computes alike from
 * the same manifest: the shards are disjoint and together cover it all. */
#ifndef CCKEY_CLI_SHARD_H
#define CCKEY_CLI_SHARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cli_shard {
    unsigned k, n;   /* this worker is shard k (0-based) of n; n == 0: no sharding */
} cli_shard;

/* "K/N" (K from 0 to N-1, digits only), or "auto": a Slurm array task's
 * rank among SLURM_ARRAY_TASK_MIN, MIN + STEP, ..., MAX, of
 * SLURM_ARRAY_TASK_COUNT (or --shards N, which must agree), else
 * Kubernetes' JOB_COMPLETION_INDEX of shards (--shards N). A variable set
 * to something that is no index, or an array that is no such range, is an
 * error naming it. 0, or -1 with why. */
int cli_shard_parse(const char *arg, unsigned shards, cli_shard *out, char *why, size_t why_len);

/* FNV-1a over bytes, continuing from h (0 to start): a stable unit hash. */
uint64_t cli_shard_hash(uint64_t h, const void *p, size_t n);

/* For n units with a hash and an estimated cost each, mine[i] says whether
 * unit i falls in shard s. */
int cli_shard_assign(const cli_shard *s, const uint64_t *hash, const uint64_t *cost, size_t n, bool *mine);

#endif
