/* The native test engine: the device pipeline (gpu_pipeline.c) driven
 * through an engine whose "device" is host memory and whose work-items are
 * host threads running kernels/md5.kern compiled as C. Test builds only.
 *
 * It behaves as a device does where the pipeline can tell: each slot has
 * its own "device" buffers; a launch returns at once while worker threads
 * copy the staging memory in (after a simulated transfer latency), run the
 * kernel over the work-items and copy the digests back; wait() is the only
 * point where the host may read them. A pipeline that reused a slot too
 * early, or read digests before waiting, gets wrong digests here and a data
 * race under ThreadSanitizer.
 *
 * Fault injection lives here: cckey_native_fail(call, nth) makes the nth
 * call (1-based, counted from then on) of an engine entry point fail with
 * CCKEY_ERR_DEVICE, as a driver error at that call site would. */
#include "testing.h"
#include "../backends/engine_pool.h"
#include "../backends/gpu_pipeline.h"
#include "../batch/config.h"
#include "../core/internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SLOTS 3u
#define WORKERS 3u              /* threads standing in for a launch's work-items */
#define LATENCY_NS 20000L       /* per copy: a transfer is never instant */

void cckey_md5_kernel(const uint8_t *data, const uint32_t *meta, uint32_t *out, uint32_t count);
extern _Thread_local uint32_t cckey_host_gid;

struct nat_slot;
typedef struct worker_arg {
    struct nat_slot *sl;
    unsigned tid;
} worker_arg;

typedef struct nat_slot {
    uint8_t *h_in;              /* staging: data, then meta */
    uint32_t *h_out;            /* staging: digests */
    uint8_t *d_data;            /* "device" buffers */
    uint32_t *d_meta, *d_out;
    size_t n, data_bytes;       /* the launch in flight */
    bool running;
    unsigned workers;           /* started for this launch */
    pthread_t th[WORKERS];
    worker_arg arg[WORKERS];
    pthread_mutex_t gate;       /* held while the workers are started */
    pthread_barrier_t step;
    struct nat_engine *e;
} nat_slot;

typedef struct nat_engine {
    cckey_gpu_engine base;      /* first: the pipeline's view */
    bool ready;
    nat_slot slot[SLOTS];
} nat_engine;

static cckey_engine_pool pool = CCKEY_ENGINE_POOL_INIT(nat_engine);
static const cckey_device_info device = {
    .index = 0, .name = "cckey native test engine", .driver = "1", .platform = "host threads", .type = "other",
    .compute_units = WORKERS, .usable = true, .chosen = true, .auto_ok = false};

/* ---- fault injection ------------------------------------------------------ */

static _Atomic int fail_call = CCKEY_NATIVE_NONE;
static _Atomic long fail_left;

void cckey_native_fail(cckey_native_call call, unsigned nth)
{
    atomic_store(&fail_left, (long)nth);
    atomic_store(&fail_call, (int)call);
}

static const char *const call_names[] = {"open", "alloc", "launch", "wait"};

static cckey_status injected(cckey_native_call call)
{
    if (atomic_load(&fail_call) != (int)call || atomic_fetch_sub(&fail_left, 1) != 1) return CCKEY_OK;
    atomic_store(&fail_call, CCKEY_NATIVE_NONE);
    return cckey_fail(CCKEY_ERR_DEVICE, "native: injected driver error in %s", call_names[call]);
}

/* ---- the "device" ----------------------------------------------------------- */

static void pause_for_transfer(void)
{
    struct timespec ts = {0, LATENCY_NS};
    nanosleep(&ts, NULL);
}

static void *work(void *p)
{
    worker_arg *a = p;
    nat_slot *sl = a->sl;
    const nat_engine *e = sl->e;
    unsigned tid = a->tid;
    /* Until the launcher knows how many of us there are. */
    pthread_mutex_lock(&sl->gate);
    unsigned w = sl->workers;
    pthread_mutex_unlock(&sl->gate);
    /* Copy in: each worker a share of the data, worker 0 the meta table. */
    pause_for_transfer();
    size_t share = (sl->data_bytes + w - 1) / w, lo = tid * share;
    size_t hi = lo + share < sl->data_bytes ? lo + share : sl->data_bytes;
    if (lo < hi) memcpy(sl->d_data + lo, sl->h_in + lo, hi - lo);
    if (tid == 0) memcpy(sl->d_meta, sl->h_in + e->base.cap_data, 8 * sl->n);
    pthread_barrier_wait(&sl->step);
    /* The kernel: work-items tid, tid + WORKERS, ... */
    for (size_t i = tid; i < sl->n; i += w) {
        cckey_host_gid = (uint32_t)i;
        cckey_md5_kernel(sl->d_data, sl->d_meta, sl->d_out, (uint32_t)sl->n);
    }
    pthread_barrier_wait(&sl->step);
    /* Copy out. */
    if (tid == 0) {
        pause_for_transfer();
        memcpy(sl->h_out, sl->d_out, 16 * sl->n);
    }
    return NULL;
}

static void join(nat_slot *sl)
{
    if (!sl->running) return;
    for (unsigned t = 0; t < sl->workers; t++) pthread_join(sl->th[t], NULL);
    pthread_barrier_destroy(&sl->step);
    sl->running = false;
}

/* ---- the pipeline's engine ------------------------------------------------ */

static cckey_status nat_release(cckey_gpu_engine *self)
{
    nat_engine *e = (nat_engine *)self;
    for (unsigned s = 0; s < SLOTS; s++) {
        nat_slot *sl = &e->slot[s];
        join(sl);
        free(sl->h_in), free(sl->h_out), free(sl->d_data), free(sl->d_meta), free(sl->d_out);
        sl->h_in = sl->d_data = NULL;
        sl->h_out = sl->d_meta = sl->d_out = NULL;
    }
    e->base.cap_data = e->base.cap_msgs = 0;
    return CCKEY_OK;
}

static cckey_status nat_open(cckey_gpu_engine **self, const cckey_device_settings *set, unsigned *slots)
{
    *self = NULL;
    *slots = SLOTS;
    bool same;
    nat_engine *e = cckey_engine_take(&pool, &device, &same);
    if (!e) return cckey_fail(CCKEY_ERR_NO_MEMORY, "native engine");
    *self = &e->base;
    for (unsigned s = 0; s < SLOTS; s++) {
        if (!e->slot[s].e) pthread_mutex_init(&e->slot[s].gate, NULL);
        e->slot[s].e = e;
    }
    cckey_status st = injected(CCKEY_NATIVE_OPEN);
    if (st != CCKEY_OK) return st;
    if (set && set->fault_build) return cckey_fail(CCKEY_ERR_DEVICE, "native: kernel build failed (CCKEY_FAULT_BUILD)");
    e->ready = true;
    return CCKEY_OK;
}

static cckey_status nat_alloc(cckey_gpu_engine *self, size_t data_bytes, size_t msgs)
{
    nat_engine *e = (nat_engine *)self;
    cckey_status st = injected(CCKEY_NATIVE_ALLOC);
    if (st != CCKEY_OK) return st;
    for (unsigned s = 0; s < SLOTS; s++) {
        nat_slot *sl = &e->slot[s];
        /* Exactly the sizes asked for: ASan sees any overrun. */
        sl->h_in = malloc(data_bytes + 8 * msgs);
        sl->h_out = malloc(16 * msgs);
        sl->d_data = malloc(data_bytes ? data_bytes : 1);
        sl->d_meta = malloc(8 * msgs);
        sl->d_out = malloc(16 * msgs);
        if (!sl->h_in || !sl->h_out || !sl->d_data || !sl->d_meta || !sl->d_out)
            return cckey_fail(CCKEY_ERR_NO_MEMORY, "native: %zu data bytes, %zu messages", data_bytes, msgs);
        e->base.slot[s] = cckey_gpu_slot_views(sl->h_in, data_bytes, sl->h_out);
    }
    return CCKEY_OK;
}

static cckey_status nat_launch(cckey_gpu_engine *self, unsigned s, size_t n, size_t data_bytes)
{
    nat_engine *e = (nat_engine *)self;
    nat_slot *sl = &e->slot[s];
    cckey_status st = injected(CCKEY_NATIVE_LAUNCH);
    if (st != CCKEY_OK) return st;
    if (sl->running) return cckey_fail(CCKEY_ERR_INTERNAL, "native: slot %u launched while busy", s);
    if (n > e->base.cap_msgs || data_bytes > e->base.cap_data)
        return cckey_fail(CCKEY_ERR_INTERNAL, "native: launch of %zu messages, %zu bytes past the slot", n, data_bytes);
    /* The kernel reads the message table (after cap_data bytes of data) as
     * uint32_t: a GPU faults on a misaligned table, so this engine refuses it. */
    if (e->base.cap_data % CCKEY_GPU_ALIGN)
        return cckey_fail(CCKEY_ERR_INTERNAL, "native: message table at offset %zu, not %u-byte aligned",
                          e->base.cap_data, CCKEY_GPU_ALIGN);
    sl->n = n, sl->data_bytes = data_bytes;
    pthread_mutex_lock(&sl->gate);
    unsigned started = 0;
    for (unsigned t = 0; t < WORKERS; t++) {
        sl->arg[t] = (worker_arg){sl, started};
        if (pthread_create(&sl->th[started], NULL, work, &sl->arg[t]) == 0) started++;
    }
    sl->workers = started;
    if (started) pthread_barrier_init(&sl->step, NULL, started);
    pthread_mutex_unlock(&sl->gate);
    if (!started) return cckey_fail(CCKEY_ERR_THREAD, "native: no worker thread could start");
    sl->running = true;
    return CCKEY_OK;
}

static cckey_status nat_wait(cckey_gpu_engine *self, unsigned s)
{
    nat_engine *e = (nat_engine *)self;
    join(&e->slot[s]);
    return injected(CCKEY_NATIVE_WAIT);
}

static cckey_status nat_close(cckey_gpu_engine *self, bool failed)
{
    if (!self) return CCKEY_OK;
    nat_engine *e = (nat_engine *)self;
    for (unsigned s = 0; s < SLOTS; s++) join(&e->slot[s]);
    if (failed) {
        nat_release(self);
        e->ready = false;
    }
    cckey_engine_give(&pool, e);
    return CCKEY_OK;
}

static const cckey_device_info *nat_device(const cckey_device_settings *set, char *why, size_t why_len)
{
    (void)set, (void)why, (void)why_len;
    return &device;
}

static const cckey_gpu_ops native_engine = CCKEY_GPU_OPS(nat, "native", 1.0, 0.0);

/* No public kind names it: it is listed nowhere and auto never picks it. */
static const cckey_backend_ops native = {.kind = CCKEY_BACKEND_AUTO, .name = "native", .engine = &native_engine};

const cckey_backend_ops *cckey_testing_native(void) { return &native; }

cckey_status cckey_testing_use_native(cckey_batch_config *cfg)
{
    if (!cfg) return cckey_fail(CCKEY_ERR_INVALID_ARG, "config is NULL");
    cfg->ops = &native;
    return CCKEY_OK;
}
