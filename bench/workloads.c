/* The workloads and their references. Contents are random but seeded, so
 * two runs digest the same bytes. */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bench_wl_reference(bench_workload *w, unsigned threads)
{
    w->ref_key = bench_alloc(w->n * sizeof *w->ref_key);
    bench_ossl_keys(w->tuples, w->n, w->ref_key, threads);
    if (w->kind != BENCH_WL_MSGS) return;
    w->ref_dig = bench_alloc(w->n * sizeof *w->ref_dig);
    bench_ossl_digests(w->msgs, w->n, w->ref_dig, threads);
}

/* Log-uniform over [16, 65536]: every octave gets the same share of messages. */
static size_t mixed_len(uint64_t *rs)
{
    return (size_t)(16.0 * exp(bench_rand_unit(rs) * log(65536.0 / 16.0)) + 0.5);
}

void bench_wl_messages(bench_workload *w, const char *name, size_t len, uint64_t total,
                       size_t min_count, size_t max_count, uint64_t seed, unsigned threads)
{
    memset(w, 0, sizeof *w);
    snprintf(w->name, sizeof w->name, "%s", name);
    w->kind = BENCH_WL_MSGS;
    uint64_t rs = seed;
    size_t n;
    if (len) {
        n = (size_t)(total / len);
    } else {
        /* Draw lengths until the total is reached; the order stays random. */
        uint64_t sum = 0;
        uint64_t probe = seed;
        for (n = 0; sum < total && n < max_count; n++) sum += mixed_len(&probe);
    }
    if (n < min_count) n = min_count;
    if (n > max_count) n = max_count;
    size_t *lens = bench_alloc(n * sizeof *lens);
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        lens[i] = len ? len : mixed_len(&rs);
        sum += lens[i];
    }
    uint8_t *arena = bench_alloc(sum);
    bench_fill(arena, sum, seed ^ 0x5eed, threads);
    w->msgs = bench_alloc(n * sizeof *w->msgs);
    w->views = bench_alloc(n * sizeof *w->views);
    w->tuples = calloc(n, sizeof *w->tuples);
    if (!w->tuples) {
        fprintf(stderr, "cckey_bench: out of memory\n");
        exit(1);
    }
    uint64_t off = 0;
    for (size_t i = 0; i < n; i++) {
        w->msgs[i] = (cckey_msg){arena + off, lens[i]};
        w->tuples[i].source = w->views[i] = (cckey_bytes){arena + off, lens[i]};
        off += lens[i];
    }
    free(lens);
    w->n = n;
    w->bytes = sum;
    w->storage[0] = arena;
    bench_wl_reference(w, threads);
}

static const char *const option_names[] = {"-O",          "-arch",       "-DBLOCK_SIZE", "-std",
                                           "-DTILE_M",    "-DTILE_N",    "--use_fast_math",
                                           "-maxrregcount", "-DUNROLL",  "-lineinfo"};

/* A bump allocator for the suite's many small strings. */
typedef struct pool {
    char *base;
    size_t used, cap;
} pool;

static cckey_bytes pool_copy(pool *p, const char *str, size_t len)
{
    if (p->used + len > p->cap) {
        fprintf(stderr, "cckey_bench: string pool overflow\n");
        exit(1);
    }
    char *at = p->base + p->used;
    memcpy(at, str, len);
    p->used += len;
    return (cckey_bytes){at, len};
}

#define POOL_PRINTF(p, ...)                                          \
    ({                                                               \
        char tmp_[96];                                               \
        int len_ = snprintf(tmp_, sizeof tmp_, __VA_ARGS__);         \
        pool_copy((p), tmp_, (size_t)len_);                          \
    })

void bench_wl_suite(bench_workload *w, size_t S, size_t E, size_t D, size_t O, uint64_t seed,
                    unsigned threads)
{
    memset(w, 0, sizeof *w);
    snprintf(w->name, sizeof w->name, "suite %zux%zux%zux%zu", S, E, D, O);
    w->kind = BENCH_WL_SUITE;
    uint64_t rs = seed;

    /* Sources: log-normal around 8 KiB, as real kernel files are. */
    size_t *src_len = bench_alloc(S * sizeof *src_len);
    uint64_t src_total = 0;
    for (size_t s = 0; s < S; s++) {
        double l = 8192.0 * exp(0.75 * bench_rand_normal(&rs));
        src_len[s] = l < 256 ? 256 : l > 262144 ? 262144 : (size_t)l;
        src_total += src_len[s];
    }
    uint8_t *arena = bench_alloc(src_total);
    bench_fill(arena, src_total, seed ^ 0x50c, threads);

    enum { MAX_PAIRS = 5 };
    pool strings = {bench_alloc(96 * (S * E + D + 2 * O * MAX_PAIRS)), 0, 96 * (S * E + D + 2 * O * MAX_PAIRS)};
    cckey_bytes *names = bench_alloc(S * E * sizeof *names);
    cckey_bytes *devices = bench_alloc(D * sizeof *devices);
    cckey_option *opts = bench_alloc(O * MAX_PAIRS * sizeof *opts);
    size_t *n_opts = bench_alloc(O * sizeof *n_opts);
    for (size_t s = 0; s < S; s++)
        for (size_t e = 0; e < E; e++) names[s * E + e] = POOL_PRINTF(&strings, "kernel_s%zu_entry%zu", s, e);
    for (size_t d = 0; d < D; d++) devices[d] = POOL_PRINTF(&strings, "NVIDIA H200 (%zu)|580.159.%02zu", d, d % 100);
    size_t n_names = sizeof option_names / sizeof *option_names;
    for (size_t o = 0; o < O; o++) {
        /* 2..5 pairs, keys in a random order so the canon sort has work. */
        n_opts[o] = 2 + (size_t)(bench_rand(&rs) % (MAX_PAIRS - 1));
        size_t first = (size_t)(bench_rand(&rs) % n_names);
        for (size_t k = 0; k < n_opts[o]; k++) {
            const char *key = option_names[(first + k * 3) % n_names];
            opts[o * MAX_PAIRS + k].key = pool_copy(&strings, key, strlen(key));
            opts[o * MAX_PAIRS + k].value = POOL_PRINTF(&strings, "%zu_%zu", o, k);
        }
    }

    size_t n = S * E * D * O;
    w->tuples = bench_alloc(n * sizeof *w->tuples);
    uint64_t src_off = 0, bytes = 0;
    size_t i = 0;
    for (size_t s = 0; s < S; s++) {
        cckey_bytes src = {arena + src_off, src_len[s]};
        src_off += src_len[s];
        for (size_t e = 0; e < E; e++)
            for (size_t d = 0; d < D; d++)
                for (size_t o = 0; o < O; o++) {
                    cckey_tuple *t = &w->tuples[i++];
                    *t = (cckey_tuple){devices[d], names[s * E + e], src, &opts[o * MAX_PAIRS], n_opts[o]};
                    bytes += t->device.len + t->name.len + t->source.len;
                    for (size_t k = 0; k < t->n_options; k++)
                        bytes += t->options[k].key.len + t->options[k].value.len;
                }
    }
    /* A build system asks in no particular order. */
    for (size_t k = n; k > 1; k--) {
        size_t j = (size_t)(bench_rand(&rs) % k);
        cckey_tuple tmp = w->tuples[k - 1];
        w->tuples[k - 1] = w->tuples[j];
        w->tuples[j] = tmp;
    }
    free(src_len);
    free(n_opts);   /* the counts live on in the tuples */
    w->n = n;
    w->bytes = bytes;
    w->storage[0] = arena;
    w->storage[1] = strings.base;
    w->storage[2] = names;
    w->storage[3] = opts;
    free(devices);
    bench_wl_reference(w, threads);
}

void bench_wl_memo(bench_workload *w, unsigned passes, uint64_t seed)
{
    memset(w, 0, sizeof *w);
    snprintf(w->name, sizeof w->name, "memo 4KiB");
    w->kind = BENCH_WL_MEMO;
    enum { SRC = 4096, N = 8, PAIRS = 3 };
    /* One block: the source, then the field strings, then tuples and options. */
    char *block = bench_alloc(SRC + N * 128);
    bench_fill((uint8_t *)block, SRC, seed ^ 0x4e30, 1);
    cckey_option *opts = bench_alloc(N * PAIRS * sizeof *opts);
    w->tuples = bench_alloc(N * sizeof *w->tuples);
    char *s = block + SRC;
    uint64_t bytes = 0;
    for (size_t i = 0; i < N; i++) {
        char *dev = s, *name = s + 40, *opt = s + 72;
        int dl = snprintf(dev, 40, "NVIDIA H200 (%zu)|580.159.04", i & 1);
        int nl = snprintf(name, 32, "kernel_entry_%zu", (i >> 1) & 1);
        for (size_t k = 0; k < PAIRS; k++) {
            char *kv = opt + k * 18;
            int kl = snprintf(kv, 9, "-D%c", (int)('A' + (int)k));
            int vl = snprintf(kv + 9, 9, "%zu", (i >> 2) * 10 + k);
            opts[i * PAIRS + k] = (cckey_option){{kv, (size_t)kl}, {kv + 9, (size_t)vl}};
            bytes += (size_t)kl + (size_t)vl;
        }
        w->tuples[i] = (cckey_tuple){{dev, (size_t)dl}, {name, (size_t)nl}, {block, SRC}, &opts[i * PAIRS], PAIRS};
        bytes += (size_t)dl + (size_t)nl + SRC;
        s += 128;
    }
    w->n = N;
    w->bytes = bytes;
    w->memo_passes = passes;
    w->storage[0] = block;
    w->storage[1] = opts;
    if (cckey_source_new(&w->memo, (cckey_bytes){block, SRC}, CCKEY_SOURCE_BORROW) != CCKEY_OK) {
        fprintf(stderr, "cckey_bench: cckey_source_new: %s\n", cckey_last_error());
        exit(1);
    }
    bench_wl_reference(w, 1);
}

void bench_wl_free(bench_workload *w)
{
    cckey_source_free(w->memo);
    free(w->msgs);
    free(w->views);
    free(w->tuples);
    free(w->ref_dig);
    free(w->ref_key);
    for (size_t i = 0; i < sizeof w->storage / sizeof *w->storage; i++) free(w->storage[i]);
    memset(w, 0, sizeof *w);
}
