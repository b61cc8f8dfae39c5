/* CUDA devices: what exists (the choice among them is gpu_devices.c's,
 * the same for every backend). */
#include "cuda_backend.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool cckey_cuda_has_kernel(void) { return cckey_md5_fatbin_len > 0; }

cckey_status cckey_cu_describe_device(const cckey_cu_api *cu, int ordinal, cckey_cu_device *d, char *why,
                                      size_t why_len)
{
    memset(d, 0, sizeof *d);
    cckey_CUresult r = cu->DeviceGet(&d->dev, ordinal);
    if (r != CCKEY_CUDA_SUCCESS) {
        char what[256];
        cckey_cu_describe(cu, r, what, sizeof what);
        snprintf(why, why_len, "cuDeviceGet(%d): %s", ordinal, what);
        return CCKEY_ERR_DEVICE;
    }
    cckey_device_info *i = &d->info;
    i->index = (unsigned)ordinal;
    if (cu->DeviceGetName(i->name, (int)sizeof i->name - 1, d->dev) != CCKEY_CUDA_SUCCESS)
        snprintf(i->name, sizeof i->name, "CUDA device %d", ordinal);
    cckey_cu_driver_version(cu, i->driver, sizeof i->driver);
    int v = 0, sms = 0;
    cu->DriverGetVersion(&v);
    snprintf(i->platform, sizeof i->platform, "CUDA %d.%d", v / 1000, v % 1000 / 10);
    snprintf(i->type, sizeof i->type, "gpu");
    cu->DeviceGetAttribute(&d->cc_major, CCKEY_CU_ATTR_CC_MAJOR, d->dev);
    cu->DeviceGetAttribute(&d->cc_minor, CCKEY_CU_ATTR_CC_MINOR, d->dev);
    cu->DeviceGetAttribute(&sms, CCKEY_CU_ATTR_MULTIPROCESSOR_COUNT, d->dev);
    size_t mem = 0;
    cu->DeviceTotalMem(&mem, d->dev);
    i->global_mem = mem;
    i->compute_units = (unsigned)sms;
    i->usable = d->cc_major >= CCKEY_CUDA_MIN_CC_MAJOR;
    i->auto_ok = i->usable && cckey_cuda_has_kernel();
    return CCKEY_OK;
}

/* ---- the process-wide catalog ------------------------------------------- */

static cckey_gpu_catalog catalog = CCKEY_GPU_CATALOG_INIT;
static const cckey_cu_api *api;
static cckey_cu_device devs[CCKEY_GPU_MAX_DEVICES];

static void discover(void)
{
    char *reason = catalog.reason;
    const size_t reason_len = sizeof catalog.reason;
    const char *why = NULL;
    api = cckey_cu_load(&why);
    if (!api) {
        snprintf(reason, reason_len, "%s", why);
        return;
    }
    int count = 0;
    cckey_CUresult r = api->DeviceGetCount(&count);
    if (r != CCKEY_CUDA_SUCCESS || count <= 0) {
        char what[256] = "0 devices";
        if (r != CCKEY_CUDA_SUCCESS) cckey_cu_describe(api, r, what, sizeof what);
        snprintf(reason, reason_len, "no CUDA device (cuDeviceGetCount: %s)", what);
        return;
    }
    catalog.n = count < CCKEY_GPU_MAX_DEVICES ? (size_t)count : CCKEY_GPU_MAX_DEVICES;
    for (size_t i = 0; i < catalog.n; i++) {
        char dwhy[256];
        if (cckey_cu_describe_device(api, (int)i, &devs[i], dwhy, sizeof dwhy) != CCKEY_OK) {
            /* Listed, never chosen. */
            memset(&devs[i], 0, sizeof devs[i]);
            devs[i].info.index = (unsigned)i;
            snprintf(devs[i].info.name, sizeof devs[i].info.name, "(%.250s)", dwhy);
        }
        catalog.info[i] = devs[i].info;
    }
    catalog.found = true;
}

const cckey_cu_device *cckey_cu_selected(const char *selector, const cckey_cu_api **cu, char *why, size_t why_len)
{
    long k = cckey_gpu_select(&catalog, discover, selector, "CUDA", why, why_len);
    if (k < 0) {
        /* Say why the first device, the default, cannot serve. */
        if (why && (!selector || !*selector) && catalog.found && catalog.n && !devs[0].info.usable)
            snprintf(why, why_len, "'%s' has compute capability %d.%d; the kernel needs %d.0 or newer",
                     devs[0].info.name, devs[0].cc_major, devs[0].cc_minor, CCKEY_CUDA_MIN_CC_MAJOR);
        return NULL;
    }
    if (!cckey_cuda_has_kernel()) {
        if (why) snprintf(why, why_len, "built without a compiled kernel (nvcc was not found at build time)");
        return NULL;
    }
    *cu = api;
    return &devs[k];
}

cckey_status cckey_cuda_devices(const char *selector, cckey_device_info *out, size_t max, size_t *count, char *why,
                                size_t why_len)
{
    cckey_status st = cckey_gpu_list(&catalog, discover, selector, "CUDA", out, max, count, why, why_len);
    if (st == CCKEY_OK && !cckey_cuda_has_kernel()) {
        snprintf(why, why_len, "built without a compiled kernel (nvcc was not found at build time)");
        st = CCKEY_ERR_UNAVAILABLE;
    }
    return st;
}
