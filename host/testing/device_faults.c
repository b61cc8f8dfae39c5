/* Device faults for the test build, injected around the engines rather than
 * inside them, so that the release sources of the pipeline and the engines
 * carry no test code. The registry hands every device batch of a process
 * with the testing library to gpu_digest below, which (when the batch's
 * settings ask for a fault) runs the pipeline over the engine's own ops
 * wrapped here:
 *  - fault_chunk k: the launch of the batch's chunk k (from 0) fails with
 *    CCKEY_ERR_DEVICE, as a driver error at that call would;
 *  - fault_corrupt: once the engine says a chunk is back, the first digest
 *    of it has a bit flipped (a device that is silently wrong: what
 *    --verify is for);
 *  - fault_build: the kernel build fails through the engine's real
 *    build-error path. The driver table's program call is wrapped: OpenCL
 *    compiles an #error line before the kernel, CUDA loads the image with
 *    its header wiped. The native engine checks fault_build itself.
 * The pipeline calls one batch's open..close on one thread, so the batch's
 * fault state is thread-local. The testing library puts this wrapper in
 * every device batch's way through the registry's hook table, before main:
 * the release sources only carry the table's NULL slot. */
#include "testing.h"
#include "../backends/gpu_pipeline.h"
#include "../batch/config.h"
#include "../core/internal.h"
#ifdef CCKEY_WITH_OPENCL
#include "../backends/cl_loader.h"
#endif
#ifdef CCKEY_WITH_CUDA
#include "../backends/cuda_backend.h"
#include "../backends/cuda_loader.h"
#endif

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUILD_FAULT "CCKEY_FAULT_BUILD"

typedef struct batch_faults {
    const cckey_gpu_ops *engine;   /* the wrapped engine */
    long chunk;                    /* -1: none */
    bool corrupt, build;
    unsigned long launched;        /* chunks launched so far */
} batch_faults;

static _Thread_local batch_faults cur;
/* Set while this thread's engine sets up for a batch that asks for a failed
 * build: the wrapped driver calls below act only then. */
static _Thread_local bool build_armed;

/* ---- the driver tables' program calls -------------------------------------
 * The loaders' tables are plain static objects (returned as const to their
 * users); the test build swaps one entry of each, once, before the first
 * build it fails. An unarmed call goes straight to the driver. */

#ifdef CCKEY_WITH_OPENCL
static cl_program (*real_create_program)(cl_context, cl_uint, const char **, const size_t *, cl_int *);

static cl_program create_program(cl_context ctx, cl_uint n, const char **srcs, const size_t *lens, cl_int *err)
{
    if (!build_armed || n != 1) return real_create_program(ctx, n, srcs, lens, err);
    const char *both[2] = {"#error injected build failure (" BUILD_FAULT ")\n", srcs[0]};
    size_t both_lens[2] = {strlen(both[0]), lens ? lens[0] : strlen(srcs[0])};
    return real_create_program(ctx, 2, both, both_lens, err);
}

static void wrap_opencl(void)
{
    cckey_cl_api *cl = (cckey_cl_api *)cckey_cl_load(NULL);
    if (!cl) return;
    real_create_program = cl->CreateProgramWithSource;
    cl->CreateProgramWithSource = create_program;
}
#endif

#ifdef CCKEY_WITH_CUDA
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_INVALID_IMAGE 200

static cckey_CUresult (*real_load_module)(cckey_CUmodule *, const void *);
static cckey_CUresult (*real_unload_module)(cckey_CUmodule);

/* The engine loads the embedded fatbin: a copy of it whose first 64 bytes
 * are zero goes through the driver's real image check. */
static cckey_CUresult load_module(cckey_CUmodule *m, const void *image)
{
    if (!build_armed || image != cckey_md5_fatbin) return real_load_module(m, image);
    size_t n = cckey_md5_fatbin_len;
    unsigned char *broken = malloc(n ? n : 1);
    if (!broken) return CUDA_ERROR_OUT_OF_MEMORY;
    memcpy(broken, image, n);
    memset(broken, 0, n < 64 ? n : 64);
    cckey_CUresult r = real_load_module(m, broken);
    free(broken);
    if (r == CCKEY_CUDA_SUCCESS) {
        /* A driver that accepts the wiped image still fails here. */
        real_unload_module(*m);
        *m = NULL;
        r = CUDA_ERROR_INVALID_IMAGE;
    }
    return r;
}

static void wrap_cuda(void)
{
    cckey_cu_api *cu = (cckey_cu_api *)cckey_cu_load(NULL);
    if (!cu) return;
    real_load_module = cu->ModuleLoadData;
    real_unload_module = cu->ModuleUnload;
    cu->ModuleLoadData = load_module;
}
#endif

#ifdef CCKEY_WITH_OPENCL
extern const cckey_gpu_ops cckey_opencl_engine;
static pthread_once_t cl_once = PTHREAD_ONCE_INIT;
#endif
#ifdef CCKEY_WITH_CUDA
extern const cckey_gpu_ops cckey_cuda_engine;
static pthread_once_t cu_once = PTHREAD_ONCE_INIT;
#endif

/* Only the driver this engine uses is loaded: another may be absent. */
static void wrap_drivers(const cckey_gpu_ops *engine)
{
#ifdef CCKEY_WITH_OPENCL
    if (engine == &cckey_opencl_engine) pthread_once(&cl_once, wrap_opencl);
#endif
#ifdef CCKEY_WITH_CUDA
    if (engine == &cckey_cuda_engine) pthread_once(&cu_once, wrap_cuda);
#endif
    (void)engine;
}

/* ---- the wrapped engine ------------------------------------------------- */

static cckey_status f_open(cckey_gpu_engine **self, const cckey_device_settings *s, unsigned *slots)
{
    cur.launched = 0;   /* chunks count per device run, as the pipeline's do */
    if (cur.build) wrap_drivers(cur.engine);
    build_armed = cur.build;
    cckey_status st = cur.engine->open(self, s, slots);
    build_armed = false;
    if (st != CCKEY_OK && cur.build && !strstr(cckey_last_error(), BUILD_FAULT)) {
        char was[1024];
        snprintf(was, sizeof was, "%s", cckey_last_error());
        st = cckey_fail(st, "%s (injected by " BUILD_FAULT ")", was);
    }
    return st;
}

static cckey_status f_alloc(cckey_gpu_engine *self, size_t data_bytes, size_t msgs)
{
    return cur.engine->alloc(self, data_bytes, msgs);
}

static cckey_status f_release(cckey_gpu_engine *self) { return cur.engine->release(self); }

static cckey_status f_launch(cckey_gpu_engine *self, unsigned s, size_t n, size_t data_bytes)
{
    if (cur.chunk >= 0 && cur.launched == (unsigned long)cur.chunk)
        return cckey_fail(CCKEY_ERR_DEVICE, "%s: injected fault before chunk %lu (CCKEY_FAULT_CHUNK)",
                          cur.engine->name, cur.launched);
    cur.launched++;
    return cur.engine->launch(self, s, n, data_bytes);
}

static cckey_status f_wait(cckey_gpu_engine *self, unsigned s)
{
    cckey_status st = cur.engine->wait(self, s);
    /* Staging is host memory the engine hands out read-only; the digest is
     * final here, and the pipeline reads it next. */
    if (st == CCKEY_OK && cur.corrupt) ((uint32_t *)self->slot[s].digests)[0] ^= 1;
    return st;
}

static cckey_status f_close(cckey_gpu_engine *self, bool failed) { return cur.engine->close(self, failed); }

static cckey_status gpu_digest(const cckey_digest_job *job, const cckey_gpu_ops *engine)
{
    const cckey_device_settings *s = job->settings ? job->settings : &cckey_device_settings_default;
    if (s->fault_chunk < 0 && !s->fault_corrupt && !s->fault_build) return cckey_gpu_digest(job, engine);
    cckey_gpu_ops wrapped = *engine;
    wrapped.open = f_open, wrapped.alloc = f_alloc, wrapped.release = f_release;
    wrapped.launch = f_launch, wrapped.wait = f_wait, wrapped.close = f_close;
    batch_faults saved = cur;
    cur = (batch_faults){
        .engine = engine, .chunk = s->fault_chunk, .corrupt = s->fault_corrupt, .build = s->fault_build};
    cckey_status st = cckey_gpu_digest(job, &wrapped);
    cur = saved;
    return st;
}

static const cckey_backend_hook_table hooks = {.gpu_digest = gpu_digest};

__attribute__((constructor)) static void install(void) { cckey_backend_hooks = &hooks; }

cckey_status cckey_testing_set_faults(cckey_batch_config *cfg, long chunk, bool corrupt, bool build)
{
    if (!cfg) return cckey_fail(CCKEY_ERR_INVALID_ARG, "config is NULL");
    if (chunk < -1) return cckey_fail(CCKEY_ERR_INVALID_ARG, "fault chunk %ld: expected -1 or a chunk number", chunk);
    cfg->device.fault_chunk = chunk;
    cfg->device.fault_corrupt = corrupt;
    cfg->device.fault_build = build;
    return CCKEY_OK;
}
