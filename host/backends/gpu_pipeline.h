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
 * Settings come with the job (cckey_device_settings, from the batch's
 * config): chunk_bytes, long_bytes, cpu_share (off: the device takes
 * everything but the long messages, for measuring the device alone), the
 * device selector. (Test builds inject faults around the engines, from
 * host/testing/device_faults.c; nothing here knows of them.) */
#ifndef CCKEY_GPU_PIPELINE_H
#define CCKEY_GPU_PIPELINE_H

#include "backend.h"
#include "gpu_devices.h"

#include <stdbool.h>

#define CCKEY_GPU_ALIGN 16u
#define CCKEY_GPU_MAX_SLOTS 4u
/* The kernel's entry point, in both languages. */
#define CCKEY_GPU_KERNEL_NAME "cckey_md5_kernel"

typedef struct cckey_gpu_params {
    size_t chunk_bytes;   /* packed data per chunk */
    size_t chunk_msgs;    /* messages per chunk */
    size_t long_bytes;    /* longer messages go to the CPU */
    bool cpu_share;       /* host threads hash from the other end too */
} cckey_gpu_params;

/* The parameters of a job's settings; CCKEY_ERR_INVALID_ARG (with detail)
 * for a value out of range. */
cckey_status cckey_gpu_params_get(const cckey_device_settings *s, cckey_gpu_params *p);

/* Host views of one slot's staging memory, filled by alloc(). */
typedef struct cckey_gpu_slot {
    uint8_t *data;             /* packed messages */
    uint32_t *meta;            /* per message: offset, length */
    const uint32_t *digests;   /* per message: 4 state words, valid after wait() */
} cckey_gpu_slot;

/* The views of staging laid out as both backends lay it out: `in` holds
 * cap_data bytes of packed data, then the meta table; `out` the digests. */
cckey_gpu_slot cckey_gpu_slot_views(void *in, size_t cap_data, const void *out);

/* What every engine object starts with: its staging capacity and the host
 * views of its slots. The pipeline owns capacity and growth: it asks the
 * engine for buffers only when a batch needs more than it holds. */
typedef struct cckey_gpu_engine {
    size_t cap_data, cap_msgs;
    cckey_gpu_slot slot[CCKEY_GPU_MAX_SLOTS];
} cckey_gpu_engine;

/* The first call of a teardown that the driver refused (both OpenCL's and
 * CUDA's success status is 0); the teardown goes on, since what a refused
 * release holds is the driver's to keep. */
typedef struct cckey_refusal {
    const char *call;   /* NULL: none yet */
    int code;
} cckey_refusal;

static inline void cckey_refusal_note(cckey_refusal *f, const char *call, int code)
{
    if (code != 0 && !f->call) f->call = call, f->code = code;
}

/* What a device backend provides. Every call but close() returns CCKEY_OK or
 * CCKEY_ERR_DEVICE / CCKEY_ERR_NO_MEMORY with detail set by cckey_fail. */
struct cckey_gpu_ops {
    const char *name;
    /* Take an engine for the device the settings select, for one batch
     * (setting it up on first use, or when it served another device), and
     * say how many slots it keeps in flight (2..CCKEY_GPU_MAX_SLOTS).
     * close() follows every open(), also a failed one (then *self may be
     * NULL). */
    cckey_status (*open)(cckey_gpu_engine **self, const cckey_device_settings *s, unsigned *slots);
    /* Allocate every slot for data_bytes of packed data and msgs messages
     * and fill self->slot; the pipeline has released the old ones. */
    cckey_status (*alloc)(cckey_gpu_engine *self, size_t data_bytes, size_t msgs);
    /* Release the slots' buffers (waiting out their work). CCKEY_OK, or
     * CCKEY_ERR_DEVICE naming the first driver call that refused: the
     * buffers are dropped from the engine all the same (a refused free is
     * the driver's to keep) and the batch fails over to the CPU. */
    cckey_status (*release)(cckey_gpu_engine *self);
    /* Start copy in, kernel, copy out for n messages of data_bytes packed
     * bytes in slot s; returns without waiting. */
    cckey_status (*launch)(cckey_gpu_engine *self, unsigned s, size_t n, size_t data_bytes);
    /* Block until slot s's digests are in its staging memory. */
    cckey_status (*wait)(cckey_gpu_engine *self, unsigned s);
    /* Give the device back. After a failure, wait out whatever is still in
     * flight and drop the device state so the next batch starts afresh.
     * CCKEY_OK, or CCKEY_ERR_DEVICE when a driver call refused (after a
     * failure, the first failure is what counts and this may be ignored);
     * the state is then dropped as after a failure. */
    cckey_status (*close)(cckey_gpu_engine *self, bool failed);
    /* The device the settings select, or NULL with the reason in why (when
     * why is not NULL). Cheap after the first call. */
    const cckey_device_info *(*device)(const cckey_device_settings *s, char *why, size_t why_len);
    /* The device's figures for `auto`: see cckey_gpu_worth_it. */
    double device_gbps, setup_s;
};
typedef struct cckey_gpu_ops cckey_gpu_ops;
/* An engine's ops from its functions' common prefix (prefix_open, ...,
 * prefix_device), so that no engine lists them by hand. */
#define CCKEY_GPU_OPS(prefix, name_, gbps, setup)                                                   \
    {.name = name_, .open = prefix##_open, .alloc = prefix##_alloc, .release = prefix##_release,    \
     .launch = prefix##_launch, .wait = prefix##_wait, .close = prefix##_close,                     \
     .device = prefix##_device, .device_gbps = gbps, .setup_s = setup}

/* Digest a job through a device: see the plan above. */
cckey_status cckey_gpu_digest(const cckey_digest_job *job, const cckey_gpu_ops *ops);

/* The rule behind `auto` (see gpu_pipeline.c): whether a device that hashes
 * and transfers at about device_gbps GB/s, after fixed costs of setup_s
 * seconds, beats cpu_threads host threads on a batch of this shape; alone
 * (share false) or with cpu_threads - 1 host threads hashing beside it. */
bool cckey_gpu_worth_it(size_t n, uint64_t total_bytes, unsigned cpu_threads, double device_gbps,
                        double setup_s, bool share);

#endif
