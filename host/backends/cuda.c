/* The CUDA backend: the shared device pipeline (gpu_pipeline.c) driven
 * through the CUDA driver loaded at run time (cuda_loader.c), running the
 * kernel from the fatbin embedded at build time.
 *
 * The device's primary context is shared with the rest of the process (a
 * CUDA runtime user in the same process sees the same context); cckey
 * pushes it onto the calling thread for a batch and pops it after. One
 * module, a ring of streams and pinned staging buffers serve the whole
 * process, built on the first batch; a mutex gives the device to one batch
 * at a time. After any device error all of it is released and rebuilt on
 * the next batch. */
#include "cuda_backend.h"
#include "gpu_pipeline.h"
#include "../core/internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 3u
#define BLOCK 256u   /* threads per block; capped by what the kernel allows */

typedef struct cu_slot {
    cckey_CUstream stream;
    cckey_CUdeviceptr d_data, d_meta, d_out;
    void *h_in, *h_out;   /* pinned: data then meta; digests */
} cu_slot;

typedef struct cu_state {
    const cckey_cu_api *cu;
    const cckey_cu_device *dev;
    cckey_CUcontext ctx;   /* the retained primary context, NULL when not held */
    bool pushed;
    cckey_CUmodule module;
    cckey_CUfunction fn;
    unsigned block;
    cu_slot slot[SLOTS];
    size_t cap_data, cap_msgs;
} cu_state;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cu_state S;

static cckey_status cu_fail(const char *call, cckey_CUresult r, const char *extra)
{
    char what[384];
    cckey_cu_describe(S.cu, r, what, sizeof what);
    return cckey_fail(CCKEY_ERR_DEVICE, "CUDA %s failed on '%s': %s%s", call, S.dev ? S.dev->info.name : "?", what,
                      extra ? extra : "");
}

static void release_slot_buffers(void)
{
    const cckey_cu_api *cu = S.cu;
    for (unsigned s = 0; s < SLOTS; s++) {
        cu_slot *sl = &S.slot[s];
        if (sl->stream) cu->StreamSynchronize(sl->stream);
        if (sl->d_data) cu->MemFree(sl->d_data);
        if (sl->d_meta) cu->MemFree(sl->d_meta);
        if (sl->d_out) cu->MemFree(sl->d_out);
        if (sl->h_in) cu->MemFreeHost(sl->h_in);
        if (sl->h_out) cu->MemFreeHost(sl->h_out);
        sl->d_data = sl->d_meta = sl->d_out = 0;
        sl->h_in = sl->h_out = NULL;
    }
    S.cap_data = S.cap_msgs = 0;
}

/* Everything but the context push, which close() undoes. */
static void teardown(void)
{
    if (!S.cu || !S.ctx) return;
    const cckey_cu_api *cu = S.cu;
    release_slot_buffers();
    for (unsigned s = 0; s < SLOTS; s++)
        if (S.slot[s].stream) cu->StreamDestroy(S.slot[s].stream), S.slot[s].stream = NULL;
    if (S.module) cu->ModuleUnload(S.module);
    S.module = NULL;
    S.fn = NULL;
}

static cckey_status load_module(void)
{
    const cckey_cu_api *cu = S.cu;
    /* The injected fault goes through the driver's real image check: a
     * fatbin whose header is wiped. */
    unsigned char *broken = NULL;
    const void *image = cckey_md5_fatbin;
    if (cckey_gpu_fault_build()) {
        broken = malloc(cckey_md5_fatbin_len);
        if (!broken) return cckey_fail(CCKEY_ERR_NO_MEMORY, "fault injection");
        memcpy(broken, cckey_md5_fatbin, cckey_md5_fatbin_len);
        memset(broken, 0, cckey_md5_fatbin_len < 64 ? cckey_md5_fatbin_len : 64);
        image = broken;
    }
    bool injected = broken != NULL;
    cckey_CUresult r = cu->ModuleLoadData(&S.module, image);
    free(broken);
    if (r != CCKEY_CUDA_SUCCESS) {
        S.module = NULL;
        return cu_fail("cuModuleLoadData", r, injected ? " (injected by CCKEY_FAULT_BUILD)" : "");
    }
    if (injected) {
        /* A driver that accepts the wiped image still has to fail here. */
        cu->ModuleUnload(S.module);
        S.module = NULL;
        return cckey_fail(CCKEY_ERR_DEVICE, "CUDA cuModuleLoadData accepted a broken image (CCKEY_FAULT_BUILD)");
    }
    if ((r = cu->ModuleGetFunction(&S.fn, S.module, CCKEY_GPU_KERNEL_NAME)) != CCKEY_CUDA_SUCCESS)
        return cu_fail("cuModuleGetFunction", r, NULL);
    int max_threads = 0;
    if (cu->FuncGetAttribute(&max_threads, CCKEY_CU_FUNC_MAX_THREADS_PER_BLOCK, S.fn) != CCKEY_CUDA_SUCCESS)
        max_threads = 0;
    S.block = max_threads > 0 && (unsigned)max_threads < BLOCK ? (unsigned)max_threads : BLOCK;
    return CCKEY_OK;
}

static cckey_status setup(void)
{
    const cckey_cu_api *cu = S.cu;
    cckey_CUresult r;
    for (unsigned s = 0; s < SLOTS; s++)
        if ((r = cu->StreamCreate(&S.slot[s].stream, CCKEY_CU_STREAM_NON_BLOCKING)) != CCKEY_CUDA_SUCCESS) {
            S.slot[s].stream = NULL;
            return cu_fail("cuStreamCreate", r, NULL);
        }
    return load_module();
}

/* ---- the pipeline's engine ---------------------------------------------- */

static cckey_status cuda_open(void **self, unsigned *slots)
{
    pthread_mutex_lock(&lock);
    *self = &S;
    *slots = SLOTS;
    char why[512];
    S.dev = cckey_cu_selected(&S.cu, why, sizeof why);
    if (!S.dev) return cckey_fail(CCKEY_ERR_UNAVAILABLE, "CUDA: %s", why);
    cckey_CUresult r;
    if (!S.ctx && (r = S.cu->DevicePrimaryCtxRetain(&S.ctx, S.dev->dev)) != CCKEY_CUDA_SUCCESS) {
        S.ctx = NULL;
        return cu_fail("cuDevicePrimaryCtxRetain", r, NULL);
    }
    if ((r = S.cu->CtxPushCurrent(S.ctx)) != CCKEY_CUDA_SUCCESS) return cu_fail("cuCtxPushCurrent", r, NULL);
    S.pushed = true;
    return S.fn ? CCKEY_OK : setup();
}

static cckey_status cuda_reserve(void *self, size_t data_bytes, size_t msgs, cckey_gpu_slot *slots)
{
    (void)self;
    const cckey_cu_api *cu = S.cu;
    if (data_bytes > S.cap_data || msgs > S.cap_msgs) {
        release_slot_buffers();
        for (unsigned s = 0; s < SLOTS; s++) {
            cu_slot *sl = &S.slot[s];
            cckey_CUresult r;
            const char *what = "cuMemAlloc";
            if ((r = cu->MemAlloc(&sl->d_data, data_bytes)) != CCKEY_CUDA_SUCCESS ||
                (r = cu->MemAlloc(&sl->d_meta, 8 * msgs)) != CCKEY_CUDA_SUCCESS ||
                (r = cu->MemAlloc(&sl->d_out, 16 * msgs)) != CCKEY_CUDA_SUCCESS ||
                (what = "cuMemHostAlloc", r = cu->MemHostAlloc(&sl->h_in, data_bytes + 8 * msgs, 0)) != CCKEY_CUDA_SUCCESS ||
                (r = cu->MemHostAlloc(&sl->h_out, 16 * msgs, 0)) != CCKEY_CUDA_SUCCESS) {
                char size[96];
                snprintf(size, sizeof size, " (%u slots of %zu data bytes, %zu messages)", SLOTS, data_bytes, msgs);
                cckey_status st = cu_fail(what, r, size);
                release_slot_buffers();
                return st;
            }
        }
        S.cap_data = data_bytes;
        S.cap_msgs = msgs;
    }
    for (unsigned s = 0; s < SLOTS; s++)
        slots[s] = cckey_gpu_slot_views(S.slot[s].h_in, S.cap_data, S.slot[s].h_out);
    return CCKEY_OK;
}

static cckey_status cuda_launch(void *self, unsigned s, size_t n, size_t data_bytes)
{
    (void)self;
    const cckey_cu_api *cu = S.cu;
    cu_slot *sl = &S.slot[s];
    cckey_CUresult r;
    if (data_bytes && (r = cu->MemcpyHtoDAsync(sl->d_data, sl->h_in, data_bytes, sl->stream)) != CCKEY_CUDA_SUCCESS)
        return cu_fail("cuMemcpyHtoDAsync", r, NULL);
    const uint8_t *meta = (const uint8_t *)sl->h_in + S.cap_data;
    if ((r = cu->MemcpyHtoDAsync(sl->d_meta, meta, 8 * n, sl->stream)) != CCKEY_CUDA_SUCCESS)
        return cu_fail("cuMemcpyHtoDAsync", r, NULL);
    unsigned count = (unsigned)n;
    void *args[] = {&sl->d_data, &sl->d_meta, &sl->d_out, &count};
    unsigned grid = (unsigned)((n + S.block - 1) / S.block);
    if ((r = cu->LaunchKernel(S.fn, grid, 1, 1, S.block, 1, 1, 0, sl->stream, args, NULL)) != CCKEY_CUDA_SUCCESS)
        return cu_fail("cuLaunchKernel", r, NULL);
    if ((r = cu->MemcpyDtoHAsync(sl->h_out, sl->d_out, 16 * n, sl->stream)) != CCKEY_CUDA_SUCCESS)
        return cu_fail("cuMemcpyDtoHAsync", r, NULL);
    return CCKEY_OK;
}

static cckey_status cuda_wait(void *self, unsigned s)
{
    (void)self;
    cckey_CUresult r = S.cu->StreamSynchronize(S.slot[s].stream);
    return r == CCKEY_CUDA_SUCCESS ? CCKEY_OK : cu_fail("cuStreamSynchronize", r, NULL);
}

static void cuda_close(void *self, bool failed)
{
    (void)self;
    if (failed && S.ctx) {
        if (!S.pushed && S.cu->CtxPushCurrent(S.ctx) == CCKEY_CUDA_SUCCESS) S.pushed = true;
        teardown();
    }
    if (S.pushed) {
        cckey_CUcontext popped;
        S.cu->CtxPopCurrent(&popped);
        S.pushed = false;
    }
    if (failed && S.ctx) {
        /* Our retain only: the context itself lives on for other users. */
        S.cu->DevicePrimaryCtxRelease(S.dev->dev);
        S.ctx = NULL;
    }
    pthread_mutex_unlock(&lock);
}

static const cckey_device_info *cuda_device(char *why, size_t why_len)
{
    const cckey_cu_api *cu;
    const cckey_cu_device *d = cckey_cu_selected(&cu, why, why_len);
    return d ? &d->info : NULL;
}

/* ---- the device for the benchmark hooks (cuda_bench.c) ------------------ */

cckey_status cckey_cuda_acquire(const cckey_cu_api **cu, cckey_CUfunction *fn, unsigned *block)
{
    void *self = NULL;
    unsigned slots = 0;
    cckey_status st = cuda_open(&self, &slots);
    if (st != CCKEY_OK) {
        cuda_close(self, true);
        return st;
    }
    *cu = S.cu;
    *fn = S.fn;
    *block = S.block;
    return CCKEY_OK;
}

void cckey_cuda_release(bool failed) { cuda_close(&S, failed); }

/* ---- the backend -------------------------------------------------------- */

static const cckey_gpu_ops engine = {
    .name = "cuda",
    .open = cuda_open,
    .reserve = cuda_reserve,
    .launch = cuda_launch,
    .wait = cuda_wait,
    .close = cuda_close,
    .device = cuda_device,
    /* PCIe/NVLink-C2C transfers dominate; context creation and module load
     * are paid once per process. Conservative figures. */
    .device_gbps = 16.0,
    .setup_s = 0.3,
};

CCKEY_GPU_BACKEND(cckey_backend_cuda, CCKEY_BACKEND_CUDA, "cuda", engine);
