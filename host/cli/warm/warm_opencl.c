/* Building OpenCL programs for `cckey warm`: one context per device, made
 * on first use and shared by the worker threads (OpenCL's program calls are
 * thread-safe). The runtime is the library's own: its functions come from
 * the public cckey_driver_symbol (so warm and the library load one
 * runtime, from one path), and the devices' identities from the public
 * cckey_devices, whose order (platforms as the ICD loader lists them,
 * devices within each) warm's own enumeration follows. */
#include "warm.h"
#include "cckey_advanced.h"

#include <stdio.h>
#include <string.h>

#ifndef CCKEY_WITH_OPENCL
int warm_compiler_opencl(warm_compiler *out, char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    snprintf(why, why_len, "this build has no OpenCL support");
    return -1;
}
#else
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl_icd.h>   /* the runtime's function types, cl_api_clXxx */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>

#define MAX_DEVS CCKEY_WARM_MAX_DEVS
#define MAX_PLATFORMS 16

/* The runtime functions warm calls. */
typedef struct warm_cl_api {
    cl_api_clGetPlatformIDs GetPlatformIDs;
    cl_api_clGetPlatformInfo GetPlatformInfo;
    cl_api_clGetDeviceIDs GetDeviceIDs;
    cl_api_clGetDeviceInfo GetDeviceInfo;
    cl_api_clCreateContext CreateContext;
    cl_api_clCreateProgramWithSource CreateProgramWithSource;
    cl_api_clBuildProgram BuildProgram;
    cl_api_clGetProgramInfo GetProgramInfo;
    cl_api_clGetProgramBuildInfo GetProgramBuildInfo;
    cl_api_clReleaseProgram ReleaseProgram;
    cl_api_clCreateKernel CreateKernel;
    cl_api_clReleaseKernel ReleaseKernel;
} warm_cl_api;

#define FN(f) {"cl" #f, offsetof(warm_cl_api, f)}
static const struct {
    const char *name;
    size_t offset;
} fns[] = {
    FN(GetPlatformIDs), FN(GetPlatformInfo), FN(GetDeviceIDs), FN(GetDeviceInfo),
    FN(CreateContext), FN(CreateProgramWithSource), FN(BuildProgram), FN(GetProgramInfo),
    FN(GetProgramBuildInfo), FN(ReleaseProgram), FN(CreateKernel), FN(ReleaseKernel),
};
#undef FN

/* The table from the library's runtime, or -1 with why. */
static int bind(warm_cl_api *cl, char *why, size_t why_len)
{
    for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
        void *f = cckey_driver_symbol(CCKEY_BACKEND_OPENCL, fns[i].name);
        if (!f) {
            snprintf(why, why_len, "%s", cckey_last_error());
            return -1;
        }
        /* POSIX: a symbol's address converts to a function pointer. */
        memcpy((char *)cl + fns[i].offset, &f, sizeof f);
    }
    return 0;
}

static const char *status_name(cl_int e) { return cckey_opencl_status_name(e); }

typedef struct cl_dev {
    cl_platform_id platform;
    cl_device_id device;
} cl_dev;

typedef struct cl_state {
    const warm_cl_api *cl;   /* &api once the devices are found */
    warm_cl_api api;
    cl_dev devs[MAX_DEVS];
    warm_devices devices;
    cl_context ctx[MAX_DEVS];
    pthread_mutex_t lock;
} cl_state;

static cl_state state = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int find(void *impl, const char *ident, size_t len)
{
    return warm_find(&((const cl_state *)impl)->devices, ident, len);
}

static void names(void *impl, char *buf, size_t len)
{
    warm_names(&((const cl_state *)impl)->devices, buf, len);
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

/* src built for device dev with flags: the program, or NULL with out->error
 * (and out->log, the build log, either way). */
static cl_program compile(cl_state *s, int dev, const char *src, size_t len, const warm_flags *flags,
                          warm_build *out)
{
    const warm_cl_api *cl = s->cl;
    memset(out, 0, sizeof *out);
    cl_int err = CL_SUCCESS;
    cl_context ctx = context_of(s, dev, &err);
    if (!ctx) {
        snprintf(out->error, sizeof out->error, "clCreateContext: %s", status_name(err));
        return NULL;
    }
    cl_device_id d = s->devs[dev].device;
    cl_program p = cl->CreateProgramWithSource(ctx, 1, &src, &len, &err);
    if (!p) {
        snprintf(out->error, sizeof out->error, "clCreateProgramWithSource: %s", status_name(err));
        return NULL;
    }
    err = cl->BuildProgram(p, 1, &d, flags->joined, NULL, NULL);
    out->log = build_log(s, p, d);
    if (err != CL_SUCCESS) {
        snprintf(out->error, sizeof out->error, "clBuildProgram with \"%s\": %s", flags->joined,
                 status_name(err));
        cl->ReleaseProgram(p);
        return NULL;
    }
    return p;
}

/* CL_PROGRAM_KERNEL_NAMES ("a;b;c") into a zeroed buffer of n + 2 bytes;
 * NULL with out->error set. A program with no kernels is asked for no names
 * at all: some runtimes (PoCL) report a size of 1 for it and write nothing,
 * and the buffer's byte is not a name. */
static char *kernel_names(cl_state *s, cl_program p, size_t *n, warm_build *out)
{
    size_t count = 0;
    *n = 0;
    cl_int err = s->cl->GetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof count, &count, NULL);
    if (err == CL_SUCCESS && count) err = s->cl->GetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, 0, NULL, n);
    char *names = err == CL_SUCCESS ? calloc(*n + 2, 1) : NULL;
    if (err == CL_SUCCESS && !names) err = CL_OUT_OF_HOST_MEMORY;
    if (err == CL_SUCCESS && count) err = s->cl->GetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, *n, names, NULL);
    if (err == CL_SUCCESS) return names;
    free(names);
    snprintf(out->error, sizeof out->error, "clGetProgramInfo(%s): %s",
             count ? "CL_PROGRAM_KERNEL_NAMES" : "CL_PROGRAM_NUM_KERNELS", status_name(err));
    return NULL;
}

/* The entry names each ended by '\n'. */
static int entries(void *impl, int dev, const char *src, size_t len, const char *file, const warm_flags *flags,
                   warm_build *out)
{
    (void)file;   /* OpenCL's build log names no file */
    cl_state *s = impl;
    cl_program p = compile(s, dev, src, len, flags, out);
    if (!p) return -1;
    size_t n;
    char *names = kernel_names(s, p, &n, out);
    s->cl->ReleaseProgram(p);
    if (!names) return -1;
    size_t w = 0;   /* in place: w never passes i */
    for (size_t i = 0; i < n && names[i]; i++) {
        if (names[i] != ';') names[w++] = names[i];
        else if (w && names[w - 1] != '\n') names[w++] = '\n';
    }
    if (w && names[w - 1] != '\n') names[w++] = '\n';   /* n + 2 bytes: room for it and the NUL */
    names[w] = '\0';
    out->binary = names;
    out->binary_len = w;
    return 0;
}

static int build(void *impl, int dev, const char *src, size_t len, const warm_flags *flags,
                 const char *const *entry_names, size_t n_names, bool *present, warm_build *out)
{
    cl_state *s = impl;
    const warm_cl_api *cl = s->cl;
    cl_program p = compile(s, dev, src, len, flags, out);
    if (!p) return -1;
    for (size_t i = 0; i < n_names; i++) {
        cl_int e;
        cl_kernel k = cl->CreateKernel(p, entry_names[i], &e);
        present[i] = k != NULL;
        if (k) cl->ReleaseKernel(k);
    }
    size_t size = 0;
    cl_int err = cl->GetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL);
    if (err == CL_SUCCESS && size == 0) err = CL_INVALID_BINARY;
    unsigned char *bin = err == CL_SUCCESS ? malloc(size) : NULL;
    if (err == CL_SUCCESS && !bin) err = CL_OUT_OF_HOST_MEMORY;
    if (err == CL_SUCCESS) err = cl->GetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL);
    cl->ReleaseProgram(p);
    if (err != CL_SUCCESS) {
        free(bin);
        snprintf(out->error, sizeof out->error, "reading the program binary (CL_PROGRAM_BINARIES): %s",
                 status_name(err));
        return -1;
    }
    out->binary = bin;
    out->binary_len = size;
    return 0;
}

/* Every device of every platform, in cckey_devices' order; their count. */
static size_t enumerate(const warm_cl_api *cl, cl_dev *out)
{
    cl_platform_id plats[MAX_PLATFORMS];
    cl_uint np = 0;
    if (cl->GetPlatformIDs(MAX_PLATFORMS, plats, &np) != CL_SUCCESS) return 0;
    size_t n = 0;
    for (cl_uint p = 0; p < np && p < MAX_PLATFORMS; p++) {
        cl_device_id ids[MAX_DEVS];
        cl_uint nd = 0;
        if (cl->GetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, MAX_DEVS, ids, &nd) != CL_SUCCESS) continue;
        for (cl_uint k = 0; k < nd && k < MAX_DEVS && n < MAX_DEVS; k++) out[n++] = (cl_dev){plats[p], ids[k]};
    }
    return n;
}

/* The devices with their identities, or -1 with why. Lock held. */
static int discover(cl_state *s, const warm_cl_api *cl, char *why, size_t why_len)
{
    cckey_device *listed = calloc(MAX_DEVS, sizeof *listed);
    size_t n = 0;
    if (!listed) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    /* UNAVAILABLE still lists the devices that exist. */
    cckey_status st = cckey_devices(NULL, CCKEY_BACKEND_OPENCL, listed, MAX_DEVS, &n);
    if (n > MAX_DEVS) n = MAX_DEVS;
    size_t mine = enumerate(cl, s->devs);
    if (!n || n != mine) {
        if (!n) snprintf(why, why_len, "%s", st != CCKEY_OK ? cckey_last_error() : "no OpenCL device");
        else snprintf(why, why_len, "the OpenCL runtime listed %zu devices, then %zu", n, mine);
        free(listed);
        return -1;
    }
    s->devices.n = n;
    for (size_t i = 0; i < n; i++) snprintf(s->devices.ident[i], sizeof s->devices.ident[i], "%s", listed[i].id);
    free(listed);
    return 0;
}

int warm_compiler_opencl(warm_compiler *out, char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&state.lock);
    if (!state.cl) {
        if (bind(&state.api, why, why_len) != 0 || discover(&state, &state.api, why, why_len) != 0) {
            pthread_mutex_unlock(&state.lock);
            return -1;
        }
        state.cl = &state.api;
    }
    pthread_mutex_unlock(&state.lock);
    *out = (warm_compiler){"OpenCL", "OpenCL", &state, find, names, version, build, entries};
    return 0;
}
#endif
