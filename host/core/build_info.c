/* What this build holds and what loads on this machine: the facts behind
 * `cckey --version`, public so that the CLI (and a bug report from any
 * other program) needs nothing beyond cckey.h. */
#include "internal.h"
#include "../md5/md5_mb.h"
#if defined(CCKEY_WITH_OPENCL)
#include "../backends/cl_loader.h"
#endif
#if defined(CCKEY_WITH_CUDA)
#include "../backends/cuda_loader.h"
#endif

unsigned cckey_version_number(void) { return CCKEY_VERSION_NUMBER; }

const char *cckey_build_backends(void)
{
    return "cpu"
#if defined(CCKEY_WITH_OPENCL)
           " opencl"
#endif
#if defined(CCKEY_WITH_CUDA)
           " cuda"
#endif
        ;
}

const char *cckey_cpu_isa(void) { return cckey_md5_isa_name(); }

cckey_status cckey_backend_runtime(cckey_backend_kind kind)
{
    const char *why = "not compiled into this build";
    switch (kind) {
    case CCKEY_BACKEND_AUTO:
    case CCKEY_BACKEND_CPU: return CCKEY_OK;
    case CCKEY_BACKEND_OPENCL:
#if defined(CCKEY_WITH_OPENCL)
        if (cckey_cl_load(&why)) return CCKEY_OK;
#endif
        return cckey_fail(CCKEY_ERR_UNAVAILABLE, "%s", why);
    case CCKEY_BACKEND_CUDA:
#if defined(CCKEY_WITH_CUDA)
        if (cckey_cu_load(&why)) return CCKEY_OK;
#endif
        return cckey_fail(CCKEY_ERR_UNAVAILABLE, "%s", why);
    }
    return cckey_fail(CCKEY_ERR_INVALID_ARG, "unknown backend kind %d", (int)kind);
}
