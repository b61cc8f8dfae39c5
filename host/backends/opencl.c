/* The OpenCL backend: the shared device pipeline (gpu_pipeline.c) driven
 * through an OpenCL runtime loaded at run time (cl_loader.c).
 *
 * An engine (engine_pool.h) holds a context, program, queues and staging
 * buffers for one device; it is built on its first batch and kept, since
 * building the program costs far more than a typical batch. Concurrent
 * batches get engines of their own. After any device error the engine's
 * state is dropped and rebuilt on its next batch. */
#include "opencl.h"
#include "engine_pool.h"
#include "gpu_pipeline.h"
#include "../core/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 3u
#define GROUP 64u   /* work-items per group; capped by what the kernel allows */

typedef struct cl_slot {
    cl_command_queue q;
    cl_mem d_data, d_meta, d_out;   /* device buffers */
    cl_mem h_in, h_out;             /* pinned staging, mapped for the engine's life */
    void *in_map, *out_map;
} cl_slot;

typedef struct cl_engine {
    cckey_gpu_engine base;   /* first: the pipeline's view */
    const cckey_cl_api *cl;
    const cckey_cl_device *dev;
    bool ready;
    cl_context ctx;
    cl_program prog;
    cl_kernel kern;
    size_t group;
    cl_slot slot[SLOTS];
} cl_engine;

static cckey_engine_pool pool = CCKEY_ENGINE_POOL_INIT(cl_engine);

static cckey_status cl_fail(const cl_engine *S, const char *call, cl_int e)
{
    return cckey_fail(e == CL_OUT_OF_HOST_MEMORY ? CCKEY_ERR_NO_MEMORY : CCKEY_ERR_DEVICE,
                      "OpenCL %s failed on '%s': %s (%d)", call, S->dev ? S->dev->info.name : "?",
                      cckey_cl_status_name(e), (int)e);
}

static void release_slots(cl_engine *S, cckey_refusal *f)
{
    const cckey_cl_api *cl = S->cl;
    for (unsigned s = 0; s < SLOTS; s++) {
        cl_slot *sl = &S->slot[s];
        cl_mem mapped[] = {sl->h_in, sl->h_out};
        void *maps[] = {sl->in_map, sl->out_map};
        for (size_t k = 0; k < 2; k++)
            if (maps[k])
                cckey_refusal_note(f, "clEnqueueUnmapMemObject",
                                   cl->EnqueueUnmapMemObject(sl->q, mapped[k], maps[k], 0, NULL, NULL));
        if (sl->q) cckey_refusal_note(f, "clFinish", cl->Finish(sl->q));
        cl_mem *mems[] = {&sl->d_data, &sl->d_meta, &sl->d_out, &sl->h_in, &sl->h_out};
        for (size_t k = 0; k < sizeof mems / sizeof *mems; k++)
            if (*mems[k]) {
                cckey_refusal_note(f, "clReleaseMemObject", cl->ReleaseMemObject(*mems[k]));
                *mems[k] = NULL;
            }
        sl->in_map = sl->out_map = NULL;
    }
    S->base.cap_data = S->base.cap_msgs = 0;
}

static cckey_status ocl_release(cckey_gpu_engine *self)
{
    cl_engine *S = (cl_engine *)self;
    cckey_refusal f = {NULL, 0};
    release_slots(S, &f);
    return f.call ? cl_fail(S, f.call, f.code) : CCKEY_OK;
}

/* Everything of the engine, released whatever the runtime says and
 * reporting nothing: this runs after a failure (whose message must stand)
 * or for another device. */
static void teardown(cl_engine *S)
{
    if (!S->cl) return;
    const cckey_cl_api *cl = S->cl;
    cckey_refusal ignored = {NULL, 0};
    release_slots(S, &ignored);
    for (unsigned s = 0; s < SLOTS; s++)
        if (S->slot[s].q) cl->ReleaseCommandQueue(S->slot[s].q), S->slot[s].q = NULL;
    if (S->kern) cl->ReleaseKernel(S->kern);
    if (S->prog) cl->ReleaseProgram(S->prog);
    if (S->ctx) cl->ReleaseContext(S->ctx);
    S->kern = NULL, S->prog = NULL, S->ctx = NULL;
    S->ready = false;
}

static cckey_status build_program(cl_engine *S)
{
    const cckey_cl_api *cl = S->cl;
    cl_int e;
    const char *src = cckey_md5_cl_source;
    size_t len = cckey_md5_cl_source_len;
    S->prog = cl->CreateProgramWithSource(S->ctx, 1, &src, &len, &e);
    if (!S->prog) return cl_fail(S, "clCreateProgramWithSource", e);
    e = cl->BuildProgram(S->prog, 1, &S->dev->device, "-cl-std=CL1.2", NULL, NULL);
    if (e != CL_SUCCESS) {
        char log[700] = "";
        size_t got = 0;
        cl->GetProgramBuildInfo(S->prog, S->dev->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, &got);
        log[sizeof log - 1] = '\0';
        if (got >= sizeof log) memcpy(log + sizeof log - 5, "...", 4);
        return cckey_fail(CCKEY_ERR_DEVICE, "OpenCL program build failed on '%s': %s (%d); build log: %s",
                          S->dev->info.name, cckey_cl_status_name(e), (int)e, *log ? log : "(empty)");
    }
    S->kern = cl->CreateKernel(S->prog, CCKEY_GPU_KERNEL_NAME, &e);
    if (!S->kern) return cl_fail(S, "clCreateKernel", e);
    size_t max_group = 0;
    e = cl->GetKernelWorkGroupInfo(S->kern, S->dev->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof max_group, &max_group,
                                   NULL);
    if (e != CL_SUCCESS) return cl_fail(S, "clGetKernelWorkGroupInfo", e);
    S->group = max_group && max_group < GROUP ? max_group : GROUP;
    return CCKEY_OK;
}

static cckey_status setup(cl_engine *S)
{
    const cckey_cl_api *cl = S->cl;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)S->dev->platform, 0};
    cl_int e;
    S->ctx = cl->CreateContext(props, 1, &S->dev->device, NULL, NULL, &e);
    if (!S->ctx) return cl_fail(S, "clCreateContext", e);
    for (unsigned s = 0; s < SLOTS; s++) {
        S->slot[s].q = cl->CreateCommandQueue(S->ctx, S->dev->device, 0, &e);
        if (!S->slot[s].q) return cl_fail(S, "clCreateCommandQueue", e);
    }
    cckey_status st = build_program(S);
    if (st == CCKEY_OK) S->ready = true;
    return st;
}

/* ---- the pipeline's engine ---------------------------------------------- */

static cckey_status ocl_open(cckey_gpu_engine **self, const cckey_device_settings *set, unsigned *slots)
{
    *slots = SLOTS;
    char why[512];
    const cckey_cl_api *cl;
    const cckey_cl_device *dev = cckey_cl_selected(cckey_device_selector(set, CCKEY_BACKEND_OPENCL), &cl, why, sizeof why);
    bool same;
    cckey_status st = cckey_engine_open(&pool, dev, why, "OpenCL", self, &same);
    if (st != CCKEY_OK) return st;
    cl_engine *S = (cl_engine *)*self;
    if (!same) teardown(S);
    S->cl = cl, S->dev = dev;
    return S->ready ? CCKEY_OK : setup(S);
}

static cckey_status ocl_alloc(cckey_gpu_engine *self, size_t data_bytes, size_t msgs)
{
    cl_engine *S = (cl_engine *)self;
    const cckey_cl_api *cl = S->cl;
    for (unsigned s = 0; s < SLOTS; s++) {
        cl_slot *sl = &S->slot[s];
        cl_int e = CL_SUCCESS;
        const char *what = "clCreateBuffer";
        if (!(sl->d_data = cl->CreateBuffer(S->ctx, CL_MEM_READ_ONLY, data_bytes, NULL, &e)) ||
            !(sl->d_meta = cl->CreateBuffer(S->ctx, CL_MEM_READ_ONLY, 8 * msgs, NULL, &e)) ||
            !(sl->d_out = cl->CreateBuffer(S->ctx, CL_MEM_WRITE_ONLY, 16 * msgs, NULL, &e)) ||
            !(sl->h_in = cl->CreateBuffer(S->ctx, CL_MEM_ALLOC_HOST_PTR, data_bytes + 8 * msgs, NULL, &e)) ||
            !(sl->h_out = cl->CreateBuffer(S->ctx, CL_MEM_ALLOC_HOST_PTR, 16 * msgs, NULL, &e)) ||
            (what = "clEnqueueMapBuffer",
             !(sl->in_map = cl->EnqueueMapBuffer(sl->q, sl->h_in, CL_TRUE, CL_MAP_WRITE, 0, data_bytes + 8 * msgs, 0,
                                                 NULL, NULL, &e))) ||
            !(sl->out_map =
                  cl->EnqueueMapBuffer(sl->q, sl->h_out, CL_TRUE, CL_MAP_READ, 0, 16 * msgs, 0, NULL, NULL, &e)))
            return cl_fail(S, what, e);
        S->base.slot[s] = cckey_gpu_slot_views(sl->in_map, data_bytes, sl->out_map);
    }
    return CCKEY_OK;
}

static cckey_status ocl_launch(cckey_gpu_engine *self, unsigned s, size_t n, size_t data_bytes)
{
    cl_engine *S = (cl_engine *)self;
    const cckey_cl_api *cl = S->cl;
    cl_slot *sl = &S->slot[s];
    cl_int e;
    if (data_bytes &&
        (e = cl->EnqueueWriteBuffer(sl->q, sl->d_data, CL_FALSE, 0, data_bytes, sl->in_map, 0, NULL, NULL)) != CL_SUCCESS)
        return cl_fail(S, "clEnqueueWriteBuffer", e);
    const uint8_t *meta = (const uint8_t *)sl->in_map + S->base.cap_data;
    if ((e = cl->EnqueueWriteBuffer(sl->q, sl->d_meta, CL_FALSE, 0, 8 * n, meta, 0, NULL, NULL)) != CL_SUCCESS)
        return cl_fail(S, "clEnqueueWriteBuffer", e);
    cl_uint count = (cl_uint)n;
    /* Arguments are captured at enqueue time, so one kernel object serves
     * every slot (only the batch's calling thread enqueues). */
    if ((e = cl->SetKernelArg(S->kern, 0, sizeof(cl_mem), &sl->d_data)) != CL_SUCCESS ||
        (e = cl->SetKernelArg(S->kern, 1, sizeof(cl_mem), &sl->d_meta)) != CL_SUCCESS ||
        (e = cl->SetKernelArg(S->kern, 2, sizeof(cl_mem), &sl->d_out)) != CL_SUCCESS ||
        (e = cl->SetKernelArg(S->kern, 3, sizeof count, &count)) != CL_SUCCESS)
        return cl_fail(S, "clSetKernelArg", e);
    size_t local = S->group, global = (n + local - 1) / local * local;
    if ((e = cl->EnqueueNDRangeKernel(sl->q, S->kern, 1, NULL, &global, &local, 0, NULL, NULL)) != CL_SUCCESS)
        return cl_fail(S, "clEnqueueNDRangeKernel", e);
    if ((e = cl->EnqueueReadBuffer(sl->q, sl->d_out, CL_FALSE, 0, 16 * n, sl->out_map, 0, NULL, NULL)) != CL_SUCCESS)
        return cl_fail(S, "clEnqueueReadBuffer", e);
    if ((e = cl->Flush(sl->q)) != CL_SUCCESS) return cl_fail(S, "clFlush", e);
    return CCKEY_OK;
}

static cckey_status ocl_wait(cckey_gpu_engine *self, unsigned s)
{
    cl_engine *S = (cl_engine *)self;
    cl_int e = S->cl->Finish(S->slot[s].q);
    return e == CL_SUCCESS ? CCKEY_OK : cl_fail(S, "clFinish", e);
}

static cckey_status ocl_close(cckey_gpu_engine *self, bool failed)
{
    if (!self) return CCKEY_OK;
    cl_engine *S = (cl_engine *)self;
    if (failed) teardown(S);
    cckey_engine_give(&pool, S);
    return CCKEY_OK;
}

static const cckey_device_info *ocl_device(const cckey_device_settings *set, char *why, size_t why_len)
{
    const cckey_cl_api *cl;
    const cckey_cl_device *d = cckey_cl_selected(cckey_device_selector(set, CCKEY_BACKEND_OPENCL), &cl, why, why_len);
    return d ? &d->info : NULL;
}

/* Discrete GPUs over PCIe, with the program built from source on first use:
 * conservative figures. */
const cckey_gpu_ops cckey_opencl_engine = CCKEY_GPU_OPS(ocl, "opencl", 8.0, 0.5);
