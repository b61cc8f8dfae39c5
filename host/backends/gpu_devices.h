/* What `cckey devices` and `cckey selftest` need to know about the devices
 * of a backend, whichever backends this build has. */
#ifndef CCKEY_GPU_DEVICES_H
#define CCKEY_GPU_DEVICES_H

#include "cckey.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct cckey_device_info {
    unsigned index;          /* CCKEY_OPENCL_DEVICE index / CUDA ordinal */
    char name[256];          /* CL_DEVICE_NAME / cuDeviceGetName */
    char driver[128];        /* CL_DRIVER_VERSION / the NVIDIA driver version */
    char platform[128];      /* OpenCL platform name; "CUDA x.y" for CUDA */
    char type[16];           /* "gpu", "cpu", "accelerator", "other" */
    uint64_t global_mem;     /* bytes */
    unsigned compute_units;
    bool usable;             /* available, has a compiler, little-endian */
    bool chosen;             /* the device the backend uses */
    bool auto_ok;            /* `auto` may pick it (for a large enough batch) */
} cckey_device_info;

/* The identifier recommended for a manifest's `device` field:
 * "name|driver", e.g. "NVIDIA H200|580.159.04". */
void cckey_device_ident(const cckey_device_info *d, char *buf, size_t len);

/* Up to max devices of a backend into out (max may be 0), *count receives
 * how many exist. CCKEY_ERR_UNAVAILABLE with a reason in why when the
 * backend cannot run here (not compiled in, no driver, no device). */
cckey_status cckey_backend_devices(cckey_backend_kind kind, cckey_device_info *out, size_t max,
                                   size_t *count, char *why, size_t why_len);

/* A device backend's process-wide choice of device, made once by its
 * discover(), which either sets found or says why not in reason. */
typedef struct cckey_gpu_choice {
    pthread_once_t once;
    bool found;
    char reason[512];
} cckey_gpu_choice;
#define CCKEY_GPU_CHOICE_INIT {.once = PTHREAD_ONCE_INIT}

/* Makes the choice on first use; whether a device was found, else false
 * with the reason in why (when why is not NULL). */
bool cckey_gpu_choice_made(cckey_gpu_choice *c, void (*discover)(void), char *why, size_t why_len);

/* How the backend gets its kernel, in a few words (for `cckey devices`). */
const char *cckey_backend_kernel_note(cckey_backend_kind kind);

#ifdef CCKEY_WITH_OPENCL
cckey_status cckey_opencl_devices(cckey_device_info *out, size_t max, size_t *count, char *why,
                                  size_t why_len);
#endif
#ifdef CCKEY_WITH_CUDA
cckey_status cckey_cuda_devices(cckey_device_info *out, size_t max, size_t *count, char *why,
                                size_t why_len);
/* Whether the CUDA kernel was compiled into this build (nvcc was found). */
bool cckey_cuda_has_kernel(void);
#endif

#endif
