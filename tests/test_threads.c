/* Many threads on shared objects, every result checked. A plain program
 * (see check.h) so that the -DCCKEY_SANITIZE=thread build runs it too. */
#include "check.h"
#include "testing/testing.h"   /* cckey_md5_count */
#include "support.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

enum { THREADS = 8 };

typedef cckey_test_tuple tuple;

static void *run_threads(void *(*fn)(void *), void *args, size_t arg_size)
{
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        CHECK(pthread_create(&th[t], NULL, fn, (char *)args + t * arg_size) == 0, "thread %d", t);
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    return NULL;
}

/* ---- one memo handle, hammered ------------------------------------------- */

enum { POOL = 3 * CCKEY_MEMO_ENTRIES, HOT = 6, CALLS = 3000 };

static struct {
    cckey_source *s;
    tuple ts[POOL];
    char want[POOL][CCKEY_KEY_LEN + 1];
    atomic_size_t wrong, failed, hits;
} memo;

typedef struct seed_arg {
    uint64_t seed;
} seed_arg;

static void *memo_worker(void *p)
{
    uint64_t rng = ((seed_arg *)p)->seed;
    for (int i = 0; i < CALLS; i++) {
        /* Mostly hot tuples (hits racing each other), the rest spread over
         * the pool (misses, inserts and evictions racing the hits). */
        size_t j = cckey_test_below(&rng, 4) ? cckey_test_below(&rng, HOT) : cckey_test_below(&rng, POOL);
        const tuple *t = &memo.ts[j];
        char got[CCKEY_KEY_LEN + 1];
        uint64_t c = cckey_md5_count;
        if (cckey_source_key(got, memo.s, t->device, t->name, t->opts, t->n) != CCKEY_OK)
            atomic_fetch_add(&memo.failed, 1);
        else if (memcmp(got, memo.want[j], CCKEY_KEY_LEN + 1) != 0)
            atomic_fetch_add(&memo.wrong, 1);
        if (cckey_md5_count == c) atomic_fetch_add(&memo.hits, 1);
    }
    return NULL;
}

static void memo_one_handle(void)
{
    uint64_t rng = 16;
    cckey_test_arena a = {0};
    cckey_bytes src = cckey_test_random_bytes(&a, &rng, 777);
    CHECK(cckey_source_new(&memo.s, src, CCKEY_SOURCE_COPY) == CCKEY_OK, "source_new");
    for (int i = 0; i < POOL; i++) {
        /* Every tenth is too big to memoise at all. */
        memo.ts[i] = cckey_test_random_tuple(&a, &rng, i % 10 ? 60 : 700);
        const tuple *t = &memo.ts[i];
        cckey_test_ref_key(memo.want[i], t->device, t->name, src, t->opts, t->n);
    }
    seed_arg args[THREADS];
    for (int t = 0; t < THREADS; t++) args[t].seed = 1000 + (uint64_t)t;
    run_threads(memo_worker, args, sizeof *args);
    CHECK(memo.failed == 0, "%zu calls failed", (size_t)memo.failed);
    CHECK(memo.wrong == 0, "%zu wrong keys", (size_t)memo.wrong);
    /* The hot tuples are most of the calls; a memo that never hit would be
     * correct but useless. */
    CHECK(memo.hits > (size_t)THREADS * CALLS / 4, "only %zu of %d calls hit the memo", (size_t)memo.hits,
          THREADS * CALLS);
    cckey_source_free(memo.s);
    cckey_test_arena_free(&a);
}

/* ---- handles created, used and freed on many threads --------------------- */

static void *handles_worker(void *p)
{
    uint64_t rng = ((seed_arg *)p)->seed;
    cckey_test_arena a = {0};
    for (int h = 0; h < 30; h++) {
        cckey_bytes src = cckey_test_random_bytes(&a, &rng, cckey_test_below(&rng, 2000));
        cckey_source *s;
        CHECK(cckey_source_new(&s, src, h % 2 ? CCKEY_SOURCE_BORROW : CCKEY_SOURCE_COPY) == CCKEY_OK, "new");
        for (int i = 0; i < 20; i++) {
            tuple t = cckey_test_random_tuple(&a, &rng, 50);
            char want[CCKEY_KEY_LEN + 1], got[CCKEY_KEY_LEN + 1];
            cckey_test_ref_key(want, t.device, t.name, src, t.opts, t.n);
            for (int r = 0; r < 2; r++) {
                CHECK(cckey_source_key(got, s, t.device, t.name, t.opts, t.n) == CCKEY_OK, "key");
                CHECK(strcmp(got, want) == 0, "handle %d tuple %d", h, i);
            }
        }
        cckey_source_free(s);
    }
    cckey_test_arena_free(&a);
    return NULL;
}

static void memo_many_handles(void)
{
    seed_arg args[THREADS];
    for (int t = 0; t < THREADS; t++) args[t].seed = 2000 + (uint64_t)t;
    run_threads(handles_worker, args, sizeof *args);
}

/* ---- concurrent batches, each multi-threaded ----------------------------- */

enum { BATCH = 3000 };

static struct {
    cckey_tuple t[BATCH];
    char want[BATCH][CCKEY_KEY_LEN + 1];
    cckey_batch_config *shared_cfg;
} batch;

typedef struct batch_arg {
    unsigned threads;
    int use_shared_config;
} batch_arg;

static void *batch_worker(void *p)
{
    batch_arg *ba = p;
    char (*out)[CCKEY_KEY_LEN + 1] = malloc(BATCH * sizeof *out);
    CHECK(out, "malloc");
    cckey_batch_config *cfg = NULL;
    if (ba->use_shared_config) {
        cfg = batch.shared_cfg;
    } else {
        CHECK(cckey_batch_config_new(&cfg) == CCKEY_OK, "config");
        CHECK(cckey_batch_config_set_backend(cfg, CCKEY_BACKEND_CPU) == CCKEY_OK, "backend");
        CHECK(cckey_batch_config_set_threads(cfg, ba->threads) == CCKEY_OK, "threads");
    }
    for (int round = 0; round < 3; round++) {
        cckey_status st = cckey_make_keys(out, batch.t, BATCH, cfg);
        CHECK(st == CCKEY_OK, "%s: %s", cckey_strerror(st), cckey_last_error());
        for (size_t i = 0; i < BATCH; i++) CHECK(strcmp(out[i], batch.want[i]) == 0, "tuple %zu", i);
    }
    if (!ba->use_shared_config) cckey_batch_config_free(cfg);
    free(out);
    return NULL;
}

static void concurrent_batches(int use_shared_config)
{
    uint64_t rng = 3000;
    cckey_test_arena a = {0};
    cckey_bytes devs[3], srcs[20];
    for (int i = 0; i < 3; i++) devs[i] = cckey_test_random_bytes(&a, &rng, 20);
    for (int i = 0; i < 20; i++) srcs[i] = cckey_test_random_bytes(&a, &rng, cckey_test_below(&rng, 5000));
    for (size_t i = 0; i < BATCH; i++) {
        tuple r = cckey_test_random_tuple(&a, &rng, 30);
        batch.t[i] = (cckey_tuple){devs[i % 3], r.name, srcs[cckey_test_below(&rng, 20)], r.opts, r.n};
        cckey_test_ref_key(batch.want[i], batch.t[i].device, batch.t[i].name, batch.t[i].source, r.opts, r.n);
    }
    if (use_shared_config) {
        CHECK(cckey_batch_config_new(&batch.shared_cfg) == CCKEY_OK, "config");
        CHECK(cckey_batch_config_set_backend(batch.shared_cfg, CCKEY_BACKEND_CPU) == CCKEY_OK, "backend");
        CHECK(cckey_batch_config_set_threads(batch.shared_cfg, 2) == CCKEY_OK, "threads");
    }
    batch_arg args[THREADS];
    for (int t = 0; t < THREADS; t++) args[t] = (batch_arg){(unsigned)(t % 3 + 1), use_shared_config};
    run_threads(batch_worker, args, sizeof *args);
    cckey_batch_config_free(batch.shared_cfg);
    batch.shared_cfg = NULL;
    cckey_test_arena_free(&a);
}

static void batches_own_configs(void) { concurrent_batches(0); }
/* The header promises every function is safe on shared objects unless its
 * comment says otherwise, and cckey_make_keys says nothing about configs. */
static void batches_shared_config(void) { concurrent_batches(1); }

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*fn)(void);
    } cases[] = {
        {"memo_one_handle", memo_one_handle},
        {"memo_many_handles", memo_many_handles},
        {"batches_own_configs", batches_own_configs},
        {"batches_shared_config", batches_shared_config},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (argc > 1 && strcmp(argv[1], cases[i].name) != 0) continue;
        fprintf(stderr, "%s...\n", cases[i].name);
        cases[i].fn();
    }
    fprintf(stderr, "ok\n");
    return 0;
}
