/* What `cckey devices` and `cckey selftest` need to know about the devices
 * of a backend, whichever backends this build has. */
#ifndef CCKEY_GPU_DEVICES_H
#define CCKEY_GPU_DEVICES_H

#include "backend.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct cckey_device_info {
    unsigned index;          /* OpenCL: position across platforms; CUDA: ordinal */
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
 * how many exist; `chosen` marks the one the settings (NULL: defaults)
 * select. CCKEY_ERR_UNAVAILABLE with a reason in why when the backend
 * cannot run here (not compiled in, no driver, no device, a selector that
 * matches nothing). */
cckey_status cckey_backend_devices(cckey_backend_kind kind, const cckey_device_settings *s, cckey_device_info *out,
                                   size_t max, size_t *count, char *why, size_t why_len);

#define CCKEY_GPU_MAX_DEVICES 64

/* A device backend's list of devices, made once per process by its
 * discover(), which fills info[0..n) (info[i].index == i) or says in reason
 * why there is none. Backends keep their own handles in arrays indexed
 * alike. */
typedef struct cckey_gpu_catalog {
    pthread_once_t once;
    bool found;
    char reason[512];
    size_t n;
    cckey_device_info info[CCKEY_GPU_MAX_DEVICES];
} cckey_gpu_catalog;
#define CCKEY_GPU_CATALOG_INIT {.once = PTHREAD_ONCE_INIT}

/* The device a selector picks from the catalog (discovered on first use):
 * "" the best usable one (a GPU before an accelerator before a CPU device),
 * a decimal index, or a case-insensitive part of the device's or platform's
 * name. Its position, or -1 with why (when why is not NULL). `what` names
 * the backend in messages ("OpenCL"). */
long cckey_gpu_select(cckey_gpu_catalog *c, void (*discover)(void), const char *selector, const char *what,
                      char *why, size_t why_len);

/* cckey_backend_devices over a catalog. */
cckey_status cckey_gpu_list(cckey_gpu_catalog *c, void (*discover)(void), const char *selector, const char *what,
                            cckey_device_info *out, size_t max, size_t *count, char *why, size_t why_len);


#ifdef CCKEY_WITH_OPENCL
cckey_status cckey_opencl_devices(const char *selector, cckey_device_info *out, size_t max, size_t *count,
                                  char *why, size_t why_len);
#endif
#ifdef CCKEY_WITH_CUDA
cckey_status cckey_cuda_devices(const char *selector, cckey_device_info *out, size_t max, size_t *count,
                                char *why, size_t why_len);
/* Whether the CUDA kernel was compiled into this build (nvcc was found). */
bool cckey_cuda_has_kernel(void);
#endif

#endif
