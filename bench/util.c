/* Small helpers: clock, a seeded generator, a parallel loop over the
 * library's own fork-join helper. */
#include "bench.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* splitmix64: seeds of neighbouring workers give unrelated streams. */
uint64_t bench_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

double bench_rand_unit(uint64_t *state) { return (double)(bench_rand(state) >> 11) * 0x1.0p-53; }

double bench_rand_normal(uint64_t *state)
{
    double u = bench_rand_unit(state), v = bench_rand_unit(state);
    if (u < 1e-300) u = 1e-300;
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

void *bench_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "cckey_bench: out of memory allocating %zu bytes\n", bytes);
        exit(1);
    }
    return p;
}

size_t bench_grain(size_t n, unsigned threads)
{
    size_t g = n / ((size_t)(threads ? threads : 1) * 8);
    return g < 1 ? 1 : g > 64 ? 64 : g;
}

/* The bench's own fork-join (it sees only the public API): fn(arg, tid)
 * for tid in [0, threads), tid 0 on the calling thread; each thread it
 * starts takes the next tid as it begins. */
typedef struct fork_join {
    void (*fn)(void *arg, unsigned tid);
    void *arg;
    atomic_uint next;
} fork_join;

static void *forked(void *p)
{
    fork_join *f = p;
    f->fn(f->arg, atomic_fetch_add(&f->next, 1));
    return NULL;
}

int bench_parallel_run(unsigned threads, void (*fn)(void *arg, unsigned tid), void *arg)
{
    if (threads < 1) threads = 1;
    pthread_t *th = calloc(threads, sizeof *th);
    fork_join f = {fn, arg, 1};
    unsigned started = 1;
    int rc = th ? 0 : -1;
    for (; rc == 0 && started < threads; started++)
        if (pthread_create(&th[started], NULL, forked, &f) != 0) rc = -1;
    if (rc == 0) fn(arg, 0);
    for (unsigned i = 1; i < started - (rc != 0); i++) pthread_join(th[i], NULL);
    free(th);
    return rc;
}

typedef struct for_ctx {
    void (*body)(void *ctx, size_t begin, size_t end);
    void *ctx;
    size_t n, grain;
    atomic_size_t next;
} for_ctx;

static void for_worker(void *p, unsigned tid)
{
    for_ctx *f = p;
    (void)tid;
    for (;;) {
        size_t b = atomic_fetch_add(&f->next, f->grain);
        if (b >= f->n) return;
        f->body(f->ctx, b, b + f->grain < f->n ? b + f->grain : f->n);
    }
}

void bench_parallel_for(size_t n, size_t grain, unsigned threads,
                        void (*body)(void *ctx, size_t begin, size_t end), void *ctx)
{
    for_ctx f = {.body = body, .ctx = ctx, .n = n, .grain = grain ? grain : 1};
    atomic_init(&f.next, 0);
    /* At least `grain` items a thread, as the library's loop gives. */
    size_t most = (n + f.grain - 1) / f.grain;
    unsigned t = threads ? threads : 1;
    if (most < t) t = most ? (unsigned)most : 1;
    if (bench_parallel_run(t, for_worker, &f) != 0) {
        fprintf(stderr, "cckey_bench: could not start %u threads\n", t);
        exit(1);
    }
}

typedef struct fill_ctx {
    uint8_t *buf;
    size_t len;
    uint64_t seed;
} fill_ctx;

enum { FILL_GRAIN = 1 << 20 };

static void fill_body(void *arg, size_t begin, size_t end)
{
    fill_ctx *f = arg;
    for (size_t chunk = begin; chunk < end; chunk++) {
        uint64_t s = f->seed ^ (chunk * 0xd1b54a32d192ed03u);
        size_t off = chunk * FILL_GRAIN, stop = off + FILL_GRAIN < f->len ? off + FILL_GRAIN : f->len;
        for (; off + 8 <= stop; off += 8) {
            uint64_t r = bench_rand(&s);
            memcpy(f->buf + off, &r, 8);
        }
        for (; off < stop; off++) f->buf[off] = (uint8_t)bench_rand(&s);
    }
}

/* Random bytes, reproducible for a seed whatever the thread count. */
void bench_fill(uint8_t *buf, size_t len, uint64_t seed, unsigned threads)
{
    fill_ctx f = {buf, len, seed};
    bench_parallel_for((len + FILL_GRAIN - 1) / FILL_GRAIN, 1, threads, fill_body, &f);
}

void bench_human_bytes(char *buf, size_t len, double bytes)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) bytes /= 1024, u++;
    snprintf(buf, len, bytes == (double)(uint64_t)bytes ? "%.0f %s" : "%.1f %s", bytes, unit[u]);
}
