/* The batch planner's parallel deduplication: fields that share an address,
 * equal fields at distinct addresses, option arrays shared or copied, hot
 * values that crowd one partition, and batches spanning many blocks, on 1
 * to 4 threads. Every key is checked against the OpenSSL recipe. A plain
 * program, so that the ThreadSanitizer build runs it too. */
#include "check.h"
#include "support.h"

#include <stdio.h>
#include <string.h>

static void check_keys(const cckey_tuple *t, size_t n, unsigned threads, const char *what)
{
    char (*out)[CCKEY_KEY_LEN + 1] = calloc(n ? n : 1, sizeof *out);
    CHECK(out, "out of memory");
    cckey_batch_config *cfg;
    CHECK(cckey_batch_config_new(&cfg) == CCKEY_OK, "config");
    cckey_batch_config_set_backend(cfg, CCKEY_BACKEND_CPU);
    cckey_batch_config_set_threads(cfg, threads);
    cckey_status st = cckey_make_keys(out, t, n, cfg);
    CHECK(st == CCKEY_OK, "%s: %s", what, cckey_last_error());
    /* The reference is slow: check a stride of big batches, all of small ones. */
    size_t step = n > 20000 ? 97 : 1;
    for (size_t i = 0; i < n; i += step) {
        char ref[CCKEY_KEY_LEN + 1];
        cckey_test_ref_key(ref, t[i].device, t[i].name, t[i].source, t[i].options, t[i].n_options);
        CHECK(memcmp(ref, out[i], CCKEY_KEY_LEN + 1) == 0, "%s, %u threads: tuple %zu of %zu", what, threads, i, n);
    }
    cckey_batch_config_free(cfg);
    free(out);
}

/* Fields drawn from small pools, each use either the pool's object (same
 * address) or a fresh copy of it (same bytes elsewhere); options arrays
 * shared between tuples or built per tuple from shared or copied strings. */
static void aliasing(size_t n, uint64_t seed)
{
    cckey_test_arena a = {0};
    uint64_t rng = seed;
    enum { POOL = 40, SETS = 12 };
    cckey_bytes pool[POOL];
    for (int i = 0; i < POOL; i++) pool[i] = cckey_test_random_bytes(&a, &rng, cckey_test_below(&rng, 3) ? cckey_test_below(&rng, 90) : 0);
    cckey_option *sets[SETS];
    size_t set_n[SETS];
    for (int s = 0; s < SETS; s++) {
        set_n[s] = cckey_test_below(&rng, 4);
        sets[s] = cckey_test_alloc(&a, (set_n[s] ? set_n[s] : 1) * sizeof **sets);
        for (size_t k = 0; k < set_n[s]; k++)
            sets[s][k] = (cckey_option){pool[cckey_test_below(&rng, 6)], pool[cckey_test_below(&rng, POOL)]};
    }
    cckey_tuple *t = cckey_test_alloc(&a, n * sizeof *t);
    for (size_t i = 0; i < n; i++) {
        cckey_bytes f[3];
        for (int k = 0; k < 3; k++) {
            cckey_bytes b = pool[cckey_test_below(&rng, POOL)];
            f[k] = cckey_test_below(&rng, 2) ? cckey_test_dup(&a, b) : b;
        }
        if (cckey_test_below(&rng, 5) == 0) f[1] = cckey_test_random_bytes(&a, &rng, 40);   /* distinct names too */
        t[i] = (cckey_tuple){f[0], f[1], f[2], NULL, 0};
        int s = (int)cckey_test_below(&rng, SETS);
        switch (cckey_test_below(&rng, 3)) {
        case 0: t[i].options = sets[s]; t[i].n_options = set_n[s]; break;   /* the shared array */
        case 1: {   /* a copy of the array: same string objects, another array */
            cckey_option *o = cckey_test_alloc(&a, (set_n[s] ? set_n[s] : 1) * sizeof *o);
            memcpy(o, sets[s], set_n[s] * sizeof *o);
            t[i].options = o;
            t[i].n_options = set_n[s];
            break;
        }
        default: {   /* equal strings at fresh addresses */
            cckey_option *o = cckey_test_alloc(&a, (set_n[s] ? set_n[s] : 1) * sizeof *o);
            for (size_t k = 0; k < set_n[s]; k++)
                o[k] = (cckey_option){cckey_test_dup(&a, sets[s][k].key), cckey_test_dup(&a, sets[s][k].value)};
            t[i].options = o;
            t[i].n_options = set_n[s];
        }
        }
    }
    for (unsigned th = 1; th <= 4; th++) check_keys(t, n, th, "aliasing");
    cckey_test_arena_free(&a);
}

/* One value everywhere, each at its own address: every field of the batch
 * falls into a few partitions. */
static void one_hot_value(size_t n)
{
    cckey_test_arena a = {0};
    cckey_tuple *t = cckey_test_alloc(&a, n * sizeof *t);
    cckey_option *o = cckey_test_alloc(&a, n * sizeof *o);
    for (size_t i = 0; i < n; i++) {
        cckey_bytes v = cckey_test_dup(&a, (cckey_bytes){"hot", 3});
        o[i] = (cckey_option){v, v};
        t[i] = (cckey_tuple){v, cckey_test_dup(&a, v), v, &o[i], i % 2};
    }
    for (unsigned th = 1; th <= 4; th += 3) check_keys(t, n, th, "one hot value");
    cckey_test_arena_free(&a);
}

/* A batch by blocks (host/batch/plan.h) whose few long sources recur in
 * every block: the threads share their digests through one cache, which
 * must tell apart equal-length sources one byte apart and copies at other
 * addresses. */
static void long_sources_across_blocks(size_t n)
{
    enum { LEN = 3000, SRCS = 24 };
    cckey_test_arena a = {0};
    uint64_t rng = 71;
    cckey_bytes base = cckey_test_random_bytes(&a, &rng, LEN), src[SRCS];
    for (int k = 0; k < SRCS; k++) {
        src[k] = cckey_test_dup(&a, base);
        ((uint8_t *)src[k].ptr)[(size_t)k * 997 % LEN] ^= (uint8_t)(k + 1);
    }
    src[SRCS - 1] = cckey_test_dup(&a, src[0]);   /* equal bytes, another address */
    cckey_tuple *t = cckey_test_alloc(&a, n * sizeof *t);
    for (size_t i = 0; i < n; i++) {
        cckey_bytes s = i % 16 ? (cckey_bytes){"s", 1} : src[cckey_test_below(&rng, SRCS)];
        t[i] = (cckey_tuple){{"d", 1}, cckey_test_random_bytes(&a, &rng, 12), s, NULL, 0};
    }
    for (unsigned th = 1; th <= 4; th++) check_keys(t, n, th, "long sources across blocks");
    /* A bad tuple in a late block is reported, and it is the first. */
    t[n - 3].source = (cckey_bytes){NULL, 2};
    t[n / 2 + 1].name = (cckey_bytes){NULL, 1};
    char (*out)[CCKEY_KEY_LEN + 1] = calloc(n, sizeof *out);
    char want[32];
    snprintf(want, sizeof want, "tuple %zu ", n / 2 + 1);
    for (unsigned th = 1; th <= 4; th++) {
        cckey_batch_config *cfg;
        CHECK(out && cckey_batch_config_new(&cfg) == CCKEY_OK, "config");
        cckey_batch_config_set_backend(cfg, CCKEY_BACKEND_CPU);
        cckey_batch_config_set_threads(cfg, th);
        CHECK(cckey_make_keys(out, t, n, cfg) == CCKEY_ERR_INVALID_ARG, "%u threads: a bad tuple was accepted", th);
        CHECK(strstr(cckey_last_error(), want), "%u threads: %s", th, cckey_last_error());
        cckey_batch_config_free(cfg);
    }
    free(out);
    cckey_test_arena_free(&a);
}

int main(void)
{
    aliasing(1, 1);
    aliasing(300, 2);
    aliasing(70000, 3);   /* more than one block of tuples and of items */
    one_hot_value(50000);
    long_sources_across_blocks(40000);
    /* Invalid tuples are still found, wherever they are. */
    cckey_tuple t[3] = {{{"d", 1}, {"n", 1}, {"s", 1}, NULL, 0}};
    t[1] = t[0];
    t[2] = t[0];
    t[2].name = (cckey_bytes){NULL, 4};
    char out[3][CCKEY_KEY_LEN + 1];
    CHECK(cckey_make_keys(out, t, 3, NULL) == CCKEY_ERR_INVALID_ARG, "a {NULL, 4} name was accepted");
    CHECK(strstr(cckey_last_error(), "tuple 2"), "%s", cckey_last_error());
    puts("test_planner: ok");
    return 0;
}
