/* Which backends this build has, and the calls that dispatch to them.
 * Device backends are compiled in only where their headers were found;
 * each still loads its driver at run time. */
#include "gpu_pipeline.h"
#include "../core/internal.h"
#ifdef CCKEY_WITH_OPENCL
#include "cl_loader.h"
#endif
#ifdef CCKEY_WITH_CUDA
#include "cuda_loader.h"
#endif

#include <string.h>

const cckey_device_settings cckey_device_settings_default = CCKEY_DEVICE_SETTINGS_INIT;
const cckey_backend_hook_table *cckey_backend_hooks;

const char *cckey_device_selector(const cckey_device_settings *s, cckey_backend_kind kind)
{
    if (!s) return "";
    return kind == CCKEY_BACKEND_OPENCL ? s->opencl_device : kind == CCKEY_BACKEND_CUDA ? s->cuda_device : "";
}

static const cckey_backend_ops cpu = {.kind = CCKEY_BACKEND_CPU, .name = "cpu", .engine = NULL};
#ifdef CCKEY_WITH_OPENCL
extern const cckey_gpu_ops cckey_opencl_engine;
static const cckey_backend_ops opencl = {.kind = CCKEY_BACKEND_OPENCL, .name = "opencl", .engine = &cckey_opencl_engine};
#endif
#ifdef CCKEY_WITH_CUDA
extern const cckey_gpu_ops cckey_cuda_engine;
static const cckey_backend_ops cuda = {.kind = CCKEY_BACKEND_CUDA, .name = "cuda", .engine = &cckey_cuda_engine};
#endif

const cckey_backend_ops *cckey_backend_ops_for(cckey_backend_kind kind)
{
    switch (kind) {
    case CCKEY_BACKEND_CPU: return &cpu;
#ifdef CCKEY_WITH_OPENCL
    case CCKEY_BACKEND_OPENCL: return &opencl;
#endif
#ifdef CCKEY_WITH_CUDA
    case CCKEY_BACKEND_CUDA: return &cuda;
#endif
    default: return NULL;
    }
}

cckey_status cckey_backend_available(const cckey_backend_ops *b, const cckey_device_settings *s, char *why,
                                     size_t why_len)
{
    if (!b->engine) return CCKEY_OK;
    return b->engine->device(s ? s : &cckey_device_settings_default, why, why_len) ? CCKEY_OK
                                                                                   : CCKEY_ERR_UNAVAILABLE;
}

bool cckey_backend_worth_it(const cckey_backend_ops *b, const cckey_device_settings *s, size_t n,
                            uint64_t total_bytes, unsigned cpu_threads)
{
    if (!b->engine) return false;
    if (!s) s = &cckey_device_settings_default;
    /* The size test first: a small batch must not even load the runtime. */
    if (!cckey_gpu_worth_it(n, total_bytes, cpu_threads, b->engine->device_gbps, b->engine->setup_s, s->cpu_share))
        return false;
    const cckey_device_info *d = b->engine->device(s, NULL, 0);
    return d && d->auto_ok;
}

cckey_status cckey_backend_digest(const cckey_backend_ops *b, const cckey_digest_job *job)
{
    if (!b->engine) return cckey_cpu_digest(job);
    /* The testing library's one seam here: device faults are injected
     * around the engines (host/testing/device_faults.c), never inside them. */
    const cckey_backend_hook_table *hooks = cckey_backend_hooks;
    if (hooks) return hooks->gpu_digest(job, b->engine);
    return cckey_gpu_digest(job, b->engine);
}

/* A device backend's driver loader, or NULL with the failure set: kind has
 * no driver (CCKEY_ERR_INVALID_ARG) or its backend is not compiled in. */
typedef struct driver_loader {
    bool (*set_library)(const char *path, char *why, size_t why_len);
    void *(*symbol)(const char *name, const char **why);
} driver_loader;

static const driver_loader *driver_of(cckey_backend_kind kind, cckey_status *st)
{
#ifdef CCKEY_WITH_OPENCL
    static const driver_loader cl = {cckey_cl_set_library, cckey_cl_symbol};
    if (kind == CCKEY_BACKEND_OPENCL) return &cl;
#endif
#ifdef CCKEY_WITH_CUDA
    static const driver_loader cu = {cckey_cu_set_library, cckey_cu_symbol};
    if (kind == CCKEY_BACKEND_CUDA) return &cu;
#endif
    if (kind != CCKEY_BACKEND_OPENCL && kind != CCKEY_BACKEND_CUDA)
        *st = cckey_fail(CCKEY_ERR_INVALID_ARG, "backend %d has no driver library", (int)kind);
    else
        *st = cckey_fail(CCKEY_ERR_UNAVAILABLE, "the %s backend is not compiled into this build",
                         cckey_backend_name(kind));
    return NULL;
}

cckey_status cckey_set_driver_library(cckey_backend_kind kind, const char *path)
{
    cckey_status st;
    const driver_loader *d = driver_of(kind, &st);
    if (!d) return st;
    char why[512] = "";
    return d->set_library(path, why, sizeof why) ? CCKEY_OK : cckey_fail(CCKEY_ERR_INVALID_ARG, "%s", why);
}

void *cckey_driver_symbol(cckey_backend_kind kind, const char *name)
{
    cckey_status st;
    const driver_loader *d = driver_of(kind, &st);
    if (!d) return NULL;
    if (!name) {
        cckey_fail(CCKEY_ERR_INVALID_ARG, "name is NULL");
        return NULL;
    }
    const char *why = NULL;
    void *sym = d->symbol(name, &why);
    if (!sym) cckey_fail(CCKEY_ERR_UNAVAILABLE, "%s: %s", name, why ? why : "not found");
    return sym;
}

const char *cckey_opencl_status_name(int status)
{
#ifdef CCKEY_WITH_OPENCL
    return cckey_cl_status_name((cl_int)status);
#else
    (void)status;
    return "CL_<unknown>";
#endif
}

static const char *const names[] = {"auto", "cpu", "opencl", "cuda"};

cckey_status cckey_backend_from_name(const char *name, cckey_backend_kind *out)
{
    if (!name || !out) return cckey_fail(CCKEY_ERR_INVALID_ARG, "name or out is NULL");
    for (unsigned i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = (cckey_backend_kind)i;
            return CCKEY_OK;
        }
    return cckey_fail(CCKEY_ERR_INVALID_ARG, "unknown backend '%s' (expected auto, cpu, opencl or cuda)", name);
}

const char *cckey_backend_name(cckey_backend_kind kind)
{
    return (unsigned)kind < sizeof names / sizeof *names ? names[kind] : "unknown";
}
