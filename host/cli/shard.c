/* Deterministic, cost-balanced sharding of warm's builds (see shard.h). */
#include "shard.h"
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool env_uint(const char *name, unsigned long *out)
{
    const char *v = getenv(name);
    return v && cli_parse_uint(v, 0, 1000000, out);
}

static int parse_auto(unsigned shards, cli_shard *out, char *why, size_t why_len)
{
    unsigned long id, count, min = 0;
    if (env_uint("SLURM_ARRAY_TASK_ID", &id)) {
        if (!env_uint("SLURM_ARRAY_TASK_COUNT", &count) && !shards) {
            snprintf(why, why_len, "--shard auto: SLURM_ARRAY_TASK_ID is set but not SLURM_ARRAY_TASK_COUNT "
                                   "(give --shards N)");
            return -1;
        }
        if (shards) count = shards;
        env_uint("SLURM_ARRAY_TASK_MIN", &min);   /* --array=1-3 numbers tasks from 1 */
        if (id < min || id - min >= count) {
            snprintf(why, why_len, "--shard auto: task %lu is outside the array %lu..%lu", id, min, min + count - 1);
            return -1;
        }
        out->k = (unsigned)(id - min), out->n = (unsigned)count;
        return 0;
    }
    if (env_uint("JOB_COMPLETION_INDEX", &id)) {
        if (!shards) {
            snprintf(why, why_len, "--shard auto with JOB_COMPLETION_INDEX needs --shards N (the Job's completions)");
            return -1;
        }
        if (id >= shards) {
            snprintf(why, why_len, "--shard auto: JOB_COMPLETION_INDEX %lu is not below --shards %u", id, shards);
            return -1;
        }
        out->k = (unsigned)id, out->n = shards;
        return 0;
    }
    snprintf(why, why_len, "--shard auto: neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX is set");
    return -1;
}

int cli_shard_parse(const char *arg, unsigned shards, cli_shard *out, char *why, size_t why_len)
{
    out->k = out->n = 0;
    if (strcmp(arg, "auto") == 0) return parse_auto(shards, out, why, why_len);
    const char *slash = strchr(arg, '/');
    unsigned long k, n;
    char kbuf[32];
    if (!slash || (size_t)(slash - arg) >= sizeof kbuf) goto bad;
    memcpy(kbuf, arg, (size_t)(slash - arg));
    kbuf[slash - arg] = '\0';
    if (!cli_parse_uint(kbuf, 0, 999999, &k) || !cli_parse_uint(slash + 1, 1, 1000000, &n) || k >= n) goto bad;
    if (shards && shards != n) {
        snprintf(why, why_len, "--shard %s disagrees with --shards %u", arg, shards);
        return -1;
    }
    out->k = (unsigned)k, out->n = (unsigned)n;
    return 0;
bad:
    snprintf(why, why_len, "--shard wants K/N with 0 <= K < N (e.g. 0/4), or auto; not \"%s\"", arg);
    return -1;
}

uint64_t cli_shard_hash(uint64_t h, const void *p, size_t n)
{
    if (!h) h = 0xcbf29ce484222325u;
    for (const uint8_t *b = p; n--; b++) h = (h ^ *b) * 0x100000001b3u;
    return h;
}

typedef struct unit {
    uint64_t hash, cost;
    size_t index;
} unit;

static int by_cost(const void *a, const void *b)
{
    const unit *x = a, *y = b;
    if (x->cost != y->cost) return x->cost > y->cost ? -1 : 1;
    if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

int cli_shard_assign(const cli_shard *s, const uint64_t *hash, const uint64_t *cost, size_t n, bool *mine)
{
    unit *u = malloc((n ? n : 1) * sizeof *u);
    uint64_t *load = calloc(s->n, sizeof *load);
    if (!u || !load) {
        free(u), free(load);
        return -1;
    }
    for (size_t i = 0; i < n; i++) u[i] = (unit){hash[i], cost[i], i};
    qsort(u, n, sizeof *u, by_cost);
    /* Largest first to the least loaded shard; equal loads go by the unit's
     * hash, so equal-cost units spread evenly instead of filling shard 0. */
    for (size_t i = 0; i < n; i++) {
        unsigned best = (unsigned)(u[i].hash % s->n);
        for (unsigned j = 0; j < s->n; j++)
            if (load[j] < load[best]) best = j;
        load[best] += u[i].cost;
        mine[u[i].index] = best == s->k;
    }
    free(u), free(load);
    return 0;
}
