/* cckey_make_keys against cckey_make_key (itself held to the Python vectors
 * in test_vectors.c) on batches shaped to stress deduplication. */
#include "support.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

typedef char key_t_[CCKEY_KEY_LEN + 1];

/* Run the batch and compare every key with cckey_make_key's. */
static void check_batch(const cckey_tuple *t, size_t n, cckey_batch_config *cfg, const char *what)
{
    key_t_ *out = malloc((n ? n : 1) * sizeof *out);
    memset(out, '#', (n ? n : 1) * sizeof *out);
    cckey_status st = cckey_make_keys(out, t, n, cfg);
    cr_assert_eq(st, CCKEY_OK, "%s: %s: %s", what, cckey_strerror(st), cckey_last_error());
    for (size_t i = 0; i < n; i++) {
        key_t_ want;
        cr_assert_eq(cckey_make_key(want, t[i].device, t[i].name, t[i].source, t[i].options, t[i].n_options),
                     CCKEY_OK);
        cr_assert_eq(out[i][CCKEY_KEY_LEN], '\0', "%s: tuple %zu unterminated", what, i);
        cr_assert_str_eq(out[i], want, "%s: tuple %zu of %zu", what, i, n);
    }
    free(out);
}

static cckey_batch_config *config(cckey_backend_kind kind, unsigned threads)
{
    cckey_batch_config *cfg;
    cr_assert_eq(cckey_batch_config_new(&cfg), CCKEY_OK);
    cr_assert_eq(cckey_batch_config_set_backend(cfg, kind), CCKEY_OK);
    cr_assert_eq(cckey_batch_config_set_threads(cfg, threads), CCKEY_OK);
    return cfg;
}

/* check_batch on a fresh CPU config with that many threads. */
static void check_on_cpu(const cckey_tuple *t, size_t n, unsigned threads, const char *what)
{
    cckey_batch_config *cfg = config(CCKEY_BACKEND_CPU, threads);
    check_batch(t, n, cfg, what);
    cckey_batch_config_free(cfg);
}

/* A batch drawn from small pools, so most fields repeat: sometimes the same
 * pointer, sometimes a copy of equal bytes at another address. */
static cckey_tuple *shared_batch(cckey_test_arena *a, uint64_t *rng, size_t n)
{
    enum { DEVS = 3, NAMES = 7, SRCS = 5, SETS = 6 };
    cckey_bytes dev[DEVS], name[NAMES], src[SRCS];
    cckey_option *set[SETS];
    size_t set_n[SETS];
    for (int i = 0; i < DEVS; i++) dev[i] = cckey_test_random_bytes(a, rng, cckey_test_below(rng, 40));
    for (int i = 0; i < NAMES; i++) name[i] = cckey_test_random_bytes(a, rng, cckey_test_below(rng, 20));
    for (int i = 0; i < SRCS; i++) src[i] = cckey_test_random_bytes(a, rng, cckey_test_below(rng, 3000));
    for (int s = 0; s < SETS; s++) {
        static const size_t sizes[SETS] = {0, 1, 2, 5, 17, 40};
        set_n[s] = sizes[s];
        set[s] = cckey_test_alloc(a, (sizes[s] ? sizes[s] : 1) * sizeof *set[s]);
        for (size_t i = 0; i < sizes[s]; i++)
            set[s][i] = (cckey_option){cckey_test_random_bytes(a, rng, cckey_test_below(rng, 3)),
                                       cckey_test_random_bytes(a, rng, cckey_test_below(rng, 8))};
    }
    cckey_tuple *t = cckey_test_alloc(a, n * sizeof *t);
    for (size_t i = 0; i < n; i++) {
        int copy = (int)cckey_test_below(rng, 3) == 0;
        cckey_bytes d = dev[cckey_test_below(rng, DEVS)], nm = name[cckey_test_below(rng, NAMES)],
                    s = src[cckey_test_below(rng, SRCS)];
        size_t k = cckey_test_below(rng, SETS);
        const cckey_option *o = set[k];
        if (copy) {
            d = cckey_test_dup(a, d);
            nm = cckey_test_dup(a, nm);
            s = cckey_test_dup(a, s);
            cckey_option *c = cckey_test_alloc(a, (set_n[k] ? set_n[k] : 1) * sizeof *c);
            for (size_t j = 0; j < set_n[k]; j++)
                c[j] = (cckey_option){cckey_test_dup(a, set[k][j].key), cckey_test_dup(a, set[k][j].value)};
            o = c;
        }
        t[i] = (cckey_tuple){d, nm, s, set_n[k] || copy ? o : NULL, set_n[k]};
    }
    return t;
}

Test(batch, empty)
{
    cr_assert_eq(cckey_make_keys(NULL, NULL, 0, NULL), CCKEY_OK);
    key_t_ out;
    memset(out, '#', sizeof out);
    cckey_tuple t = {{"d", 1}, {"n", 1}, {"s", 1}, NULL, 0};
    cckey_batch_config *cfg = config(CCKEY_BACKEND_CPU, 1);
    cr_assert_eq(cckey_make_keys(&out, &t, 0, cfg), CCKEY_OK);
    cr_assert_eq(out[0], '#', "an empty batch wrote a key");
    cckey_batch_config_free(cfg);
}

Test(batch, one_tuple)
{
    cckey_option o = {{"arch", 4}, {"sm_90", 5}};
    cckey_tuple t[] = {{{"NVIDIA H200|580.159.04", 22}, {"vec_add", 7}, {"x", 1}, &o, 1}};
    check_batch(t, 1, NULL, "n=1, default config");
    cckey_batch_config *cfg = config(CCKEY_BACKEND_CPU, 3);
    check_batch(t, 1, cfg, "n=1, cpu");
    cr_assert_str_eq(cckey_batch_config_used(cfg), "cpu");
    cr_assert_str_eq(cckey_batch_config_warning(cfg), "");
    cckey_batch_config_free(cfg);
}

Test(batch, empty_fields_both_forms)
{
    cckey_option o[] = {{{NULL, 0}, {"", 0}}, {{"", 0}, {NULL, 0}}};
    cckey_tuple t[] = {
        {{NULL, 0}, {NULL, 0}, {NULL, 0}, NULL, 0},
        {{"", 0}, {"", 0}, {"", 0}, o, 0},   /* options pointer with n = 0 */
        {{"", 0}, {NULL, 0}, {"", 0}, o, 2},
        {{NULL, 0}, {"", 0}, {NULL, 0}, o + 1, 1},
    };
    check_batch(t, 4, NULL, "empties");
    key_t_ out[4];
    cr_assert_eq(cckey_make_keys(out, t, 4, NULL), CCKEY_OK);
    cr_assert_str_eq(out[0], out[1], "NULL and \"\" are the same empty string");
    cr_assert_str_neq(out[2], out[3], "one empty pair is not two");
}

Test(batch, random_shared_fields_every_thread_count)
{
    uint64_t rng = 501;
    static const unsigned threads[] = {1, 2, 7, 0};
    for (int round = 0; round < 6; round++) {
        cckey_test_arena a = {0};
        size_t n = 1 + cckey_test_below(&rng, 3000);
        cckey_tuple *t = shared_batch(&a, &rng, n);
        for (size_t k = 0; k < sizeof threads / sizeof *threads; k++) check_on_cpu(t, n, threads[k], "shared fields");
        check_batch(t, n, NULL, "shared fields, default config");
        cckey_test_arena_free(&a);
    }
}

Test(batch, option_counts_and_orders)
{
    /* 0, 1 and many pairs (past the insertion sort's 16), duplicate keys,
     * and the same set in different orders. */
    uint64_t rng = 502;
    cckey_test_arena a = {0};
    static const size_t counts[] = {0, 1, 2, 15, 16, 17, 33, 100, 1000};
    enum { PER = 4 };
    size_t nc = sizeof counts / sizeof *counts;
    cckey_tuple *t = cckey_test_alloc(&a, nc * PER * sizeof *t);
    for (size_t c = 0; c < nc; c++) {
        size_t n = counts[c];
        cckey_option *base = cckey_test_alloc(&a, (n ? n : 1) * sizeof *base);
        for (size_t i = 0; i < n; i++) {
            uint8_t *k = cckey_test_alloc(&a, 2);
            k[0] = (uint8_t)("aAb\x80"[cckey_test_below(&rng, 4)]);
            k[1] = (uint8_t)cckey_test_below(&rng, 3);
            base[i] = (cckey_option){{k, cckey_test_below(&rng, 3)}, cckey_test_random_bytes(&a, &rng, 4)};
        }
        for (int v = 0; v < PER; v++) {
            cckey_option *o = cckey_test_alloc(&a, (n ? n : 1) * sizeof *o);
            memcpy(o, base, n * sizeof *o);
            /* v 0: as is; 1: reversed; 2, 3: shuffled. */
            for (size_t i = 0; v && i + 1 < n; i++) {
                size_t j = v == 1 ? n - 1 - i : i + cckey_test_below(&rng, n - i);
                if (v == 1 && j <= i) break;
                cckey_option tmp = o[i];
                o[i] = o[j];
                o[j] = tmp;
            }
            t[c * PER + (size_t)v] = (cckey_tuple){{"dev", 3}, {"k", 1}, {"src", 3}, o, n};
        }
    }
    for (unsigned th = 1; th <= 2; th++) check_on_cpu(t, nc * PER, th, "option counts");
    cckey_test_arena_free(&a);
}

Test(batch, large)
{
    /* ~200k tuples, mostly distinct names: the intern tables grow many
     * times and the formatting runs on several threads. */
    enum { N = 200000 };
    uint64_t rng = 503;
    cckey_test_arena a = {0};
    cckey_tuple *t = cckey_test_alloc(&a, N * sizeof *t);
    char *names = cckey_test_alloc(&a, (size_t)N * 16);
    cckey_bytes srcs[50];
    for (int i = 0; i < 50; i++) srcs[i] = cckey_test_random_bytes(&a, &rng, cckey_test_below(&rng, 4000));
    cckey_option opts[3] = {{{"arch", 4}, {"sm_90", 5}}, {{"-O", 2}, {"3", 1}}, {{"-O", 2}, {"2", 1}}};
    for (size_t i = 0; i < N; i++) {
        int len = snprintf(names + 16 * i, 16, "k%zu", i % 150000);
        t[i] = (cckey_tuple){{"NVIDIA H200|580.159.04", 22}, {names + 16 * i, (size_t)len},
                             srcs[cckey_test_below(&rng, 50)], opts + cckey_test_below(&rng, 2),
                             cckey_test_below(&rng, 3) % 2 + (i % 5 == 0)};
    }
    check_on_cpu(t, N, 0, "200k tuples");
    check_batch(t, N, NULL, "200k tuples, default config");
    cckey_test_arena_free(&a);
}

Test(batch, verify_modes_on_cpu)
{
    uint64_t rng = 504;
    cckey_test_arena a = {0};
    cckey_tuple *t = shared_batch(&a, &rng, 500);
    for (int m = CCKEY_VERIFY_NONE; m <= CCKEY_VERIFY_SAMPLE; m++) {
        cckey_batch_config *cfg = config(CCKEY_BACKEND_CPU, 2);
        cr_assert_eq(cckey_batch_config_set_verify(cfg, (cckey_verify_mode)m), CCKEY_OK);
        check_batch(t, 500, cfg, "verify on cpu");
        cckey_batch_config_free(cfg);
    }
    cckey_test_arena_free(&a);
}

Test(batch, auto_backend_is_right)
{
    uint64_t rng = 505;
    cckey_test_arena a = {0};
    cckey_tuple *t = shared_batch(&a, &rng, 2000);
    cckey_batch_config *cfg = config(CCKEY_BACKEND_AUTO, 0);
    check_batch(t, 2000, cfg, "auto");
    cr_assert(cckey_batch_config_used(cfg)[0] != '\0', "used is empty after a batch");
    cckey_batch_config_free(cfg);
    cckey_test_arena_free(&a);
}

static pthread_t caller;
static int progress_calls, progress_bad;

static void on_progress(void *user, uint64_t done, uint64_t total)
{
    uint64_t *last = user;
    progress_calls++;
    if (!pthread_equal(pthread_self(), caller) || done > total || done < *last) progress_bad++;
    *last = done;
}

Test(batch, progress_from_the_calling_thread)
{
    uint64_t rng = 506;
    cckey_test_arena a = {0};
    cckey_tuple *t = shared_batch(&a, &rng, 3000);
    for (unsigned th = 1; th <= 4; th += 3) {
        uint64_t last = 0;
        caller = pthread_self();
        progress_calls = progress_bad = 0;
        cckey_batch_config *cfg = config(CCKEY_BACKEND_CPU, th);
        cr_assert_eq(cckey_batch_config_set_progress(cfg, on_progress, &last), CCKEY_OK);
        check_batch(t, 3000, cfg, "with progress");
        cr_assert_eq(progress_bad, 0, "progress called off the calling thread, or went backwards");
        if (th == 1) cr_assert(progress_calls > 0, "a single-threaded batch never reported progress");
        cckey_batch_config_free(cfg);
    }
    cckey_test_arena_free(&a);
}

Test(batch, one_config_many_batches)
{
    uint64_t rng = 507;
    cckey_batch_config *cfg = config(CCKEY_BACKEND_CPU, 2);
    for (int round = 0; round < 5; round++) {
        cckey_test_arena a = {0};
        size_t n = 1 + cckey_test_below(&rng, 500);
        check_batch(shared_batch(&a, &rng, n), n, cfg, "reused config");
        cckey_test_arena_free(&a);
    }
    cckey_batch_config_free(cfg);
}

/* The config keeps a batch's scratch tables for the next: batches that
 * grow, shrink and run at the same time on one config all stay right. */
typedef struct shared_cfg_run {
    cckey_batch_config *cfg;
    uint64_t seed;
} shared_cfg_run;

static void *batches_on_one_config(void *arg)
{
    shared_cfg_run *r = arg;
    static const size_t sizes[] = {40000, 7, 70000, 300, 20000};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        cckey_test_arena a = {0};
        check_batch(shared_batch(&a, &r->seed, sizes[k]), sizes[k], r->cfg, "scratch kept by the config");
        cckey_test_arena_free(&a);
    }
    return NULL;
}

Test(batch, scratch_kept_across_sizes_and_threads)
{
    cckey_batch_config *cfg = config(CCKEY_BACKEND_CPU, 2);
    shared_cfg_run one = {cfg, 509};
    batches_on_one_config(&one);
    pthread_t th[3];
    shared_cfg_run runs[3] = {{cfg, 511}, {cfg, 513}, {cfg, 515}};
    for (int i = 0; i < 3; i++) cr_assert_eq(pthread_create(&th[i], NULL, batches_on_one_config, &runs[i]), 0);
    for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
    cckey_batch_config_free(cfg);
}

Test(batch, explicit_cuda_is_unavailable_here)
{
    cckey_tuple t = {{"d", 1}, {"n", 1}, {"s", 1}, NULL, 0};
    key_t_ out;
    cckey_batch_config *cfg = config(CCKEY_BACKEND_CUDA, 1);
    cckey_status st = cckey_make_keys(&out, &t, 1, cfg);
    if (access("/dev/nvidiactl", F_OK) == 0 && st == CCKEY_OK) {
        /* A machine with an NVIDIA driver may run it: then it must be right. */
        check_batch(&t, 1, cfg, "cuda");
    } else {
        cr_assert_eq(st, CCKEY_ERR_UNAVAILABLE, "got %s", cckey_strerror(st));
        cr_assert(cckey_last_error()[0] != '\0', "no reason given");
        cr_assert(strstr(cckey_last_error(), "cuda") || strstr(cckey_last_error(), "CUDA"),
                  "the reason \"%s\" does not name the backend", cckey_last_error());
    }
    cckey_batch_config_free(cfg);
}

/* Deduplication hashes long strings on a sample; equality is still decided
 * byte for byte. Sources of one length that agree everywhere but at one
 * byte (at every offset class: the ends, the sampled windows, between them)
 * must each keep their own digest, also when they share the hash. */
Test(batch, long_near_duplicates_stay_distinct)
{
    enum { LEN = 100000, VARIANTS = 64 };
    uint8_t *base = malloc(LEN);
    uint8_t *copies = malloc((size_t)VARIANTS * LEN);
    cckey_tuple t[VARIANTS + 1];
    for (size_t i = 0; i < LEN; i++) base[i] = (uint8_t)(i * 31 + 7);
    for (size_t v = 0; v < VARIANTS; v++) {
        uint8_t *c = copies + v * LEN;
        memcpy(c, base, LEN);
        c[(v * 1571 + 3) % LEN] ^= 0x5a;   /* one byte apart from the base */
        t[v] = (cckey_tuple){.device = {"d", 1}, .name = {"k", 1}, .source = {c, LEN}};
    }
    t[VARIANTS] = (cckey_tuple){.device = {"d", 1}, .name = {"k", 1}, .source = {base, LEN}};
    for (unsigned threads = 1; threads <= 2; threads++) check_on_cpu(t, VARIANTS + 1, threads, "near duplicates");
    free(base);
    free(copies);
}

/* A CPU batch of more than a block (host/batch/plan.h: 8,192 tuples) is
 * planned block by block, a block per thread at a time. A bad tuple is
 * reported by its index in the whole batch, and it is the first one, with
 * any thread count, wherever the blocks fall. */
Test(batch, blocks_report_the_first_bad_tuple)
{
    enum { N = 100000 };
    cckey_tuple *t = calloc(N, sizeof *t);
    key_t_ *out = malloc(N * sizeof *out);
    for (size_t i = 0; i < N; i++) t[i] = (cckey_tuple){{"d", 1}, {"n", 1}, {"s", 1}, NULL, 0};
    static const size_t bad[][2] = {{99999, 99999}, {70001, 93000}, {8192, 50000}, {0, 99998}};
    static const unsigned threads[] = {1, 2, 3, 8};
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
        t[bad[b][0]].name = (cckey_bytes){NULL, 3};
        t[bad[b][1]].source = (cckey_bytes){NULL, 1};
        char want[32];
        snprintf(want, sizeof want, "tuple %zu ", bad[b][0]);
        for (size_t k = 0; k < sizeof threads / sizeof *threads; k++) {
            cckey_batch_config *cfg = config(CCKEY_BACKEND_CPU, threads[k]);
            cr_assert_eq(cckey_make_keys(out, t, N, cfg), CCKEY_ERR_INVALID_ARG);
            cr_assert(strstr(cckey_last_error(), want), "%u threads: \"%s\" does not name %s", threads[k],
                      cckey_last_error(), want);
            cckey_batch_config_free(cfg);
        }
        t[bad[b][0]].name = (cckey_bytes){"n", 1};
        t[bad[b][1]].source = (cckey_bytes){"s", 1};
    }
    free(t);
    free(out);
}

/* Every tuple shares one long options array: its strings are one tuple's,
 * however many tuples point at it (the one-pass interner sizes its tables
 * by the arrays it has not seen, not by n times the array). */
Test(batch, one_long_options_array_shared_by_every_tuple)
{
    enum { N = 60000, OPTS = 3000 };
    uint64_t rng = 77;
    cckey_test_arena a = {0};
    cckey_option *opts = cckey_test_alloc(&a, OPTS * sizeof *opts);
    for (size_t k = 0; k < OPTS; k++)
        opts[k] = (cckey_option){cckey_test_random_bytes(&a, &rng, 1 + cckey_test_below(&rng, 6)),
                                 cckey_test_random_bytes(&a, &rng, cckey_test_below(&rng, 10))};
    cckey_tuple *t = cckey_test_alloc(&a, N * sizeof *t);
    for (size_t i = 0; i < N; i++) {
        char *name = cckey_test_alloc(&a, 24);
        int len = snprintf(name, 24, "k%zu", i);
        t[i] = (cckey_tuple){{"dev", 3}, {name, (size_t)len}, {"src", 3}, opts, OPTS};
    }
    key_t_ *out = malloc(N * sizeof *out);
    static const unsigned threads[] = {1, 2};
    for (size_t k = 0; k < sizeof threads / sizeof *threads; k++) {
        cckey_batch_config *cfg = config(CCKEY_BACKEND_CPU, threads[k]);
        cckey_status st = cckey_make_keys(out, t, N, cfg);
        cr_assert_eq(st, CCKEY_OK, "%u threads: %s: %s", threads[k], cckey_strerror(st), cckey_last_error());
        for (size_t i = 0; i < N; i += i + 1009 < N ? 1009 : (i + 1 < N ? N - 1 - i : 1)) {
            key_t_ want;
            cr_assert_eq(cckey_make_key(want, t[i].device, t[i].name, t[i].source, opts, OPTS), CCKEY_OK);
            cr_assert_str_eq(out[i], want, "%u threads: tuple %zu", threads[k], i);
        }
        for (size_t i = 1; i < N; i++)
            cr_assert(memcmp(out[i] + 99, out[0] + 99, 32) == 0, "%u threads: tuple %zu's options digest", threads[k], i);
        cckey_batch_config_free(cfg);
    }
    /* Tables sized by N times the array would take gigabytes (and were
     * allocated, and cleared, once per block). Criterion runs each test
     * in a process of its own: this peak is this test's. */
    struct rusage ru;
    cr_assert_eq(getrusage(RUSAGE_SELF, &ru), 0);
    cr_assert_lt(ru.ru_maxrss, 512L * 1024, "peak RSS %ld KiB", ru.ru_maxrss);
    free(out);
    cckey_test_arena_free(&a);
}

/* Long sources recur across blocks: each block takes their digests from the
 * batch's shared cache of long strings, which must tell apart sources of one
 * length that differ in a single byte (most outside the sampled hash, so
 * they share it), copies at other addresses, and a thousand distinct long
 * sources, some of which collide in the direct-mapped cache (they evict
 * each other). Binary keys agree. */
Test(batch, blocks_share_long_digests_exactly)
{
    enum { N = 60000, LEN = 5000, NEAR = 48, MANY = 1000, MANY_LEN = 1100 };
    uint64_t rng = 517;
    cckey_test_arena a = {0};
    uint8_t *base = cckey_test_alloc(&a, LEN), *near = cckey_test_alloc(&a, (size_t)NEAR * LEN);
    for (size_t i = 0; i < LEN; i++) base[i] = (uint8_t)(i * 31 + 7);
    for (size_t v = 0; v < NEAR; v++) {
        memcpy(near + v * LEN, base, LEN);
        near[v * LEN + (v * 1571 + 3) % LEN] ^= 0x5a;
    }
    cckey_bytes many[64];
    for (int i = 0; i < 64; i++) many[i] = cckey_test_random_bytes(&a, &rng, MANY_LEN);
    uint8_t *distinct = cckey_test_alloc(&a, (size_t)MANY * MANY_LEN);
    cckey_tuple *t = cckey_test_alloc(&a, N * sizeof *t);
    char *names = cckey_test_alloc(&a, (size_t)N * 8);
    for (size_t i = 0; i < N; i++) {
        /* One tuple in eight has a long source: fields stay short on
         * average, so the batch goes by blocks. */
        cckey_bytes s = {"s", 1};
        switch (i % 32) {
        case 0: s = (cckey_bytes){near + cckey_test_below(&rng, NEAR) * LEN, LEN}; break;
        case 8: s = cckey_test_below(&rng, 2) ? cckey_test_dup(&a, (cckey_bytes){base, LEN}) : (cckey_bytes){base, LEN}; break;
        case 16: s = many[cckey_test_below(&rng, 64)]; break;
        case 24: {
            /* 1,000 distinct sources, most used twice, 32,000 tuples apart. */
            uint8_t *d = distinct + (i / 32 % MANY) * MANY_LEN;
            memcpy(d, many[i / 32 % 64].ptr, MANY_LEN);
            memcpy(d, &(uint32_t){(uint32_t)(i / 32 % MANY)}, 4);
            s = (cckey_bytes){d, MANY_LEN};
        }
        }
        int len = snprintf(names + 8 * i, 8, "%zx", i);
        t[i] = (cckey_tuple){{"d", 1}, {names + 8 * i, (size_t)len}, s, NULL, 0};
    }
    unsigned char (*bin)[CCKEY_KEY_BIN_LEN] = malloc(N * sizeof *bin);
    key_t_ *text = malloc(N * sizeof *text);
    for (unsigned threads = 1; threads <= 3; threads++) {
        cckey_batch_config *cfg = config(CCKEY_BACKEND_CPU, threads);
        check_batch(t, N, cfg, "long sources across blocks");
        cr_assert_eq(cckey_make_keys(text, t, N, cfg), CCKEY_OK);
        cr_assert_eq(cckey_make_keys_bin(bin, t, N, cfg), CCKEY_OK);
        for (size_t i = 0; i < N; i++) {
            char hex[CCKEY_KEY_LEN + 1];
            for (int f = 0; f < 4; f++) {
                for (int j = 0; j < 16; j++) snprintf(hex + 33 * f + 2 * j, 3, "%02x", bin[i][16 * f + j]);
                if (f < 3) hex[33 * f + 32] = ':';
            }
            cr_assert_str_eq(hex, text[i], "%u threads: binary key %zu", threads, i);
        }
        cckey_batch_config_free(cfg);
    }
    free(bin);
    free(text);
    cckey_test_arena_free(&a);
}

/* cckey_make_keys_sources: tuples whose sources come as handles (made from
 * the bytes, from their digest, or left to the tuple) give the recipe's
 * keys (OpenSSL), on the whole-batch planner and the blocks one. */
Test(batch, source_handles_give_the_recipes_keys)
{
    uint64_t rng = 77;
    static const size_t sizes[] = {1, 2999, 20000};   /* 20,000 short tuples go by blocks */
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        size_t n = sizes[z];
        cckey_test_arena a = {0};
        cckey_tuple *t = shared_batch(&a, &rng, n), *given = malloc(n * sizeof *given);
        cckey_source **h = calloc(n, sizeof *h);
        key_t_ *out = malloc(n * sizeof *out);
        for (size_t i = 0; i < n; i++) {
            given[i] = t[i];
            if (i % 3 == 2) continue;   /* no handle: the tuple's source is digested */
            if (i % 3 == 0) {
                cr_assert_eq(cckey_source_new(&h[i], t[i].source, CCKEY_SOURCE_BORROW), CCKEY_OK);
            } else {
                unsigned char bin[CCKEY_DIGEST_LEN];
                cckey_digest d;
                cckey_digest_init(&d);
                cckey_digest_update(&d, t[i].source.ptr, t[i].source.len);
                cckey_digest_final(&d, NULL, bin);
                cr_assert_eq(cckey_source_new_digest(&h[i], bin), CCKEY_OK);
            }
            given[i].source = (cckey_bytes){NULL, 0};
        }
        cckey_batch_config *cfg = config(CCKEY_BACKEND_CPU, 2);
        cckey_status st = cckey_make_keys_sources(out, given, (const cckey_source *const *)h, n, cfg);
        cr_assert_eq(st, CCKEY_OK, "%s", cckey_last_error());
        for (size_t i = 0; i < n; i++) {
            key_t_ want;
            cckey_test_ref_key(want, t[i].device, t[i].name, t[i].source, t[i].options, t[i].n_options);
            cr_assert_str_eq(out[i], want, "tuple %zu of %zu", i, n);
        }
        /* A handle beside source bytes is refused, naming the tuple. */
        if (n > 3) {
            given[3].source = t[3].source;
            cr_assert_eq(cckey_make_keys_sources(out, given, (const cckey_source *const *)h, n, cfg),
                         CCKEY_ERR_INVALID_ARG);
            cr_assert(strstr(cckey_last_error(), "tuple 3"), "%s", cckey_last_error());
        }
        cckey_batch_config_free(cfg);
        for (size_t i = 0; i < n; i++) cckey_source_free(h[i]);
        free(h), free(given), free(out);
        cckey_test_arena_free(&a);
    }
}
