/* The CUDA backend's internals: device discovery (cuda_devices.c) and the
 * batch engine (cuda.c). */
#ifndef CCKEY_CUDA_BACKEND_H
#define CCKEY_CUDA_BACKEND_H

#include "cuda_loader.h"
#include "gpu_devices.h"

#include <stdbool.h>

/* The oldest compute capability the embedded fatbin runs on: sm_80 code
 * serves 8.x, sm_90 code 9.0, compute_90 PTX anything newer. */
#define CCKEY_CUDA_MIN_CC_MAJOR 8

typedef struct cckey_cu_device {
    cckey_CUdevice dev;
    int cc_major, cc_minor;
    cckey_device_info info;
} cckey_cu_device;

/* The device a selector picks (see cckey_gpu_select: an ordinal, a part of
 * the name, or "" for the first usable one), from the devices found once
 * per process. NULL with why when the backend cannot run (no driver, no
 * device, a device too old, or no compiled kernel in this build). */
const cckey_cu_device *cckey_cu_selected(const char *selector, const cckey_cu_api **cu, char *why, size_t why_len);

/* Describe device ordinal i into d. CCKEY_OK or CCKEY_ERR_DEVICE (why). */
cckey_status cckey_cu_describe_device(const cckey_cu_api *cu, int ordinal, cckey_cu_device *d, char *why,
                                      size_t why_len);

/* The backend's device for one caller (the benchmark hooks of
 * bench/cuda_bench.c): takes an engine, pushes the context, loads the
 * module on first use, and gives the driver table, the MD5 kernel and its
 * block size. CCKEY_ERR_UNAVAILABLE (no driver or device) or
 * CCKEY_ERR_DEVICE with detail, the device already given back. After
 * CCKEY_OK, cckey_cuda_release gives it back; failed drops the backend's
 * device state so the next batch starts afresh. */
cckey_status cckey_cuda_acquire(void **engine, const cckey_cu_api **cu, cckey_CUfunction *fn, unsigned *block);
void cckey_cuda_release(void *engine, bool failed);

/* The embedded fatbin (empty when nvcc was not found at build time). */
extern const unsigned char cckey_md5_fatbin[];
extern const size_t cckey_md5_fatbin_len;

#endif
