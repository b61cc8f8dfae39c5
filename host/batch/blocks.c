/* A CPU batch by blocks (see plan.h): threads claim blocks in order and
 * plan each alone. */
#include "plan.h"
#include "../backends/backend.h"
#include "../core/internal.h"
#include "../core/parallel.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Field bytes per tuple, on average over a sample of the batch. */
static size_t sampled_bytes(const cckey_tuple *tuples, size_t n)
{
    enum { SAMPLE = 256 };
    size_t bytes = 0;
    for (size_t k = 0; k < SAMPLE; k++) {
        const cckey_tuple *t = &tuples[k * (n - 1) / (SAMPLE - 1)];
        bytes += t->device.len + t->name.len + t->source.len;
        for (size_t o = 0; t->options && o < t->n_options && o < 64; o++)
            bytes += t->options[o].key.len + t->options[o].value.len;
    }
    return bytes / SAMPLE;
}

/* AUTO picks a device only for a batch worth one (planner.c's choose()):
 * asked here of the batch's upper bound (every field distinct), a device
 * not worth it for that is not worth it for the real batch either. */
static bool device_worth_it(const cckey_batch_config *cfg, size_t n, uint64_t bytes, unsigned threads)
{
    static const cckey_backend_kind devices[] = {CCKEY_BACKEND_CUDA, CCKEY_BACKEND_OPENCL};
    for (size_t i = 0; i < sizeof devices / sizeof *devices; i++) {
        const cckey_backend_ops *b = cckey_backend_ops_for(devices[i]);
        if (b && cckey_backend_worth_it(b, &cfg->device, 3 * n, bytes, threads)) return true;
    }
    return false;
}

bool cckey_plan_by_blocks(const cckey_batch_config *cfg, const cckey_tuple *tuples, size_t n, unsigned threads)
{
    if (cfg->progress || cfg->progress_cancel) return false;   /* reported over the whole batch */
    if (cfg->ops || (cfg->backend != CCKEY_BACKEND_CPU && cfg->backend != CCKEY_BACKEND_AUTO)) return false;
    if (threads > 1 ? n < 2 * CCKEY_PLAN_BLOCK_MIN : n <= CCKEY_PLAN_BLOCK) return false;
    /* Long fields: MD5 is the cost, not the tables. The whole batch then
     * digests each distinct one once, on all threads at a time, where
     * blocks that run together would each digest the ones they share. */
    size_t mean = sampled_bytes(tuples, n);
    if (mean >= CCKEY_DIGEST_CACHE_MIN) return false;
    return cfg->backend == CCKEY_BACKEND_CPU || !device_worth_it(cfg, n, (uint64_t)mean * n, threads);
}

typedef struct block_run {
    cckey_key_out out;
    const cckey_tuple *tuples;
    size_t n, block, blocks;
    cckey_scratch *mem;   /* per thread */
    cckey_digest_cache cache;
    _Atomic size_t next;
    /* The first failed block, its status and message (a thread's own
     * cckey_last_error): every block before it was claimed and finished,
     * so a bad tuple reported is the batch's first. */
    pthread_mutex_t lock;
    _Atomic size_t failed;
    cckey_status st;
    char why[1024];
} block_run;

static void block_worker(void *arg, unsigned tid)
{
    block_run *r = arg;
    for (;;) {
        size_t b = atomic_fetch_add_explicit(&r->next, 1, memory_order_relaxed);
        if (b >= r->blocks || b > atomic_load(&r->failed)) return;
        size_t lo = b * r->block, hi = lo + r->block < r->n ? lo + r->block : r->n;
        cckey_status st = cckey_plan_cpu_block(r->out, r->tuples, lo, hi, &r->mem[tid], &r->cache);
        cckey_scratch_reset(&r->mem[tid]);   /* sized for the next block */
        if (st == CCKEY_OK) continue;
        pthread_mutex_lock(&r->lock);
        if (b < atomic_load(&r->failed)) {
            atomic_store(&r->failed, b);
            r->st = st;
            snprintf(r->why, sizeof r->why, "%s", cckey_last_error());
        }
        pthread_mutex_unlock(&r->lock);
        return;
    }
}

/* Equal blocks, as many as a whole number per thread, so that no thread
 * finishes a block behind the others. */
static void size_blocks(block_run *r, unsigned *threads)
{
    size_t blocks = (r->n + CCKEY_PLAN_BLOCK - 1) / CCKEY_PLAN_BLOCK;
    size_t most = r->n / CCKEY_PLAN_BLOCK_MIN;   /* threads the batch can feed */
    unsigned t = *threads ? *threads : cckey_cpu_count();
    if (most < t) t = most ? (unsigned)most : 1;
    if (blocks % t) blocks += t - blocks % t;
    r->blocks = blocks;
    r->block = (r->n + blocks - 1) / blocks;
    *threads = t;
}

cckey_status cckey_plan_blocks(cckey_key_out out, const cckey_tuple *tuples, size_t n, unsigned threads,
                               cckey_scratch *mem, unsigned n_mem)
{
    block_run r = {.out = out, .tuples = tuples, .n = n, .st = CCKEY_OK};
    size_blocks(&r, &threads);
    r.mem = calloc(threads, sizeof *r.mem);
    if (!r.mem) return cckey_fail(CCKEY_ERR_NO_MEMORY, "block tables");
    for (unsigned t = 0; t < threads && t < n_mem; t++) r.mem[t] = mem[t];
    atomic_init(&r.next, 0);
    atomic_init(&r.failed, SIZE_MAX);
    cckey_status st = CCKEY_OK;
    if (pthread_mutex_init(&r.lock, NULL) != 0) st = cckey_fail(CCKEY_ERR_NO_MEMORY, "block lock");
    else if (cckey_digest_cache_init(&r.cache) != 0) {
        pthread_mutex_destroy(&r.lock);
        st = cckey_fail(CCKEY_ERR_NO_MEMORY, "digest cache lock");
    }
    if (st == CCKEY_OK) {
        st = cckey_parallel_run(threads, block_worker, &r);
        if (st == CCKEY_OK && atomic_load(&r.failed) != SIZE_MAX) st = cckey_fail(r.st, "%s", r.why);
        cckey_digest_cache_free(&r.cache);
        pthread_mutex_destroy(&r.lock);
    }
    /* The kept tables go back to the caller; the others are freed. */
    for (unsigned t = 0; t < threads; t++) {
        if (t < n_mem) mem[t] = r.mem[t];
        else cckey_scratch_free(&r.mem[t]);
    }
    free(r.mem);
    return st;
}
