/* Memo candidates: cckey_source_key on a warm handle (every call a hit), on
 * one thread and on two threads sharing the handle. The naive loop and the
 * OpenSSL key loop on the same tuples come from the other candidate files. */
#include "bench.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

typedef struct memo_run {
    const bench_workload *w;
    char (*out)[CCKEY_KEY_LEN + 1];
    _Atomic int failed;            /* 1: an error; 2: a key differed */
} memo_run;

static void memo_worker(void *arg, unsigned tid)
{
    memo_run *r = arg;
    const bench_workload *w = r->w;
    enum { MAX_TUPLES = 64 };
    char local[MAX_TUPLES][CCKEY_KEY_LEN + 1];
    /* Thread 0 writes the buffer the harness cross-checks; the others check
     * their own keys here. */
    char (*keys)[CCKEY_KEY_LEN + 1] = tid == 0 ? r->out : local;
    if (tid != 0 && w->n > MAX_TUPLES) {
        atomic_store(&r->failed, 1);
        return;
    }
    for (unsigned p = 0; p < w->memo_passes; p++)
        for (size_t i = 0; i < w->n; i++) {
            const cckey_tuple *t = &w->tuples[i];
            if (cckey_source_key(keys[i], w->memo, t->device, t->name, t->options, t->n_options) != CCKEY_OK) {
                atomic_store(&r->failed, 1);
                return;
            }
        }
    if (tid != 0)
        for (size_t i = 0; i < w->n; i++)
            if (memcmp(keys[i], w->ref_key[i], CCKEY_KEY_LEN + 1) != 0) atomic_store(&r->failed, 2);
}

static uint64_t run_memo(const bench_candidate *c, const bench_workload *w, void *out, char *msg, size_t len)
{
    memo_run r = {.w = w, .out = out};
    atomic_init(&r.failed, 0);
    if (bench_parallel_run(c->threads, memo_worker, &r) != 0) {
        snprintf(msg, len, "could not start %u threads", c->threads);
        return 0;
    }
    int failed = atomic_load(&r.failed);
    if (failed) {
        if (failed == 2)
            snprintf(msg, len, "a second thread got a key that differs from OpenSSL's");
        else
            snprintf(msg, len, "cckey_source_key failed: %s", cckey_last_error());
        return 0;
    }
    return (uint64_t)w->memo_passes * w->n * c->threads;
}

size_t bench_memo_candidates(bench_candidate *list, size_t cap)
{
    const bench_candidate proto[] = {
        {"memo-hit-1t", BENCH_ROLE_CANDIDATE, BENCH_WL_MEMO, BENCH_OUT_KEY, 1, 0, NULL, run_memo},
        {"memo-hit-2t", BENCH_ROLE_CANDIDATE, BENCH_WL_MEMO, BENCH_OUT_KEY, 2, 0, NULL, run_memo},
    };
    size_t n = 0;
    for (size_t i = 0; i < sizeof proto / sizeof *proto && n < cap; i++) list[n++] = proto[i];
    return n;
}
