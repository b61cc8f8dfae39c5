/* The CUDA backend: the shared device pipeline (gpu_pipeline.c) driven
 * through the CUDA driver loaded at run time (cuda_loader.c), running the
 * kernel from the fatbin embedded at build time.
 *
 * The device's primary context is shared with the rest of the process (a
 * CUDA runtime user in the same process sees the same context); cckey
 * pushes it onto the calling thread for a batch and pops it after. An
 * engine (engine_pool.h) holds its retain of that context, a module, a ring
 * of streams and pinned staging buffers, built on its first batch and kept;
 * concurrent batches get engines of their own. After any device error the
 * engine's state is released and rebuilt on its next batch. */
#include "cuda_backend.h"
#include "engine_pool.h"
#include "gpu_pipeline.h"
#include "../core/internal.h"

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

typedef struct cu_engine {
    cckey_gpu_engine base;   /* first: the pipeline's view */
    const cckey_cu_api *cu;
    const cckey_cu_device *dev;
    cckey_CUcontext ctx;   /* the retained primary context, NULL when not held */
    bool pushed;
    cckey_CUmodule module;
    cckey_CUfunction fn;
    unsigned block;
    cu_slot slot[SLOTS];
} cu_engine;

static cckey_engine_pool pool = CCKEY_ENGINE_POOL_INIT(cu_engine);

static cckey_status cu_fail(const cu_engine *S, const char *call, cckey_CUresult r, const char *extra)
{
    char what[384];
    cckey_cu_describe(S->cu, r, what, sizeof what);
    return cckey_fail(CCKEY_ERR_DEVICE, "CUDA %s failed on '%s': %s%s", call, S->dev ? S->dev->info.name : "?", what,
                      extra ? extra : "");
}

static void free_slot(const cckey_cu_api *cu, cu_slot *sl, cckey_refusal *f)
{
    if (sl->stream) cckey_refusal_note(f, "cuStreamSynchronize", cu->StreamSynchronize(sl->stream));
    cckey_CUdeviceptr *dev[] = {&sl->d_data, &sl->d_meta, &sl->d_out};
    for (size_t k = 0; k < sizeof dev / sizeof *dev; k++)
        if (*dev[k]) {
            cckey_refusal_note(f, "cuMemFree", cu->MemFree(*dev[k]));
            *dev[k] = 0;
        }
    void **host[] = {&sl->h_in, &sl->h_out};
    for (size_t k = 0; k < sizeof host / sizeof *host; k++)
        if (*host[k]) {
            cckey_refusal_note(f, "cuMemFreeHost", cu->MemFreeHost(*host[k]));
            *host[k] = NULL;
        }
}

static void release_slots(cu_engine *S, cckey_refusal *f)
{
    for (unsigned s = 0; s < SLOTS; s++) free_slot(S->cu, &S->slot[s], f);
    S->base.cap_data = S->base.cap_msgs = 0;
}

static cckey_status cuda_release(cckey_gpu_engine *self)
{
    cu_engine *S = (cu_engine *)self;
    cckey_refusal f = {NULL, 0};
    release_slots(S, &f);
    return f.call ? cu_fail(S, f.call, f.code, " (releasing staging)") : CCKEY_OK;
}

/* Everything but the context push, which close() undoes, released whatever
 * the driver says and reporting nothing: this runs after a failure (whose
 * message must stand) or for another device. */
static void teardown(cu_engine *S)
{
    if (!S->cu || !S->ctx) return;
    const cckey_cu_api *cu = S->cu;
    cckey_refusal ignored = {NULL, 0};
    release_slots(S, &ignored);
    for (unsigned s = 0; s < SLOTS; s++)
        if (S->slot[s].stream) cu->StreamDestroy(S->slot[s].stream), S->slot[s].stream = NULL;
    if (S->module) cu->ModuleUnload(S->module);
    S->module = NULL;
    S->fn = NULL;
}

/* The context retain and push of an engine, undone; f gets the first
 * refused call. */
static void drop_context(cu_engine *S, bool release, cckey_refusal *f)
{
    if (S->pushed) {
        cckey_CUcontext popped;
        cckey_refusal_note(f, "cuCtxPopCurrent", S->cu->CtxPopCurrent(&popped));
        S->pushed = false;
    }
    if (release && S->ctx) {
        /* Our retain only: the context itself lives on for other users. */
        cckey_refusal_note(f, "cuDevicePrimaryCtxRelease", S->cu->DevicePrimaryCtxRelease(S->dev->dev));
        S->ctx = NULL;
    }
}

static cckey_status load_module(cu_engine *S)
{
    const cckey_cu_api *cu = S->cu;
    cckey_CUresult r = cu->ModuleLoadData(&S->module, cckey_md5_fatbin);
    if (r != CCKEY_CUDA_SUCCESS) {
        S->module = NULL;
        return cu_fail(S, "cuModuleLoadData", r, NULL);
    }
    if ((r = cu->ModuleGetFunction(&S->fn, S->module, CCKEY_GPU_KERNEL_NAME)) != CCKEY_CUDA_SUCCESS)
        return cu_fail(S, "cuModuleGetFunction", r, NULL);
    int max_threads = 0;
    if (cu->FuncGetAttribute(&max_threads, CCKEY_CU_FUNC_MAX_THREADS_PER_BLOCK, S->fn) != CCKEY_CUDA_SUCCESS)
        max_threads = 0;
    S->block = max_threads > 0 && (unsigned)max_threads < BLOCK ? (unsigned)max_threads : BLOCK;
    return CCKEY_OK;
}

static cckey_status setup(cu_engine *S)
{
    const cckey_cu_api *cu = S->cu;
    cckey_CUresult r;
    for (unsigned s = 0; s < SLOTS; s++)
        if ((r = cu->StreamCreate(&S->slot[s].stream, CCKEY_CU_STREAM_NON_BLOCKING)) != CCKEY_CUDA_SUCCESS) {
            S->slot[s].stream = NULL;
            return cu_fail(S, "cuStreamCreate", r, NULL);
        }
    return load_module(S);
}

/* ---- the pipeline's engine ---------------------------------------------- */

static cckey_status cuda_open(cckey_gpu_engine **self, const cckey_device_settings *set, unsigned *slots)
{
    *slots = SLOTS;
    char why[512];
    const cckey_cu_api *cu;
    const cckey_cu_device *dev = cckey_cu_selected(cckey_device_selector(set, CCKEY_BACKEND_CUDA), &cu, why, sizeof why);
    bool same;
    cckey_status st = cckey_engine_open(&pool, dev, why, "CUDA", self, &same);
    if (st != CCKEY_OK) return st;
    cu_engine *S = (cu_engine *)*self;
    if (!same && S->ctx) {
        /* It served another device: its state goes, in that device's context. */
        if (S->cu->CtxPushCurrent(S->ctx) == CCKEY_CUDA_SUCCESS) S->pushed = true;
        teardown(S);
        cckey_refusal ignored = {NULL, 0};
        drop_context(S, true, &ignored);
    }
    S->cu = cu, S->dev = dev;
    cckey_CUresult r;
    if (!S->ctx && (r = cu->DevicePrimaryCtxRetain(&S->ctx, dev->dev)) != CCKEY_CUDA_SUCCESS) {
        S->ctx = NULL;
        return cu_fail(S, "cuDevicePrimaryCtxRetain", r, NULL);
    }
    if ((r = cu->CtxPushCurrent(S->ctx)) != CCKEY_CUDA_SUCCESS) return cu_fail(S, "cuCtxPushCurrent", r, NULL);
    S->pushed = true;
    return S->fn ? CCKEY_OK : setup(S);
}

static cckey_status cuda_alloc(cckey_gpu_engine *self, size_t data_bytes, size_t msgs)
{
    cu_engine *S = (cu_engine *)self;
    const cckey_cu_api *cu = S->cu;
    for (unsigned s = 0; s < SLOTS; s++) {
        cu_slot *sl = &S->slot[s];
        cckey_CUresult r;
        const char *what = "cuMemAlloc";
        if ((r = cu->MemAlloc(&sl->d_data, data_bytes)) != CCKEY_CUDA_SUCCESS ||
            (r = cu->MemAlloc(&sl->d_meta, 8 * msgs)) != CCKEY_CUDA_SUCCESS ||
            (r = cu->MemAlloc(&sl->d_out, 16 * msgs)) != CCKEY_CUDA_SUCCESS ||
            (what = "cuMemHostAlloc", r = cu->MemHostAlloc(&sl->h_in, data_bytes + 8 * msgs, 0)) != CCKEY_CUDA_SUCCESS ||
            (r = cu->MemHostAlloc(&sl->h_out, 16 * msgs, 0)) != CCKEY_CUDA_SUCCESS) {
            char size[96];
            snprintf(size, sizeof size, " (%u slots of %zu data bytes, %zu messages)", SLOTS, data_bytes, msgs);
            return cu_fail(S, what, r, size);
        }
        S->base.slot[s] = cckey_gpu_slot_views(sl->h_in, data_bytes, sl->h_out);
    }
    return CCKEY_OK;
}

static cckey_status cuda_launch(cckey_gpu_engine *self, unsigned s, size_t n, size_t data_bytes)
{
    cu_engine *S = (cu_engine *)self;
    const cckey_cu_api *cu = S->cu;
    cu_slot *sl = &S->slot[s];
    cckey_CUresult r;
    if (data_bytes && (r = cu->MemcpyHtoDAsync(sl->d_data, sl->h_in, data_bytes, sl->stream)) != CCKEY_CUDA_SUCCESS)
        return cu_fail(S, "cuMemcpyHtoDAsync", r, NULL);
    const uint8_t *meta = (const uint8_t *)sl->h_in + S->base.cap_data;
    if ((r = cu->MemcpyHtoDAsync(sl->d_meta, meta, 8 * n, sl->stream)) != CCKEY_CUDA_SUCCESS)
        return cu_fail(S, "cuMemcpyHtoDAsync", r, NULL);
    unsigned count = (unsigned)n;
    void *args[] = {&sl->d_data, &sl->d_meta, &sl->d_out, &count};
    unsigned grid = (unsigned)((n + S->block - 1) / S->block);
    if ((r = cu->LaunchKernel(S->fn, grid, 1, 1, S->block, 1, 1, 0, sl->stream, args, NULL)) != CCKEY_CUDA_SUCCESS)
        return cu_fail(S, "cuLaunchKernel", r, NULL);
    if ((r = cu->MemcpyDtoHAsync(sl->h_out, sl->d_out, 16 * n, sl->stream)) != CCKEY_CUDA_SUCCESS)
        return cu_fail(S, "cuMemcpyDtoHAsync", r, NULL);
    return CCKEY_OK;
}

static cckey_status cuda_wait(cckey_gpu_engine *self, unsigned s)
{
    cu_engine *S = (cu_engine *)self;
    cckey_CUresult r = S->cu->StreamSynchronize(S->slot[s].stream);
    return r == CCKEY_CUDA_SUCCESS ? CCKEY_OK : cu_fail(S, "cuStreamSynchronize", r, NULL);
}

static cckey_status cuda_close(cckey_gpu_engine *self, bool failed)
{
    if (!self) return CCKEY_OK;
    cu_engine *S = (cu_engine *)self;
    if (failed && S->ctx) {
        if (!S->pushed && S->cu->CtxPushCurrent(S->ctx) == CCKEY_CUDA_SUCCESS) S->pushed = true;
        teardown(S);
    }
    cckey_refusal f = {NULL, 0};
    drop_context(S, failed, &f);
    cckey_status st = CCKEY_OK;
    if (!failed && f.call) {
        /* Every chunk came back, but the driver would not let the context
         * go: the batch says so, and the engine's state goes as after a
         * failure (the context, still current, serves the teardown). */
        st = cu_fail(S, f.call, f.code, " (giving the device back)");
        teardown(S);
        drop_context(S, true, &f);
    }
    cckey_engine_give(&pool, S);
    return st;
}

static const cckey_device_info *cuda_device(const cckey_device_settings *set, char *why, size_t why_len)
{
    const cckey_cu_api *cu;
    const cckey_cu_device *d = cckey_cu_selected(cckey_device_selector(set, CCKEY_BACKEND_CUDA), &cu, why, why_len);
    return d ? &d->info : NULL;
}

/* ---- the device for the benchmark hooks (bench/cuda_bench.c) ------------ */

cckey_status cckey_cuda_acquire(void **engine, const cckey_cu_api **cu, cckey_CUfunction *fn, unsigned *block)
{
    cckey_gpu_engine *self = NULL;
    unsigned slots = 0;
    cckey_status st = cuda_open(&self, &cckey_device_settings_default, &slots);
    *engine = self;
    if (st != CCKEY_OK) {
        cuda_close(self, true);
        *engine = NULL;
        return st;
    }
    cu_engine *S = (cu_engine *)self;
    *cu = S->cu;
    *fn = S->fn;
    *block = S->block;
    return CCKEY_OK;
}

void cckey_cuda_release(void *engine, bool failed) { cuda_close(engine, failed); }

/* PCIe/NVLink-C2C transfers dominate; context creation and module load are
 * paid once per process. Conservative figures. */
const cckey_gpu_ops cckey_cuda_engine = CCKEY_GPU_OPS(cuda, "cuda", 16.0, 0.3);
