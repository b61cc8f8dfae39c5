/* OpenCL platforms and devices: what exists (the choice among them is
 * gpu_devices.c's, the same for every backend). */
#include "opencl.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_PLATFORMS 16
#define MAX_DEVICES CCKEY_GPU_MAX_DEVICES

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

/* ---- the process-wide catalog ------------------------------------------- */

static cckey_gpu_catalog catalog = CCKEY_GPU_CATALOG_INIT;
static const cckey_cl_api *api;
static cckey_cl_device devs[CCKEY_GPU_MAX_DEVICES];

static void discover(void)
{
    const char *why = NULL;
    api = cckey_cl_load(&why);
    if (!api) {
        snprintf(catalog.reason, sizeof catalog.reason, "%s", why);
        return;
    }
    size_t n = 0;
    if (cckey_cl_enumerate(api, devs, CCKEY_GPU_MAX_DEVICES, &n, catalog.reason, sizeof catalog.reason) != CCKEY_OK)
        return;
    catalog.n = n < CCKEY_GPU_MAX_DEVICES ? n : CCKEY_GPU_MAX_DEVICES;
    for (size_t i = 0; i < catalog.n; i++) catalog.info[i] = devs[i].info;
    catalog.found = true;
}

const cckey_cl_device *cckey_cl_selected(const char *selector, const cckey_cl_api **cl, char *why, size_t why_len)
{
    long k = cckey_gpu_select(&catalog, discover, selector, "OpenCL", why, why_len);
    if (k < 0) return NULL;
    *cl = api;
    return &devs[k];
}

cckey_status cckey_opencl_devices(const char *selector, cckey_device_info *out, size_t max, size_t *count, char *why,
                                  size_t why_len)
{
    return cckey_gpu_list(&catalog, discover, selector, "OpenCL", out, max, count, why, why_len);
}
