/* The CUDA driver, loaded at run time.
 *
 * cckey never links libcuda: a binary built with CUDA support must start,
 * and work on the CPU, on machines without an NVIDIA driver. The few
 * driver types used are declared here (their ABI is fixed), so building the
 * backend needs no CUDA headers either.
 *
 * Usage mirrors cl_loader.h:
 *   const char *why;
 *   const cckey_cu_api *cu = cckey_cu_load(&why);   // NULL: why says why
 * Loaded once per process (thread-safe), never unloaded; cuInit(0) has
 * been called successfully when the table is returned. */
#ifndef CCKEY_CUDA_LOADER_H
#define CCKEY_CUDA_LOADER_H

#include <stdbool.h>
#include <stddef.h>

typedef int cckey_CUresult;   /* 0 is CUDA_SUCCESS */
typedef int cckey_CUdevice;
typedef unsigned long long cckey_CUdeviceptr;
typedef struct cckey_CUctx_st *cckey_CUcontext;
typedef struct cckey_CUmod_st *cckey_CUmodule;
typedef struct cckey_CUfunc_st *cckey_CUfunction;
typedef struct cckey_CUstream_st *cckey_CUstream;

#define CCKEY_CUDA_SUCCESS 0
#define CCKEY_CU_ATTR_MULTIPROCESSOR_COUNT 16
#define CCKEY_CU_ATTR_CC_MAJOR 75
#define CCKEY_CU_ATTR_CC_MINOR 76
#define CCKEY_CU_FUNC_MAX_THREADS_PER_BLOCK 0
#define CCKEY_CU_STREAM_NON_BLOCKING 1u

typedef struct cckey_cu_api {
    cckey_CUresult (*Init)(unsigned);
    cckey_CUresult (*DriverGetVersion)(int *);
    cckey_CUresult (*GetErrorName)(cckey_CUresult, const char **);
    cckey_CUresult (*GetErrorString)(cckey_CUresult, const char **);
    cckey_CUresult (*DeviceGetCount)(int *);
    cckey_CUresult (*DeviceGet)(cckey_CUdevice *, int);
    cckey_CUresult (*DeviceGetName)(char *, int, cckey_CUdevice);
    cckey_CUresult (*DeviceGetAttribute)(int *, int, cckey_CUdevice);
    cckey_CUresult (*DeviceTotalMem)(size_t *, cckey_CUdevice);
    cckey_CUresult (*DevicePrimaryCtxRetain)(cckey_CUcontext *, cckey_CUdevice);
    cckey_CUresult (*DevicePrimaryCtxRelease)(cckey_CUdevice);
    cckey_CUresult (*CtxPushCurrent)(cckey_CUcontext);
    cckey_CUresult (*CtxPopCurrent)(cckey_CUcontext *);
    cckey_CUresult (*ModuleLoadData)(cckey_CUmodule *, const void *);
    cckey_CUresult (*ModuleUnload)(cckey_CUmodule);
    cckey_CUresult (*ModuleGetFunction)(cckey_CUfunction *, cckey_CUmodule, const char *);
    cckey_CUresult (*FuncGetAttribute)(int *, int, cckey_CUfunction);
    cckey_CUresult (*MemAlloc)(cckey_CUdeviceptr *, size_t);
    cckey_CUresult (*MemFree)(cckey_CUdeviceptr);
    cckey_CUresult (*MemHostAlloc)(void **, size_t, unsigned);
    cckey_CUresult (*MemFreeHost)(void *);
    cckey_CUresult (*MemcpyHtoDAsync)(cckey_CUdeviceptr, const void *, size_t, cckey_CUstream);
    cckey_CUresult (*MemcpyDtoHAsync)(void *, cckey_CUdeviceptr, size_t, cckey_CUstream);
    cckey_CUresult (*StreamCreate)(cckey_CUstream *, unsigned);
    cckey_CUresult (*StreamDestroy)(cckey_CUstream);
    cckey_CUresult (*StreamSynchronize)(cckey_CUstream);
    cckey_CUresult (*LaunchKernel)(cckey_CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   unsigned, cckey_CUstream, void **, void **);
} cckey_cu_api;

/* The table, loading libcuda.so.1 (or the library cckey_cu_set_library
 * named before: tests use it to simulate a machine without a driver, or to
 * load the stand-in driver of tests/fake_cuda) and calling cuInit on the
 * first call. NULL with *why (process-lifetime text) when there is no
 * usable driver. */
const cckey_cu_api *cckey_cu_load(const char **why);

/* The library cckey_cu_load opens (NULL: the default); see
 * cckey_set_driver_library in cckey.h. False with why when refused. */
bool cckey_cu_set_library(const char *path, char *why, size_t why_len);

/* The address of the driver function name (e.g. "cuGetErrorName"), for
 * the public cckey_driver_symbol: NULL with *why when the driver does not
 * load (or cuInit fails) or lacks it. */
void *cckey_cu_symbol(const char *name, const char **why);

/* "CUDA_ERROR_OUT_OF_MEMORY: out of memory" for a driver status, through
 * the driver's own cuGetErrorName/cuGetErrorString. */
void cckey_cu_describe(const cckey_cu_api *cu, cckey_CUresult r, char *buf, size_t len);

/* The NVIDIA driver version, e.g. "580.159.04": from NVML when it loads,
 * else /proc/driver/nvidia/version, else "CUDA <major>.<minor>" from the
 * driver API. Always writes a NUL-terminated string. */
void cckey_cu_driver_version(const cckey_cu_api *cu, char *buf, size_t len);

#endif
