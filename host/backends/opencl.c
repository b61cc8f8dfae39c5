/* The OpenCL backend: the shared device pipeline (gpu_pipeline.c) driven
 * through an OpenCL runtime loaded at run time (cl_loader.c).
 *
 * One context, program and set of staging buffers serve the whole process;
 * they are built on the first batch and kept, since building the program
 * costs far more than a typical batch. A mutex gives the device to one
 * batch at a time; concurrent batches wait for it (their CPU work does
 * not). After any device error the state is dropped and rebuilt on the
 * next batch. */
#include "opencl.h"
#include "gpu_pipeline.h"
#include "../core/internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 3u
#define GROUP 64u   /* work-items per group; capped by what the kernel allows */

typedef struct cl_slot {
    cl_command_queue q;
    cl_mem d_data, d_meta, d_out;   /* device buffers */
    cl_mem h_in, h_out;             /* pinned staging, mapped for the session's life */
    void *in_map, *out_map;
    size_t n;                       /* messages of the chunk in flight */
} cl_slot;

typedef struct cl_state {
    const cckey_cl_api *cl;
    const cckey_cl_device *dev;
    bool ready;
    cl_context ctx;
    cl_program prog;
    cl_kernel kern;
    size_t group;
    cl_slot slot[SLOTS];
    size_t cap_data, cap_msgs;
} cl_state;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cl_state S;

static cckey_status cl_fail(const char *call, cl_int e)
{
    return cckey_fail(e == CL_OUT_OF_HOST_MEMORY ? CCKEY_ERR_NO_MEMORY : CCKEY_ERR_DEVICE,
                      "OpenCL %s failed on '%s': %s (%d)", call, S.dev ? S.dev->info.name : "?",
                      cckey_cl_status_name(e), (int)e);
}

static void release_slot_buffers(void)
{
    const cckey_cl_api *cl = S.cl;
    for (unsigned s = 0; s < SLOTS; s++) {
        cl_slot *sl = &S.slot[s];
        if (sl->in_map) cl->EnqueueUnmapMemObject(sl->q, sl->h_in, sl->in_map, 0, NULL, NULL);
        if (sl->out_map) cl->EnqueueUnmapMemObject(sl->q, sl->h_out, sl->out_map, 0, NULL, NULL);
        if (sl->q) cl->Finish(sl->q);
        cl_mem *mems[] = {&sl->d_data, &sl->d_meta, &sl->d_out, &sl->h_in, &sl->h_out};
        for (size_t k = 0; k < sizeof mems / sizeof *mems; k++)
            if (*mems[k]) cl->ReleaseMemObject(*mems[k]), *mems[k] = NULL;
        sl->in_map = sl->out_map = NULL;
    }
    S.cap_data = S.cap_msgs = 0;
}

static void teardown(void)
{
    if (!S.cl) return;
    const cckey_cl_api *cl = S.cl;
    release_slot_buffers();
    for (unsigned s = 0; s < SLOTS; s++)
        if (S.slot[s].q) cl->ReleaseCommandQueue(S.slot[s].q), S.slot[s].q = NULL;
    if (S.kern) cl->ReleaseKernel(S.kern);
    if (S.prog) cl->ReleaseProgram(S.prog);
    if (S.ctx) cl->ReleaseContext(S.ctx);
    S.kern = NULL, S.prog = NULL, S.ctx = NULL;
    S.ready = false;
}

static cckey_status build_program(void)
{
    const cckey_cl_api *cl = S.cl;
    cl_int e;
    /* The injected fault goes through the real build-failure path. */
    const char *srcs[2] = {"#error injected build failure (CCKEY_FAULT_BUILD)\n", cckey_md5_cl_source};
    size_t lens[2] = {strlen(srcs[0]), cckey_md5_cl_source_len};
    unsigned first = cckey_gpu_fault_build() ? 0 : 1;
    S.prog = cl->CreateProgramWithSource(S.ctx, 2 - first, srcs + first, lens + first, &e);
    if (!S.prog) return cl_fail("clCreateProgramWithSource", e);
    e = cl->BuildProgram(S.prog, 1, &S.dev->device, "-cl-std=CL1.2", NULL, NULL);
    if (e != CL_SUCCESS) {
        char log[700] = "";
        size_t got = 0;
        cl->GetProgramBuildInfo(S.prog, S.dev->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, &got);
        log[sizeof log - 1] = '\0';
        if (got >= sizeof log) memcpy(log + sizeof log - 5, "...", 4);
        return cckey_fail(CCKEY_ERR_DEVICE, "OpenCL program build failed on '%s': %s (%d); build log: %s",
                          S.dev->info.name, cckey_cl_status_name(e), (int)e, *log ? log : "(empty)");
    }
    S.kern = cl->CreateKernel(S.prog, CCKEY_GPU_KERNEL_NAME, &e);
    if (!S.kern) return cl_fail("clCreateKernel", e);
    size_t max_group = 0;
    e = cl->GetKernelWorkGroupInfo(S.kern, S.dev->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof max_group, &max_group,
                                   NULL);
    if (e != CL_SUCCESS) return cl_fail("clGetKernelWorkGroupInfo", e);
    S.group = max_group && max_group < GROUP ? max_group : GROUP;
    return CCKEY_OK;
}

static cckey_status setup(void)
{
    char why[512];
    S.dev = cckey_cl_selected(&S.cl, why, sizeof why);
    if (!S.dev) return cckey_fail(CCKEY_ERR_UNAVAILABLE, "OpenCL: %s", why);
    const cckey_cl_api *cl = S.cl;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)S.dev->platform, 0};
    cl_int e;
    S.ctx = cl->CreateContext(props, 1, &S.dev->device, NULL, NULL, &e);
    if (!S.ctx) return cl_fail("clCreateContext", e);
    for (unsigned s = 0; s < SLOTS; s++) {
        S.slot[s].q = cl->CreateCommandQueue(S.ctx, S.dev->device, 0, &e);
        if (!S.slot[s].q) return cl_fail("clCreateCommandQueue", e);
    }
    cckey_status st = build_program();
    if (st == CCKEY_OK) S.ready = true;
    return st;
}

/* ---- the pipeline's engine ---------------------------------------------- */

static cckey_status ocl_open(void **self, unsigned *slots)
{
    pthread_mutex_lock(&lock);
    *self = &S;
    *slots = SLOTS;
    return S.ready ? CCKEY_OK : setup();
}

static cckey_status ocl_reserve(void *self, size_t data_bytes, size_t msgs, cckey_gpu_slot *slots)
{
    (void)self;
    const cckey_cl_api *cl = S.cl;
    if (data_bytes > S.cap_data || msgs > S.cap_msgs) {
        release_slot_buffers();
        for (unsigned s = 0; s < SLOTS; s++) {
            cl_slot *sl = &S.slot[s];
            cl_int e = CL_SUCCESS;
            const char *what = "clCreateBuffer";
            if (!(sl->d_data = cl->CreateBuffer(S.ctx, CL_MEM_READ_ONLY, data_bytes, NULL, &e)) ||
                !(sl->d_meta = cl->CreateBuffer(S.ctx, CL_MEM_READ_ONLY, 8 * msgs, NULL, &e)) ||
                !(sl->d_out = cl->CreateBuffer(S.ctx, CL_MEM_WRITE_ONLY, 16 * msgs, NULL, &e)) ||
                !(sl->h_in = cl->CreateBuffer(S.ctx, CL_MEM_ALLOC_HOST_PTR, data_bytes + 8 * msgs, NULL, &e)) ||
                !(sl->h_out = cl->CreateBuffer(S.ctx, CL_MEM_ALLOC_HOST_PTR, 16 * msgs, NULL, &e)) ||
                (what = "clEnqueueMapBuffer",
                 !(sl->in_map = cl->EnqueueMapBuffer(sl->q, sl->h_in, CL_TRUE, CL_MAP_WRITE, 0, data_bytes + 8 * msgs,
                                                     0, NULL, NULL, &e))) ||
                !(sl->out_map = cl->EnqueueMapBuffer(sl->q, sl->h_out, CL_TRUE, CL_MAP_READ, 0, 16 * msgs, 0, NULL,
                                                     NULL, &e))) {
                cckey_status st = cl_fail(what, e);
                release_slot_buffers();
                return st;
            }
        }
        S.cap_data = data_bytes;
        S.cap_msgs = msgs;
    }
    for (unsigned s = 0; s < SLOTS; s++)
        slots[s] = cckey_gpu_slot_views(S.slot[s].in_map, S.cap_data, S.slot[s].out_map);
    return CCKEY_OK;
}

static cckey_status ocl_launch(void *self, unsigned s, size_t n, size_t data_bytes)
{
    (void)self;
    const cckey_cl_api *cl = S.cl;
    cl_slot *sl = &S.slot[s];
    cl_int e;
    if (data_bytes &&
        (e = cl->EnqueueWriteBuffer(sl->q, sl->d_data, CL_FALSE, 0, data_bytes, sl->in_map, 0, NULL, NULL)) != CL_SUCCESS)
        return cl_fail("clEnqueueWriteBuffer", e);
    const uint8_t *meta = (const uint8_t *)sl->in_map + S.cap_data;
    if ((e = cl->EnqueueWriteBuffer(sl->q, sl->d_meta, CL_FALSE, 0, 8 * n, meta, 0, NULL, NULL)) != CL_SUCCESS)
        return cl_fail("clEnqueueWriteBuffer", e);
    cl_uint count = (cl_uint)n;
    /* Arguments are captured at enqueue time, so one kernel object serves
     * every slot (the device mutex keeps enqueues on one thread). */
    if ((e = cl->SetKernelArg(S.kern, 0, sizeof(cl_mem), &sl->d_data)) != CL_SUCCESS ||
        (e = cl->SetKernelArg(S.kern, 1, sizeof(cl_mem), &sl->d_meta)) != CL_SUCCESS ||
        (e = cl->SetKernelArg(S.kern, 2, sizeof(cl_mem), &sl->d_out)) != CL_SUCCESS ||
        (e = cl->SetKernelArg(S.kern, 3, sizeof count, &count)) != CL_SUCCESS)
        return cl_fail("clSetKernelArg", e);
    size_t local = S.group, global = (n + local - 1) / local * local;
    if ((e = cl->EnqueueNDRangeKernel(sl->q, S.kern, 1, NULL, &global, &local, 0, NULL, NULL)) != CL_SUCCESS)
        return cl_fail("clEnqueueNDRangeKernel", e);
    if ((e = cl->EnqueueReadBuffer(sl->q, sl->d_out, CL_FALSE, 0, 16 * n, sl->out_map, 0, NULL, NULL)) != CL_SUCCESS)
        return cl_fail("clEnqueueReadBuffer", e);
    if ((e = cl->Flush(sl->q)) != CL_SUCCESS) return cl_fail("clFlush", e);
    sl->n = n;
    return CCKEY_OK;
}

static cckey_status ocl_wait(void *self, unsigned s)
{
    (void)self;
    cl_int e = S.cl->Finish(S.slot[s].q);
    return e == CL_SUCCESS ? CCKEY_OK : cl_fail("clFinish", e);
}

static void ocl_close(void *self, bool failed)
{
    (void)self;
    if (failed) teardown();
    pthread_mutex_unlock(&lock);
}

static const cckey_device_info *ocl_device(char *why, size_t why_len)
{
    const cckey_cl_api *cl;
    const cckey_cl_device *d = cckey_cl_selected(&cl, why, why_len);
    return d ? &d->info : NULL;
}

/* ---- the backend -------------------------------------------------------- */

static const cckey_gpu_ops engine = {
    .name = "opencl",
    .open = ocl_open,
    .reserve = ocl_reserve,
    .launch = ocl_launch,
    .wait = ocl_wait,
    .close = ocl_close,
    .device = ocl_device,
    /* Discrete GPUs over PCIe, with the program built from source on first
     * use: conservative figures. */
    .device_gbps = 8.0,
    .setup_s = 0.5,
};

CCKEY_GPU_BACKEND(cckey_backend_opencl, CCKEY_BACKEND_OPENCL, "opencl", engine);
