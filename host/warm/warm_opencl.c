/* Building OpenCL programs for `cckey warm`: one context per device, made
 * on first use and shared by the worker threads (OpenCL's program calls are
 * thread-safe). */
#include "warm.h"

#include <stdio.h>
#include <string.h>

#ifndef CCKEY_WITH_OPENCL
int cckey_compiler_opencl(cckey_compiler *out, char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    snprintf(why, why_len, "this build has no OpenCL support");
    return -1;
}
#else
#include "../backends/opencl.h"

#include <pthread.h>
#include <stdlib.h>

#define MAX_DEVS CCKEY_WARM_MAX_DEVS

typedef struct cl_state {
    const cckey_cl_api *cl;
    cckey_cl_device devs[MAX_DEVS];
    cckey_warm_devices devices;
    cl_context ctx[MAX_DEVS];
    pthread_mutex_t lock;
} cl_state;

static cl_state state = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int find(void *impl, const char *ident, size_t len)
{
    return cckey_warm_find(&((const cl_state *)impl)->devices, ident, len);
}

static void names(void *impl, char *buf, size_t len)
{
    cckey_warm_names(&((const cl_state *)impl)->devices, buf, len);
}

/* The platform's version names the compiler inside the runtime (e.g.
 * "OpenCL 3.0 PoCL 6.0+debian ..."); the device's version its OpenCL C. */
static void version(void *impl, int dev, char *buf, size_t len)
{
    cl_state *s = impl;
    char plat[256] = "", devv[256] = "";
    s->cl->GetPlatformInfo(s->devs[dev].platform, CL_PLATFORM_VERSION, sizeof plat - 1, plat, NULL);
    s->cl->GetDeviceInfo(s->devs[dev].device, CL_DEVICE_VERSION, sizeof devv - 1, devv, NULL);
    snprintf(buf, len, "%s | %s", plat, devv);
}

static cl_context context_of(cl_state *s, int dev, cl_int *err)
{
    pthread_mutex_lock(&s->lock);
    cl_context c = s->ctx[dev];
    if (!c) {
        cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)s->devs[dev].platform, 0};
        c = s->ctx[dev] = s->cl->CreateContext(props, 1, &s->devs[dev].device, NULL, NULL, err);
    }
    pthread_mutex_unlock(&s->lock);
    return c;
}

static char *build_log(cl_state *s, cl_program p, cl_device_id d)
{
    size_t n = 0;
    if (s->cl->GetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) != CL_SUCCESS || n <= 1) return NULL;
    char *log = malloc(n + 1);
    if (log && s->cl->GetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, n, log, NULL) != CL_SUCCESS) {
        free(log);
        return NULL;
    }
    if (log) log[n] = '\0';
    return log;
}

static int build(void *impl, int dev, const char *src, size_t len, const cckey_flags *flags,
                 const char *const *entry_names, size_t n_names, bool *present, cckey_build *out)
{
    cl_state *s = impl;
    const cckey_cl_api *cl = s->cl;
    memset(out, 0, sizeof *out);
    cl_int err = CL_SUCCESS;
    cl_context ctx = context_of(s, dev, &err);
    if (!ctx) {
        snprintf(out->error, sizeof out->error, "clCreateContext: %s", cckey_cl_status_name(err));
        return -1;
    }
    cl_device_id d = s->devs[dev].device;
    cl_program p = cl->CreateProgramWithSource(ctx, 1, &src, &len, &err);
    if (!p) {
        snprintf(out->error, sizeof out->error, "clCreateProgramWithSource: %s", cckey_cl_status_name(err));
        return -1;
    }
    err = cl->BuildProgram(p, 1, &d, flags->joined, NULL, NULL);
    out->log = build_log(s, p, d);
    if (err != CL_SUCCESS) {
        snprintf(out->error, sizeof out->error, "clBuildProgram with \"%s\": %s", flags->joined,
                 cckey_cl_status_name(err));
        cl->ReleaseProgram(p);
        return -1;
    }
    for (size_t i = 0; i < n_names; i++) {
        cl_int e;
        cl_kernel k = cl->CreateKernel(p, entry_names[i], &e);
        present[i] = k != NULL;
        if (k) cl->ReleaseKernel(k);
    }
    size_t size = 0;
    err = cl->GetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL);
    if (err == CL_SUCCESS && size == 0) err = CL_INVALID_BINARY;
    unsigned char *bin = err == CL_SUCCESS ? malloc(size) : NULL;
    if (err == CL_SUCCESS && !bin) err = CL_OUT_OF_HOST_MEMORY;
    if (err == CL_SUCCESS) err = cl->GetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL);
    cl->ReleaseProgram(p);
    if (err != CL_SUCCESS) {
        free(bin);
        snprintf(out->error, sizeof out->error, "reading the program binary (CL_PROGRAM_BINARIES): %s",
                 cckey_cl_status_name(err));
        return -1;
    }
    out->binary = bin;
    out->binary_len = size;
    return 0;
}

int cckey_compiler_opencl(cckey_compiler *out, char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    const char *reason = NULL;
    const cckey_cl_api *cl = cckey_cl_load(&reason);
    if (!cl) {
        snprintf(why, why_len, "%s", reason ? reason : "no OpenCL runtime");
        return -1;
    }
    pthread_mutex_lock(&state.lock);
    if (!state.cl) {
        size_t count = 0;
        if (cckey_cl_enumerate(cl, state.devs, MAX_DEVS, &count, why, why_len) != CCKEY_OK) {
            pthread_mutex_unlock(&state.lock);
            return -1;
        }
        state.devices.n = count < MAX_DEVS ? count : MAX_DEVS;
        for (size_t i = 0; i < state.devices.n; i++)
            cckey_device_ident(&state.devs[i].info, state.devices.ident[i], sizeof state.devices.ident[i]);
        state.cl = cl;
    }
    pthread_mutex_unlock(&state.lock);
    *out = (cckey_compiler){"OpenCL", "OpenCL", &state, find, names, version, build};
    return 0;
}
#endif
