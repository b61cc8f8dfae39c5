/* CUDA devices: what exists, and which one we use. */
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

static cckey_gpu_choice choice = CCKEY_GPU_CHOICE_INIT;
static const cckey_cu_api *api;
static cckey_cu_device chosen;

static void discover(void)
{
    char *reason = choice.reason;
    const size_t reason_len = sizeof choice.reason;
    const char *why = NULL;
    api = cckey_cu_load(&why);
    if (!api) {
        snprintf(reason, reason_len, "%s", why);
        return;
    }
    int count = 0;
    cckey_CUresult r = api->DeviceGetCount(&count);
    if (r != CCKEY_CUDA_SUCCESS || count == 0) {
        char what[256] = "0 devices";
        if (r != CCKEY_CUDA_SUCCESS) cckey_cu_describe(api, r, what, sizeof what);
        snprintf(reason, reason_len, "no CUDA device (cuDeviceGetCount: %s)", what);
        return;
    }
    int ordinal = 0;
    const char *want = getenv("CCKEY_CUDA_DEVICE");
    if (want && *want) {
        char *end;
        long k = strtol(want, &end, 10);
        if (*end || end == want || k < 0 || k >= count) {
            snprintf(reason, reason_len, "CCKEY_CUDA_DEVICE=%s is not a device ordinal from 0 to %d", want,
                     count - 1);
            return;
        }
        ordinal = (int)k;
    }
    if (cckey_cu_describe_device(api, ordinal, &chosen, reason, reason_len) != CCKEY_OK) return;
    if (!chosen.info.usable) {
        snprintf(reason, reason_len, "'%s' has compute capability %d.%d; the kernel needs %d.0 or newer",
                 chosen.info.name, chosen.cc_major, chosen.cc_minor, CCKEY_CUDA_MIN_CC_MAJOR);
        return;
    }
    if (!cckey_cuda_has_kernel()) {
        snprintf(reason, reason_len, "built without a compiled kernel (nvcc was not found at build time)");
        return;
    }
    chosen.info.chosen = true;
    choice.found = true;
}

const cckey_cu_device *cckey_cu_selected(const cckey_cu_api **cu, char *why, size_t why_len)
{
    if (!cckey_gpu_choice_made(&choice, discover, why, why_len)) return NULL;
    *cu = api;
    return &chosen;
}

cckey_status cckey_cuda_devices(cckey_device_info *out, size_t max, size_t *count, char *why, size_t why_len)
{
    *count = 0;
    const char *lwhy = NULL;
    const cckey_cu_api *cu = cckey_cu_load(&lwhy);
    if (!cu) {
        snprintf(why, why_len, "%s", lwhy);
        return CCKEY_ERR_UNAVAILABLE;
    }
    int n = 0;
    if (cu->DeviceGetCount(&n) != CCKEY_CUDA_SUCCESS) n = 0;
    const cckey_cu_api *scu;
    char swhy[512] = "";
    const cckey_cu_device *sel = cckey_cu_selected(&scu, swhy, sizeof swhy);
    for (int i = 0; i < n; i++) {
        if ((size_t)i >= max) continue;
        cckey_cu_device d;
        char dwhy[256];
        if (cckey_cu_describe_device(cu, i, &d, dwhy, sizeof dwhy) != CCKEY_OK) {
            memset(&out[i], 0, sizeof out[i]);
            out[i].index = (unsigned)i;
            snprintf(out[i].name, sizeof out[i].name, "(%.250s)", dwhy);
            continue;
        }
        out[i] = d.info;
        out[i].chosen = sel && sel->info.index == (unsigned)i;
    }
    *count = (size_t)n;
    if (!sel) {
        snprintf(why, why_len, "%s", swhy);
        return CCKEY_ERR_UNAVAILABLE;
    }
    return CCKEY_OK;
}
