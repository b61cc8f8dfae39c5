/* Deterministic, cost-balanced sharding of warm's builds (see shard.h). */
#include "shard.h"
#include "../cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slurm's indices stop below its NO_VAL (0xfffffffe); a shard count at the
 * --shard K/N limit. */
#define ENV_INDEX_MAX 0xfffffffdUL
#define SHARDS_MAX 1000000UL

/* An index variable: 1 with *out set, 0 when unset or empty, -1 with why
 * naming the variable and its value when that is not a whole number from
 * lo to ENV_INDEX_MAX. */
static int env_index(const char *name, unsigned long lo, unsigned long *out, char *why, size_t why_len)
{
    const char *v = getenv(name);
    if (!v || !*v) return 0;
    if (cli_parse_uint(v, lo, ENV_INDEX_MAX, out)) return 1;
    snprintf(why, why_len, "--shard auto: %s is \"%.40s\", not %s (a whole number, %s)", name, v,
             lo ? "a step or count" : "an array index", lo ? "1 or more" : "0 or more");
    return -1;
}

/* Schedulers and CI systems that say which of N parallel jobs this is, in
 * the order --shard auto asks them. A NULL total takes N from --shards (a
 * Kubernetes Indexed Job tells its pods no count); base is the first index
 * (GitLab counts from 1). GitHub Actions exports nothing: its workflow sets
 * the CCKEY_ pair from strategy.job-index and strategy.job-total. */
static const struct index_source {
    const char *index, *total;
    unsigned long base;
} slurm_source = {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", 0}, index_sources[] = {
    {"JOB_COMPLETION_INDEX", NULL, 0},                            /* Kubernetes Indexed Job */
    {"CCKEY_SHARD_INDEX", "CCKEY_SHARD_COUNT", 0},                /* GitHub Actions matrix, by hand */
    {"CI_NODE_INDEX", "CI_NODE_TOTAL", 1},                        /* GitLab CI parallel: */
    {"CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0},                /* CircleCI parallelism */
    {"BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0}, /* Buildkite parallelism */
};

/* The job count of a source: its total variable, or --shards; both must
 * agree. */
static int source_count(const struct index_source *s, unsigned shards, unsigned long *count, char *why,
                        size_t why_len)
{
    int has = s->total ? env_index(s->total, 1, count, why, why_len) : 0;
    if (has < 0) return -1;
    if (!has && !shards) {
        snprintf(why, why_len, "--shard auto with %s needs %s%s--shards N", s->index, s->total ? s->total : "",
                 s->total ? " or " : "");
        return -1;
    }
    if (has && shards && *count != shards) {
        snprintf(why, why_len, "--shard auto: --shards %u disagrees with %s %lu", shards, s->total, *count);
        return -1;
    }
    if (!has) *count = shards;
    if (*count > SHARDS_MAX) {
        snprintf(why, why_len, "--shard auto: %lu jobs is more than %lu shards", *count, SHARDS_MAX);
        return -1;
    }
    return 0;
}

/* A Slurm array task's shard: its rank among MIN, MIN + STEP, ..., MAX
 * (--array=0-10:2 runs tasks 0, 2, ..., 10: shards 0 to 5 of 6; --array=5-9
 * tasks 5 to 9: shards 0 to 4; a %limit changes neither). Without _STEP (old
 * Slurm) the step is what MIN, MAX and COUNT imply. An array of listed
 * indices (--array=1,2,7) is no such range: refused, not guessed. */
static int parse_slurm(unsigned long id, unsigned shards, cli_shard *out, char *why, size_t why_len)
{
    unsigned long count, min = 0, max = 0, step = 1;
    if (source_count(&slurm_source, shards, &count, why, why_len) != 0) return -1;
    int has_min = env_index("SLURM_ARRAY_TASK_MIN", 0, &min, why, why_len);
    int has_max = has_min < 0 ? -1 : env_index("SLURM_ARRAY_TASK_MAX", 0, &max, why, why_len);
    int has_step = has_max < 0 ? -1 : env_index("SLURM_ARRAY_TASK_STEP", 1, &step, why, why_len);
    if (has_step < 0) return -1;
    if (!has_step && has_max && count > 1 && max > min && (max - min) % (count - 1) == 0)
        step = (max - min) / (count - 1);
    if (has_max && (max < min || (max - min) / step != count - 1)) {
        snprintf(why, why_len, "--shard auto: the Slurm array %lu-%lu:%lu does not hold SLURM_ARRAY_TASK_COUNT "
                 "%lu tasks (an array of listed indices has no shard order: give each task --shard K/N)",
                 min, max, step, count);
        return -1;
    }
    if (id < min || (id - min) % step || (id - min) / step >= count) {
        snprintf(why, why_len, "--shard auto: task %lu is not in the array %lu-%lu:%lu", id, min,
                 min + step * (count - 1), step);
        return -1;
    }
    out->k = (unsigned)((id - min) / step), out->n = (unsigned)count;
    return 0;
}

static int parse_source(const struct index_source *s, unsigned long id, unsigned shards, cli_shard *out, char *why,
                        size_t why_len)
{
    unsigned long count;
    if (source_count(s, shards, &count, why, why_len) != 0) return -1;
    if (id < s->base || id - s->base >= count) {
        snprintf(why, why_len, "--shard auto: %s %lu is not %s %lu to %lu (of %lu jobs)", s->index, id,
                 s->base ? "from" : "in", s->base, s->base + count - 1, count);
        return -1;
    }
    out->k = (unsigned)(id - s->base), out->n = (unsigned)count;
    return 0;
}

static int parse_auto(unsigned shards, cli_shard *out, char *why, size_t why_len)
{
    unsigned long id;
    int has = env_index("SLURM_ARRAY_TASK_ID", 0, &id, why, why_len);
    if (has) return has < 0 ? -1 : parse_slurm(id, shards, out, why, why_len);
    for (size_t i = 0; i < sizeof index_sources / sizeof *index_sources; i++) {
        if ((has = env_index(index_sources[i].index, 0, &id, why, why_len)) < 0) return -1;
        if (has) return parse_source(&index_sources[i], id, shards, out, why, why_len);
    }
    snprintf(why, why_len, "--shard auto: no job index is set (SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX, "
                           "CCKEY_SHARD_INDEX, CI_NODE_INDEX, CIRCLE_NODE_INDEX or BUILDKITE_PARALLEL_JOB)");
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
