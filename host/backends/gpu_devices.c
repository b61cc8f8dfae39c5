/* Device catalogs and the one rule for choosing a device, for every device
 * backend; the listing behind cckey_devices. */
#include "gpu_devices.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void cckey_device_ident(const cckey_device_info *d, char *buf, size_t len)
{
    snprintf(buf, len, "%s|%s", d->name, d->driver);
}

static bool contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0) return true;
    return n == 0;
}

static int rank(const cckey_device_info *d)
{
    if (!d->usable) return 0;
    if (strcmp(d->type, "gpu") == 0) return 4;
    if (strcmp(d->type, "accelerator") == 0) return 3;
    if (strcmp(d->type, "cpu") == 0) return 2;
    return 1;
}

static long choose(const cckey_gpu_catalog *c, const char *want, const char *what, char *why, size_t why_len)
{
    if (*want) {
        char *end;
        unsigned long idx = strtoul(want, &end, 10);
        bool numeric = *end == '\0' && isdigit((unsigned char)want[0]);
        for (size_t i = 0; i < c->n; i++) {
            const cckey_device_info *d = &c->info[i];
            bool hit = numeric ? d->index == idx : contains_nocase(d->name, want) || contains_nocase(d->platform, want);
            if (!hit) continue;
            if (!d->usable) {
                snprintf(why, why_len, "%s device '%s' selects '%s', which cannot run the kernel here", what, want,
                         d->name);
                return -1;
            }
            return (long)i;
        }
        snprintf(why, why_len, "%s device '%s' matches none of the %zu %s device(s) (see 'cckey devices')", what, want,
                 c->n, what);
        return -1;
    }
    long best = -1;
    for (size_t i = 0; i < c->n; i++)
        if (rank(&c->info[i]) > 1 && (best < 0 || rank(&c->info[i]) > rank(&c->info[best]))) best = (long)i;
    if (best < 0) snprintf(why, why_len, "none of the %zu %s device(s) is usable", c->n, what);
    return best;
}

long cckey_gpu_select(cckey_gpu_catalog *c, void (*discover)(void), const char *selector, const char *what,
                      char *why, size_t why_len)
{
    char scratch[1];
    if (!why) why = scratch, why_len = sizeof scratch;
    pthread_once(&c->once, discover);
    if (!c->found) {
        snprintf(why, why_len, "%s", c->reason);
        return -1;
    }
    return choose(c, selector ? selector : "", what, why, why_len);
}

cckey_status cckey_gpu_list(cckey_gpu_catalog *c, void (*discover)(void), const char *selector, const char *what,
                            cckey_device_info *out, size_t max, size_t *count, char *why, size_t why_len)
{
    long k = cckey_gpu_select(c, discover, selector, what, why, why_len);
    *count = c->n;
    for (size_t i = 0; i < c->n && i < max; i++) {
        out[i] = c->info[i];
        out[i].chosen = (long)i == k;
    }
    return k >= 0 ? CCKEY_OK : CCKEY_ERR_UNAVAILABLE;
}

cckey_status cckey_backend_devices(cckey_backend_kind kind, const cckey_device_settings *s, cckey_device_info *out,
                                   size_t max, size_t *count, char *why, size_t why_len)
{
    *count = 0;
    const char *sel = cckey_device_selector(s, kind);
    (void)sel;
    switch (kind) {
#ifdef CCKEY_WITH_OPENCL
    case CCKEY_BACKEND_OPENCL: return cckey_opencl_devices(sel, out, max, count, why, why_len);
#endif
#ifdef CCKEY_WITH_CUDA
    case CCKEY_BACKEND_CUDA: return cckey_cuda_devices(sel, out, max, count, why, why_len);
#endif
    default:
        snprintf(why, why_len, "the %s backend is not compiled into this build", cckey_backend_name(kind));
        return CCKEY_ERR_UNAVAILABLE;
    }
}

const char *cckey_backend_kernel(cckey_backend_kind kind)
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
