/* Device listing across backends, for the CLI. */
#include "gpu_devices.h"

#include <stdio.h>

bool cckey_gpu_choice_made(cckey_gpu_choice *c, void (*discover)(void), char *why, size_t why_len)
{
    pthread_once(&c->once, discover);
    if (!c->found && why) snprintf(why, why_len, "%s", c->reason);
    return c->found;
}

void cckey_device_ident(const cckey_device_info *d, char *buf, size_t len)
{
    snprintf(buf, len, "%s|%s", d->name, d->driver);
}

cckey_status cckey_backend_devices(cckey_backend_kind kind, cckey_device_info *out, size_t max,
                                   size_t *count, char *why, size_t why_len)
{
    *count = 0;
    switch (kind) {
#ifdef CCKEY_WITH_OPENCL
    case CCKEY_BACKEND_OPENCL: return cckey_opencl_devices(out, max, count, why, why_len);
#endif
#ifdef CCKEY_WITH_CUDA
    case CCKEY_BACKEND_CUDA: return cckey_cuda_devices(out, max, count, why, why_len);
#endif
    default:
        snprintf(why, why_len, "the %s backend is not compiled into this build", cckey_backend_name(kind));
        return CCKEY_ERR_UNAVAILABLE;
    }
}

const char *cckey_backend_kernel_note(cckey_backend_kind kind)
{
    switch (kind) {
    case CCKEY_BACKEND_CPU: return "host code";
#ifdef CCKEY_WITH_OPENCL
    case CCKEY_BACKEND_OPENCL: return "embedded OpenCL C source, built on first use";
#endif
#ifdef CCKEY_WITH_CUDA
    case CCKEY_BACKEND_CUDA:
        return cckey_cuda_has_kernel() ? "embedded fatbin: sm_80 and sm_90 code, compute_90 PTX"
                                       : "built without a compiled kernel (nvcc was not found at build time)";
#endif
    default: return "not compiled in";
    }
}
