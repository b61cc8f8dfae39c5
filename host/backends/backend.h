/* The internal backend interface: "digest these N messages".
 *
 * The batch planner deduplicates fields, drives one backend through this
 * struct, falls back to the CPU for whatever a failing device left undone,
 * verifies, and formats keys. A backend knows nothing about keys. */
#ifndef CCKEY_BACKEND_H
#define CCKEY_BACKEND_H

#include "cckey.h"
#include "../md5/md5.h"
#include "../core/parallel.h"

#include <stdatomic.h>
#include <stdbool.h>

/* Defaults of the device settings below. */
#define CCKEY_GPU_DEFAULT_CHUNK_BYTES ((size_t)64 << 20)
#define CCKEY_GPU_DEFAULT_LONG_BYTES ((size_t)256 << 10)
/* Never more than this on the device: offsets and lengths are 32-bit there. */
#define CCKEY_GPU_MAX_CHUNK_BYTES ((size_t)1 << 30)
#define CCKEY_GPU_MIN_CHUNK_BYTES ((size_t)64)
#define CCKEY_DEVICE_SELECTOR_MAX 128

/* How a batch uses a device: the device part of cckey_batch_config (see
 * the setters in cckey.h), passed down to the engines. */
typedef struct cckey_device_settings {
    size_t chunk_bytes;   /* packed bytes per chunk */
    size_t long_bytes;    /* longer messages stay on the host */
    bool cpu_share;       /* host threads also take the device's kind of work */
    /* Device choice per device backend: "" for the best usable device, a
     * decimal index, or a case-insensitive part of the device's or
     * platform's name. */
    char opencl_device[CCKEY_DEVICE_SELECTOR_MAX];
    char cuda_device[CCKEY_DEVICE_SELECTOR_MAX];
    /* Device faults, acted on only by the testing library, around the
     * engines (host/testing/device_faults.c, through cckey_backend_hooks):
     * fail the launch of chunk fault_chunk (-1: never), flip a bit of each
     * chunk's first digest, fail the kernel build through its real error
     * path. Release builds carry the fields but no code that reads them. */
    long fault_chunk;
    bool fault_corrupt, fault_build;
} cckey_device_settings;

/* The defaults: 64 MiB chunks, 256 KiB long messages, sharing on, the best
 * device, no faults. */
#define CCKEY_DEVICE_SETTINGS_INIT                                                                         \
    {.chunk_bytes = CCKEY_GPU_DEFAULT_CHUNK_BYTES, .long_bytes = CCKEY_GPU_DEFAULT_LONG_BYTES, .cpu_share = true, \
     .fault_chunk = -1}
extern const cckey_device_settings cckey_device_settings_default;

/* The selector a settings object holds for a device backend's kind. */
const char *cckey_device_selector(const cckey_device_settings *s, cckey_backend_kind kind);

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
    /* NULL for cckey_device_settings_default. */
    const cckey_device_settings *settings;
} cckey_digest_job;

struct cckey_gpu_ops;

/* A backend is a name over an engine: the CPU path, or the device pipeline
 * (gpu_pipeline.c) driving a device engine. The calls below dispatch. */
typedef struct cckey_backend_ops {
    /* The public kind it serves; CCKEY_BACKEND_AUTO for a backend that no
     * kind names (the testing library's native engine), which is never
     * listed and never picked by auto. */
    cckey_backend_kind kind;
    const char *name;
    const struct cckey_gpu_ops *engine;   /* NULL for the CPU */
} cckey_backend_ops;

/* Test seams, as data: NULL in a release process, pointed before main at
 * the testing library's table (host/testing/device_faults.c). gpu_digest
 * runs a device batch in cckey_gpu_digest's place: the same pipeline over
 * the engine, with the faults its settings ask for injected around it. */
typedef struct cckey_backend_hook_table {
    cckey_status (*gpu_digest)(const struct cckey_digest_job *job, const struct cckey_gpu_ops *engine);
} cckey_backend_hook_table;
extern const cckey_backend_hook_table *cckey_backend_hooks;

static inline bool cckey_job_cancelled(const cckey_digest_job *job)
{
    return job->cancel && atomic_load_explicit(job->cancel, memory_order_relaxed);
}

/* NULL when the kind was not compiled in. Never NULL for CPU. */
const cckey_backend_ops *cckey_backend_ops_for(cckey_backend_kind kind);

/* CCKEY_OK when the backend can run here with these settings (NULL:
 * defaults), else CCKEY_ERR_UNAVAILABLE and a reason in why. Cheap after
 * the first call. */
cckey_status cckey_backend_available(const cckey_backend_ops *b, const cckey_device_settings *s, char *why,
                                     size_t why_len);
/* Whether the device beats the CPU alone on a job of this shape (for
 * CCKEY_BACKEND_AUTO); never for the CPU backend itself. */
bool cckey_backend_worth_it(const cckey_backend_ops *b, const cckey_device_settings *s, size_t n,
                            uint64_t total_bytes, unsigned cpu_threads);
/* Digest every message. CCKEY_OK means all are done; an error (with detail
 * via cckey_fail) lets the planner finish the rest on the CPU. */
cckey_status cckey_backend_digest(const cckey_backend_ops *b, const cckey_digest_job *job);

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

#endif
