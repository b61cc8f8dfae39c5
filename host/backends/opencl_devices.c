/* OpenCL platforms and devices: what exists, and which one we use. */
#include "opencl.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_PLATFORMS 16
#define MAX_DEVICES 64

static void info_string(const cckey_cl_api *cl, cl_device_id d, cl_device_info what, char *buf, size_t len)
{
    buf[0] = '\0';
    if (cl->GetDeviceInfo(d, what, len - 1, buf, NULL) != CL_SUCCESS) snprintf(buf, len, "?");
    buf[len - 1] = '\0';
    /* Some drivers pad names with spaces; an identifier must not carry them. */
    size_t n = strlen(buf);
    while (n && isspace((unsigned char)buf[n - 1])) buf[--n] = '\0';
    size_t lead = 0;
    while (isspace((unsigned char)buf[lead])) lead++;
    memmove(buf, buf + lead, n - lead + 1);
}

static void describe(const cckey_cl_api *cl, cckey_cl_device *d, const char *platform)
{
    cckey_device_info *i = &d->info;
    info_string(cl, d->device, CL_DEVICE_NAME, i->name, sizeof i->name);
    info_string(cl, d->device, CL_DRIVER_VERSION, i->driver, sizeof i->driver);
    snprintf(i->platform, sizeof i->platform, "%s", platform);
    cl_device_type t = 0;
    cl->GetDeviceInfo(d->device, CL_DEVICE_TYPE, sizeof t, &t, NULL);
    d->type = t;
    snprintf(i->type, sizeof i->type, "%s",
             t & CL_DEVICE_TYPE_GPU ? "gpu" : t & CL_DEVICE_TYPE_ACCELERATOR ? "accelerator"
                                          : t & CL_DEVICE_TYPE_CPU ? "cpu" : "other");
    cl_ulong mem = 0;
    cl_uint cus = 0;
    cl_bool available = CL_FALSE, compiler = CL_FALSE, little = CL_FALSE;
    cl->GetDeviceInfo(d->device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
    cl->GetDeviceInfo(d->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL);
    cl->GetDeviceInfo(d->device, CL_DEVICE_AVAILABLE, sizeof available, &available, NULL);
    cl->GetDeviceInfo(d->device, CL_DEVICE_COMPILER_AVAILABLE, sizeof compiler, &compiler, NULL);
    cl->GetDeviceInfo(d->device, CL_DEVICE_ENDIAN_LITTLE, sizeof little, &little, NULL);
    i->global_mem = mem;
    i->compute_units = cus;
    /* The kernel reads message words as little-endian integers. */
    i->usable = available && compiler && little;
    /* A CPU device never beats our own CPU path: auto leaves it alone. */
    i->auto_ok = i->usable && (t & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR));
}

cckey_status cckey_cl_enumerate(const cckey_cl_api *cl, cckey_cl_device *out, size_t max, size_t *count,
                                char *why, size_t why_len)
{
    *count = 0;
    cl_platform_id plats[MAX_PLATFORMS];
    cl_uint np = 0;
    cl_int e = cl->GetPlatformIDs(MAX_PLATFORMS, plats, &np);
    if (e != CL_SUCCESS || np == 0) {
        snprintf(why, why_len, "no OpenCL platform is installed (clGetPlatformIDs: %s)",
                 e == CL_SUCCESS ? "0 platforms" : cckey_cl_status_name(e));
        return CCKEY_ERR_UNAVAILABLE;
    }
    if (np > MAX_PLATFORMS) np = MAX_PLATFORMS;
    for (cl_uint p = 0; p < np; p++) {
        char pname[128] = "";
        if (cl->GetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL) != CL_SUCCESS)
            snprintf(pname, sizeof pname, "?");
        cl_device_id devs[MAX_DEVICES];
        cl_uint nd = 0;
        if (cl->GetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, MAX_DEVICES, devs, &nd) != CL_SUCCESS) continue;
        if (nd > MAX_DEVICES) nd = MAX_DEVICES;
        for (cl_uint k = 0; k < nd; k++, (*count)++) {
            if (*count >= max) continue;
            cckey_cl_device *d = &out[*count];
            memset(d, 0, sizeof *d);
            d->platform = plats[p];
            d->device = devs[k];
            d->info.index = (unsigned)*count;
            describe(cl, d, pname);
        }
    }
    if (*count == 0) {
        snprintf(why, why_len, "%u OpenCL platform(s), but no device", (unsigned)np);
        return CCKEY_ERR_UNAVAILABLE;
    }
    return CCKEY_OK;
}

static bool contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0) return true;
    return n == 0;
}

static int rank(const cckey_cl_device *d)
{
    if (!d->info.usable) return 0;
    if (d->type & CL_DEVICE_TYPE_GPU) return 4;
    if (d->type & CL_DEVICE_TYPE_ACCELERATOR) return 3;
    if (d->type & CL_DEVICE_TYPE_CPU) return 2;
    return 1;
}

long cckey_cl_choose(const cckey_cl_device *devs, size_t n, char *why, size_t why_len)
{
    const char *want = getenv("CCKEY_OPENCL_DEVICE");
    if (want && *want) {
        char *end;
        unsigned long idx = strtoul(want, &end, 10);
        bool numeric = *end == '\0' && isdigit((unsigned char)want[0]);
        for (size_t i = 0; i < n; i++) {
            bool hit = numeric ? devs[i].info.index == idx
                               : contains_nocase(devs[i].info.name, want) || contains_nocase(devs[i].info.platform, want);
            if (!hit) continue;
            if (!devs[i].info.usable) {
                snprintf(why, why_len, "CCKEY_OPENCL_DEVICE=%s selects '%s', which is unavailable, has no compiler "
                         "or is big-endian", want, devs[i].info.name);
                return -1;
            }
            return (long)i;
        }
        snprintf(why, why_len, "CCKEY_OPENCL_DEVICE=%s matches none of the %zu OpenCL device(s) (see 'cckey devices')",
                 want, n);
        return -1;
    }
    long best = -1;
    for (size_t i = 0; i < n; i++)
        if (rank(&devs[i]) > 1 && (best < 0 || rank(&devs[i]) > rank(&devs[best]))) best = (long)i;
    if (best < 0) snprintf(why, why_len, "none of the %zu OpenCL device(s) is usable", n);
    return best;
}

/* ---- the process-wide choice -------------------------------------------- */

static cckey_gpu_choice choice = CCKEY_GPU_CHOICE_INIT;
static const cckey_cl_api *api;
static cckey_cl_device chosen;

static void discover(void)
{
    char *reason = choice.reason;
    const size_t reason_len = sizeof choice.reason;
    const char *why = NULL;
    api = cckey_cl_load(&why);
    if (!api) {
        snprintf(reason, reason_len, "%s", why);
        return;
    }
    cckey_cl_device devs[MAX_DEVICES];
    size_t n = 0;
    if (cckey_cl_enumerate(api, devs, MAX_DEVICES, &n, reason, reason_len) != CCKEY_OK) return;
    if (n > MAX_DEVICES) n = MAX_DEVICES;
    long k = cckey_cl_choose(devs, n, reason, reason_len);
    if (k < 0) return;
    chosen = devs[k];
    chosen.info.chosen = true;
    choice.found = true;
}

const cckey_cl_device *cckey_cl_selected(const cckey_cl_api **cl, char *why, size_t why_len)
{
    if (!cckey_gpu_choice_made(&choice, discover, why, why_len)) return NULL;
    *cl = api;
    return &chosen;
}

cckey_status cckey_opencl_devices(cckey_device_info *out, size_t max, size_t *count, char *why, size_t why_len)
{
    *count = 0;
    const char *lwhy = NULL;
    const cckey_cl_api *cl = cckey_cl_load(&lwhy);
    if (!cl) {
        snprintf(why, why_len, "%s", lwhy);
        return CCKEY_ERR_UNAVAILABLE;
    }
    cckey_cl_device *devs = calloc(MAX_DEVICES, sizeof *devs);
    if (!devs) {
        snprintf(why, why_len, "out of memory");
        return CCKEY_ERR_NO_MEMORY;
    }
    size_t n = 0;
    cckey_status st = cckey_cl_enumerate(cl, devs, MAX_DEVICES, &n, why, why_len);
    if (n > MAX_DEVICES) n = MAX_DEVICES;
    const cckey_cl_api *scl;
    char swhy[512];
    const cckey_cl_device *sel = st == CCKEY_OK ? cckey_cl_selected(&scl, swhy, sizeof swhy) : NULL;
    for (size_t i = 0; i < n && i < max; i++) {
        out[i] = devs[i].info;
        out[i].chosen = sel && sel->device == devs[i].device;
    }
    *count = n;
    if (st == CCKEY_OK && !sel) {
        snprintf(why, why_len, "%s", swhy);
        st = CCKEY_ERR_UNAVAILABLE;
    }
    free(devs);
    return st;
}
