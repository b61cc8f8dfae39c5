/* Key candidates: the naive loop (one cckey_make_key per tuple) and the
 * batch API on each backend. Device backends are probed at run time, so a
 * build with OpenCL or CUDA compiled in still runs where neither works. */
#include "bench.h"
#include "cckey_advanced.h"   /* cckey_backend_digests: can the backend run here */

#include <stdio.h>
#include <string.h>

static uint64_t run_naive(const bench_candidate *c, const bench_workload *w, void *out, char *msg, size_t len)
{
    (void)c;
    char (*keys)[CCKEY_KEY_LEN + 1] = out;
    uint64_t passes = w->kind == BENCH_WL_MEMO ? (w->memo_passes / 64 ? w->memo_passes / 64 : 1) : 1;
    for (uint64_t p = 0; p < passes; p++)
        for (size_t i = 0; i < w->n; i++) {
            const cckey_tuple *t = &w->tuples[i];
            cckey_status st = cckey_make_key(keys[i], t->device, t->name, t->source, t->options, t->n_options);
            if (st != CCKEY_OK) {
                snprintf(msg, len, "cckey_make_key: %s: %s", cckey_strerror(st), cckey_last_error());
                return 0;
            }
        }
    return passes * w->n;
}

uint64_t bench_run_batch(const bench_candidate *c, const bench_workload *w, void *out, char *msg, size_t len)
{
    cckey_batch_config *cfg = NULL;
    cckey_status st = cckey_batch_config_new(&cfg);
    if (st == CCKEY_OK) st = cckey_batch_config_set_backend(cfg, (cckey_backend_kind)c->param);
    if (st == CCKEY_OK) st = cckey_batch_config_set_threads(cfg, c->threads);
    if (st == CCKEY_OK) st = cckey_make_keys(out, w->tuples, w->n, cfg);
    if (st != CCKEY_OK)
        snprintf(msg, len, "cckey_make_keys: %s: %s", cckey_strerror(st), cckey_last_error());
    else if (cfg && *cckey_batch_config_warning(cfg))
        snprintf(msg, len, "ran on %s; warning: %s", cckey_batch_config_used(cfg), cckey_batch_config_warning(cfg));
    else if (cfg)
        snprintf(msg, len, "ran on %s", cckey_batch_config_used(cfg));
    cckey_batch_config_free(cfg);
    return st == CCKEY_OK ? w->n : 0;
}

const char *bench_backend_unavailable(const bench_candidate *c, char *why, size_t len)
{
    cckey_backend_kind kind = (cckey_backend_kind)c->param;
    if (kind == CCKEY_BACKEND_AUTO) return NULL;
    if (!strstr(cckey_build_backends(), cckey_backend_name(kind))) return "not compiled into this build";
    /* No message: only whether the backend can run here (the public check). */
    cckey_batch_config *cfg = NULL;
    if (cckey_batch_config_new(&cfg) != CCKEY_OK) return "out of memory";
    cckey_status st = cckey_batch_config_set_backend(cfg, kind);
    if (st == CCKEY_OK) st = cckey_backend_digests(cfg, NULL, 0, NULL);
    if (st != CCKEY_OK) snprintf(why, len, "%s", cckey_last_error());
    cckey_batch_config_free(cfg);
    return st == CCKEY_OK ? NULL : *why ? why : "unavailable";
}

size_t bench_key_candidates(bench_candidate *list, size_t cap, unsigned threads)
{
    const int all = BENCH_WL_MSGS | BENCH_WL_SUITE;
    const bench_candidate proto[] = {
        {"naive-make_key", BENCH_ROLE_NAIVE, BENCH_WL_MSGS | BENCH_WL_SUITE | BENCH_WL_MEMO, BENCH_OUT_KEY, 1, 0, NULL, run_naive},
        {"batch-cpu-1t", BENCH_ROLE_CANDIDATE, BENCH_WL_SUITE, BENCH_OUT_KEY, 1, CCKEY_BACKEND_CPU, bench_backend_unavailable, bench_run_batch},
        {"batch-cpu-mt", BENCH_ROLE_CANDIDATE, all, BENCH_OUT_KEY, threads, CCKEY_BACKEND_CPU, bench_backend_unavailable, bench_run_batch},
        {"batch-auto", BENCH_ROLE_CANDIDATE, BENCH_WL_SUITE, BENCH_OUT_KEY, threads, CCKEY_BACKEND_AUTO, bench_backend_unavailable, bench_run_batch},
        {"batch-opencl", BENCH_ROLE_CANDIDATE, all, BENCH_OUT_KEY, threads, CCKEY_BACKEND_OPENCL, bench_backend_unavailable, bench_run_batch},
        {"batch-cuda", BENCH_ROLE_CANDIDATE, all, BENCH_OUT_KEY, threads, CCKEY_BACKEND_CUDA, bench_backend_unavailable, bench_run_batch},
    };
    size_t n = 0;
    for (size_t i = 0; i < sizeof proto / sizeof *proto && n < cap; i++) list[n++] = proto[i];
    return n;
}
