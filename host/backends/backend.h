/* The internal backend interface: "digest these N messages".
 *
 * The batch planner deduplicates fields, drives one backend through this
 * struct, falls back to the CPU for whatever a failing device left undone,
 * verifies, and formats keys. A backend knows nothing about keys. */
#ifndef CCKEY_BACKEND_H
#define CCKEY_BACKEND_H

#include "cckey.h"
#include "../md5/md5.h"

#include <stdatomic.h>
#include <stdbool.h>

typedef struct cckey_digest_job {
    const cckey_msg *msgs;
    size_t n;
    uint8_t (*out)[CCKEY_MD5_DIGEST];
    /* done[i] = 1 once out[i] is final. On failure the planner hashes every
     * message still at 0 on the CPU, so a backend marks only what it has
     * actually copied back. */
    uint8_t *done;
    unsigned threads;            /* host threads the backend may use */
    cckey_progress_fn progress;  /* may be NULL; called from the calling thread */
    void *progress_user;
    /* May be NULL. Set when the caller cancels (from the progress callback):
     * a backend then claims no more work, and what it holds finishes. */
    const atomic_bool *cancel;
    /* May be NULL. A device backend stores here how many messages the
     * device and the host threads each finished (its CPU share), also on
     * failure; the CPU backend leaves it alone. */
    struct cckey_digest_split {
        size_t device, host;
    } *split;
} cckey_digest_job;

typedef struct cckey_backend_ops {
    cckey_backend_kind kind;
    const char *name;
    /* CCKEY_OK when the backend can run here, else CCKEY_ERR_UNAVAILABLE and
     * a reason in why. Cheap after the first call. */
    cckey_status (*available)(char *why, size_t why_len);
    /* Whether the device beats the CPU alone on a job of this shape (for
     * CCKEY_BACKEND_AUTO). NULL means never. */
    bool (*worth_it)(size_t n, uint64_t total_bytes, unsigned cpu_threads);
    /* Digest every message. CCKEY_OK means all are done; an error (with
     * detail via cckey_fail) lets the planner finish the rest on the CPU. */
    cckey_status (*digest)(const cckey_digest_job *job);
} cckey_backend_ops;

static inline bool cckey_job_cancelled(const cckey_digest_job *job)
{
    return job->cancel && atomic_load_explicit(job->cancel, memory_order_relaxed);
}

/* NULL when the kind was not compiled in. Never NULL for CPU. */
const cckey_backend_ops *cckey_backend_ops_for(cckey_backend_kind kind);

/* The CPU reference path on `threads` threads (0: all cores), SIMD
 * multi-buffer on each. Also used by device backends for their CPU share. */
cckey_status cckey_cpu_digest(const cckey_digest_job *job);

/* The CPU path's pieces, for device backends that hash on host threads
 * too. A run is order[start..end) with end the cckey_cpu_run_end of start:
 * at most `limit`, sized so one call fills the SIMD lanes without holding a
 * thread long. cckey_cpu_hash_run digests job->msgs[order[k]] for k in
 * [start, end) on the calling thread into job->out, marks them done, and
 * returns their bytes. */
size_t cckey_cpu_run_end(const cckey_msg *msgs, const size_t *order, size_t start, size_t limit);
uint64_t cckey_cpu_hash_run(const cckey_digest_job *job, const size_t *order, size_t start, size_t end);

/* out[0..n) = in[0..n) reordered: messages longer than long_bytes first,
 * then by MD5 block count, longest first (stable). in and out must not
 * overlap. Fails only with CCKEY_ERR_NO_MEMORY. */
cckey_status cckey_order_by_blocks(const cckey_msg *msgs, const size_t *in, size_t n, size_t long_bytes,
                                   size_t *out);

/* Online cores, at least 1. */
unsigned cckey_cpu_count(void);

/* Run fn(arg, tid) for tid in [0, threads): tid 0 on the calling thread. */
cckey_status cckey_parallel_run(unsigned threads, void (*fn)(void *arg, unsigned tid), void *arg);

/* body(ctx, begin, end) over [0, n) in claims of `grain` items, on at most
 * `threads` threads (fewer when n is small: each thread gets at least
 * `grain` items). */
cckey_status cckey_parallel_for(unsigned threads, size_t n, size_t grain,
                                void (*body)(void *ctx, size_t begin, size_t end), void *ctx);

#endif
