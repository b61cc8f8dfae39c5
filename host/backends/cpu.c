/* The CPU backend: the reference and the fallback. Messages are taken
 * longest first (so a long one never starts last and holds up the end) in
 * runs of similar length, which is what the multi-buffer lanes want. */
#include "backend.h"
#include "../core/internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* A claim: small enough to balance the threads, big enough to fill the
 * widest SIMD kernel (32 lanes) several times over; below RUN_MIN_MSGS
 * messages a call runs its lanes mostly empty. */
#define RUN_BYTES (2u << 20)
#define RUN_MSGS 256u
#define RUN_MIN_MSGS 32u
#define CPU_LONG_BYTES (256u << 10)   /* taken first, whatever their order */

typedef struct cpu_work {
    const cckey_digest_job *job;
    const size_t *order;          /* indices of the messages to do, longest first */
    size_t count;
    _Atomic size_t next;
    _Atomic uint64_t bytes_done;
    uint64_t bytes_total;
} cpu_work;

size_t cckey_cpu_run_end(const cckey_msg *msgs, const size_t *order, size_t start, size_t limit)
{
    uint64_t bytes = 0;
    size_t end = start;
    while (end < limit && end - start < RUN_MSGS && (bytes < RUN_BYTES || end - start < RUN_MIN_MSGS))
        bytes += msgs[order[end++]].len + 9;
    return end;
}

uint64_t cckey_cpu_hash_run(const cckey_digest_job *job, const size_t *order, size_t start, size_t end)
{
    cckey_msg batch[RUN_MSGS];
    uint8_t dig[RUN_MSGS][CCKEY_MD5_DIGEST];
    uint64_t bytes = 0;
    while (start < end) {
        size_t k = end - start < RUN_MSGS ? end - start : RUN_MSGS;
        for (size_t i = 0; i < k; i++) {
            batch[i] = job->msgs[order[start + i]];
            bytes += batch[i].len;
        }
        cckey_md5_many(batch, k, dig);
        for (size_t i = 0; i < k; i++) {
            size_t m = order[start + i];
            memcpy(job->out[m], dig[i], CCKEY_MD5_DIGEST);
            if (job->done) job->done[m] = 1;
        }
        start += k;
    }
    return bytes;
}

static void cpu_worker(void *arg, unsigned tid)
{
    cpu_work *w = arg;
    const cckey_digest_job *job = w->job;
    for (;;) {
        /* Claim a run: one message at a time so a run stops at RUN_BYTES. */
        if (cckey_job_cancelled(job)) return;
        size_t start = atomic_load_explicit(&w->next, memory_order_relaxed), end;
        do {
            if (start >= w->count) return;
            end = cckey_cpu_run_end(job->msgs, w->order, start, w->count);
        } while (!atomic_compare_exchange_weak_explicit(&w->next, &start, end, memory_order_relaxed,
                                                        memory_order_relaxed));
        uint64_t bytes = cckey_cpu_hash_run(job, w->order, start, end);
        uint64_t done = atomic_fetch_add_explicit(&w->bytes_done, bytes, memory_order_relaxed) + bytes;
        if (tid == 0 && job->progress) job->progress(job->progress_user, done, w->bytes_total);
    }
}

cckey_status cckey_cpu_digest(const cckey_digest_job *job)
{
    if (job->n == 0) return CCKEY_OK;
    size_t *todo = malloc(job->n * sizeof *todo), *order = malloc(job->n * sizeof *order);
    if (!todo || !order) {
        free(todo), free(order);
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "ordering %zu messages", job->n);
    }
    cpu_work w = {.job = job, .order = order};
    for (size_t i = 0; i < job->n; i++) {
        if (job->done && job->done[i]) continue;
        todo[w.count++] = i;
        w.bytes_total += job->msgs[i].len;
    }
    /* Messages of a run must be alike for the lanes; the longest go first,
     * so no thread starts a long one last. */
    cckey_status st = cckey_order_by_blocks(job->msgs, todo, w.count, CPU_LONG_BYTES, order);
    free(todo);
    if (st != CCKEY_OK) {
        free(order);
        return st;
    }
    atomic_init(&w.next, 0);
    atomic_init(&w.bytes_done, 0);

    unsigned threads = job->threads ? job->threads : cckey_cpu_count();
    /* Threads cost tens of microseconds to start: not worth it for tiny jobs. */
    uint64_t enough = (w.bytes_total >> 18) + 1;   /* one thread per 256 KiB */
    if (enough < threads) threads = (unsigned)enough;
    st = cckey_parallel_run(threads, cpu_worker, &w);
    free(order);
    return st;
}
