/* The device pipeline shared by the OpenCL and CUDA backends.
 *
 * The plan is the same for every device; only the calls differ. The
 * pipeline
 *  - lists every message still to do: those longer than long_bytes first
 *    (one work-item hashing a long message alone would hold up its whole
 *    group, so only host threads take them), then the rest by MD5 block
 *    count, longest first, so the work-items of a group do similar work;
 *  - lets the host threads claim runs from the front and hash them with the
 *    CPU backend's multi-buffer code, while the calling thread claims
 *    chunks from the back for the device; the two meet wherever their
 *    speeds make them meet (with CCKEY_GPU_CPU_SHARE=0 the host stops at
 *    the long messages). Packing comes first: a host thread helps copy a
 *    big chunk before it hashes anything;
 *  - packs each chunk, each message at a 16-byte-aligned offset, into
 *    staging buffers of at most chunk_bytes, and keeps several chunks in
 *    flight ("slots") so that packing, copies and kernels overlap;
 *  - marks done[i] only when message i's digest is final (copied back, or
 *    hashed on the host), so a failure leaves exactly the unfinished
 *    messages to the planner's CPU fallback. After a device failure the
 *    host threads finish the long messages and take nothing else.
 *
 * Environment (read on every batch):
 *   CCKEY_GPU_CHUNK_BYTES  packed bytes per chunk (default 64 MiB); tests
 *                          make it tiny to get many chunks cheaply
 *   CCKEY_GPU_LONG_BYTES   longest message the device takes (default 256 KiB)
 *   CCKEY_FAULT_CHUNK=K    fail with CCKEY_ERR_DEVICE just before chunk K
 *                          (0-based) is launched: a test hook for the
 *                          fallback path
 *   CCKEY_GPU_CPU_SHARE    1 (default): host threads and the device share
 *                          the batch; 0: the device takes everything but
 *                          the long messages (as a test hook and for
 *                          measuring the device alone) */
#ifndef CCKEY_GPU_PIPELINE_H
#define CCKEY_GPU_PIPELINE_H

#include "backend.h"
#include "gpu_devices.h"

#include <stdbool.h>

#define CCKEY_GPU_ALIGN 16u
#define CCKEY_GPU_DEFAULT_CHUNK_BYTES ((size_t)64 << 20)
#define CCKEY_GPU_DEFAULT_LONG_BYTES ((size_t)256 << 10)
/* Never more than this on the device: offsets and lengths are 32-bit there. */
#define CCKEY_GPU_MAX_CHUNK_BYTES ((size_t)1 << 30)
#define CCKEY_GPU_MAX_SLOTS 4u
/* The kernel's entry point, in both languages. */
#define CCKEY_GPU_KERNEL_NAME "cckey_md5_kernel"

typedef struct cckey_gpu_params {
    size_t chunk_bytes;   /* packed data per chunk */
    size_t chunk_msgs;    /* messages per chunk */
    size_t long_bytes;    /* longer messages go to the CPU */
    long fault_chunk;     /* -1: no injected fault */
    bool corrupt;         /* test hook: flip a bit of each chunk's first digest */
    bool cpu_share;       /* host threads hash from the other end too */
} cckey_gpu_params;

/* The parameters from the environment; CCKEY_ERR_INVALID_ARG (with detail)
 * for a value that is not a number in range. */
cckey_status cckey_gpu_params_get(cckey_gpu_params *p);

/* Host views of one slot's staging memory, filled by reserve(). */
typedef struct cckey_gpu_slot {
    uint8_t *data;             /* packed messages */
    uint32_t *meta;            /* per message: offset, length */
    const uint32_t *digests;   /* per message: 4 state words, valid after wait() */
} cckey_gpu_slot;

/* The views of staging laid out as both backends lay it out: `in` holds
 * cap_data bytes of packed data, then the meta table; `out` the digests. */
cckey_gpu_slot cckey_gpu_slot_views(void *in, size_t cap_data, const void *out);

/* What a device backend provides. Every call but close() returns CCKEY_OK or
 * CCKEY_ERR_DEVICE / CCKEY_ERR_NO_MEMORY with detail set by cckey_fail. */
typedef struct cckey_gpu_ops {
    const char *name;
    /* Take the device for one batch (initialising it on first use) and
     * say how many slots it keeps in flight (2..CCKEY_GPU_MAX_SLOTS).
     * close() follows every open(), also a failed one. */
    cckey_status (*open)(void **self, unsigned *slots);
    /* Make every slot hold data_bytes of packed data and msgs messages. */
    cckey_status (*reserve)(void *self, size_t data_bytes, size_t msgs, cckey_gpu_slot *slots);
    /* Start copy in, kernel, copy out for n messages of data_bytes packed
     * bytes in slot s; returns without waiting. */
    cckey_status (*launch)(void *self, unsigned s, size_t n, size_t data_bytes);
    /* Block until slot s's digests are in its staging memory. */
    cckey_status (*wait)(void *self, unsigned s);
    /* Give the device back. After a failure, wait out whatever is still in
     * flight and drop the device state so the next batch starts afresh. */
    void (*close)(void *self, bool failed);
    /* The device batches go to, or NULL with the reason in why (when why is
     * not NULL). Cheap after the first call. */
    const cckey_device_info *(*device)(char *why, size_t why_len);
    /* The device's figures for `auto`: see cckey_gpu_worth_it. */
    double device_gbps, setup_s;
} cckey_gpu_ops;

/* Digest a job through a device: see the plan above. */
cckey_status cckey_gpu_digest(const cckey_digest_job *job, const cckey_gpu_ops *ops);

/* The backend interface (backend.h) over an engine: available when it has
 * a device; worth it when cckey_gpu_worth_it says so and `auto` may pick
 * that device. */
cckey_status cckey_gpu_available(const cckey_gpu_ops *ops, char *why, size_t why_len);
bool cckey_gpu_auto_ok(const cckey_gpu_ops *ops, size_t n, uint64_t total_bytes, unsigned cpu_threads);

/* Defines the backend `symbol` over the engine `ops` (a cckey_gpu_ops
 * object). backend.h's calls carry no context, so every device backend
 * needs entry points of its own; they only forward to the above. */
#define CCKEY_GPU_BACKEND(symbol, backend_kind, backend_name, ops)                                          \
    static cckey_status symbol##_available(char *why, size_t why_len)                                       \
    {                                                                                                        \
        return cckey_gpu_available(&(ops), why, why_len);                                                    \
    }                                                                                                        \
    static bool symbol##_worth_it(size_t n, uint64_t total_bytes, unsigned cpu_threads)                      \
    {                                                                                                        \
        return cckey_gpu_auto_ok(&(ops), n, total_bytes, cpu_threads);                                       \
    }                                                                                                        \
    static cckey_status symbol##_digest(const cckey_digest_job *job) { return cckey_gpu_digest(job, &(ops)); } \
    const cckey_backend_ops symbol = {.kind = (backend_kind),                                                \
                                      .name = (backend_name),                                                \
                                      .available = symbol##_available,                                       \
                                      .worth_it = symbol##_worth_it,                                         \
                                      .digest = symbol##_digest}

/* The rule behind `auto` (see gpu_pipeline.c): whether a device that hashes
 * and transfers at about device_gbps GB/s, after fixed costs of setup_s
 * seconds, beats cpu_threads host threads on a batch of this shape; alone
 * (share false) or with cpu_threads - 1 host threads hashing beside it. */
bool cckey_gpu_worth_it(size_t n, uint64_t total_bytes, unsigned cpu_threads, double device_gbps,
                        double setup_s, bool share);

/* Whether CCKEY_FAULT_BUILD is set to a non-zero value: device backends then
 * fail their kernel build, through their real build-error path. */
bool cckey_gpu_fault_build(void);

#endif
