/* Loading the CUDA driver at run time; see cuda_loader.h for why. */
#include "cuda_loader.h"

#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cckey_cu_api api;
static const cckey_cu_api *loaded;
static char reason[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

typedef struct entry {
    const char *symbol, *fallback;   /* versioned name first, then the plain one */
    size_t offset;
} entry;

#define E(field, sym, fb) {sym, fb, offsetof(cckey_cu_api, field)}

/* The _v2 names are the ABI every driver since CUDA 4 exports for these. */
static const entry entries[] = {
    E(Init, "cuInit", NULL),
    E(DriverGetVersion, "cuDriverGetVersion", NULL),
    E(GetErrorName, "cuGetErrorName", NULL),
    E(GetErrorString, "cuGetErrorString", NULL),
    E(DeviceGetCount, "cuDeviceGetCount", NULL),
    E(DeviceGet, "cuDeviceGet", NULL),
    E(DeviceGetName, "cuDeviceGetName", NULL),
    E(DeviceGetAttribute, "cuDeviceGetAttribute", NULL),
    E(DeviceTotalMem, "cuDeviceTotalMem_v2", NULL),
    E(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL),
    E(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"),
    E(CtxPushCurrent, "cuCtxPushCurrent_v2", NULL),
    E(CtxPopCurrent, "cuCtxPopCurrent_v2", NULL),
    E(ModuleLoadData, "cuModuleLoadData", NULL),
    E(ModuleUnload, "cuModuleUnload", NULL),
    E(ModuleGetFunction, "cuModuleGetFunction", NULL),
    E(FuncGetAttribute, "cuFuncGetAttribute", NULL),
    E(MemAlloc, "cuMemAlloc_v2", NULL),
    E(MemFree, "cuMemFree_v2", NULL),
    E(MemHostAlloc, "cuMemHostAlloc", NULL),
    E(MemFreeHost, "cuMemFreeHost", NULL),
    E(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", NULL),
    E(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", NULL),
    E(StreamCreate, "cuStreamCreate", NULL),
    E(StreamDestroy, "cuStreamDestroy_v2", "cuStreamDestroy"),
    E(StreamSynchronize, "cuStreamSynchronize", NULL),
    E(LaunchKernel, "cuLaunchKernel", NULL),
};

static void load(void)
{
    const char *path = getenv("CCKEY_CUDA_LIBRARY");
    if (!path || !*path) path = "libcuda.so.1";
    dlerror();
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(reason, sizeof reason, "no CUDA driver: %s", e ? e : path);
        return;
    }
    for (size_t i = 0; i < sizeof entries / sizeof *entries; i++) {
        void *sym = dlsym(lib, entries[i].symbol);
        if (!sym && entries[i].fallback) sym = dlsym(lib, entries[i].fallback);
        if (!sym) {
            snprintf(reason, sizeof reason, "%s lacks %s (driver too old?)", path, entries[i].symbol);
            dlclose(lib);
            return;
        }
        memcpy((char *)&api + entries[i].offset, &sym, sizeof sym);
    }
    cckey_CUresult r = api.Init(0);
    if (r != CCKEY_CUDA_SUCCESS) {
        char what[256];
        cckey_cu_describe(&api, r, what, sizeof what);
        snprintf(reason, sizeof reason, "cuInit failed: %s", what);
        return;   /* the library stays loaded; harmless */
    }
    loaded = &api;
}

const cckey_cu_api *cckey_cu_load(const char **why)
{
    pthread_once(&once, load);
    if (!loaded && why) *why = reason;
    return loaded;
}

/* Names for when the driver cannot name its own status (the toolkit's stub
 * library, a driver too old for the code): the ones a user is likely to
 * meet while setting up. */
static const char *known_name(cckey_CUresult r)
{
    switch (r) {
    case 1: return "CUDA_ERROR_INVALID_VALUE";
    case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
    case 3: return "CUDA_ERROR_NOT_INITIALIZED";
    case 34: return "CUDA_ERROR_STUB_LIBRARY (the toolkit's stub libcuda, not a driver)";
    case 46: return "CUDA_ERROR_DEVICE_UNAVAILABLE";
    case 100: return "CUDA_ERROR_NO_DEVICE";
    case 200: return "CUDA_ERROR_INVALID_IMAGE";
    case 209: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case 222: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    case 700: return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case 719: return "CUDA_ERROR_LAUNCH_FAILED";
    case 803: return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
    case 999: return "CUDA_ERROR_UNKNOWN";
    default: return "CUDA_ERROR_<unknown>";
    }
}

void cckey_cu_describe(const cckey_cu_api *cu, cckey_CUresult r, char *buf, size_t len)
{
    const char *name = NULL, *text = NULL;
    if (cu->GetErrorName(r, &name) != CCKEY_CUDA_SUCCESS) name = NULL;
    if (cu->GetErrorString(r, &text) != CCKEY_CUDA_SUCCESS) text = NULL;
    if (text) snprintf(buf, len, "%s: %s (%d)", name ? name : known_name(r), text, r);
    else snprintf(buf, len, "%s (%d)", name ? name : known_name(r), r);
}

/* ---- the driver's version string ---------------------------------------- */

typedef int (*nvml_fn0)(void);
typedef int (*nvml_version_fn)(char *, unsigned);

static int from_nvml(char *buf, size_t len)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return -1;
    void *init = dlsym(lib, "nvmlInit_v2"), *shut = dlsym(lib, "nvmlShutdown"),
         *ver = dlsym(lib, "nvmlSystemGetDriverVersion");
    int rc = -1;
    nvml_fn0 f_init, f_shut;
    nvml_version_fn f_ver;
    memcpy(&f_init, &init, sizeof init);
    memcpy(&f_shut, &shut, sizeof shut);
    memcpy(&f_ver, &ver, sizeof ver);
    if (init && shut && ver && f_init() == 0) {
        char v[96] = "";
        if (f_ver(v, sizeof v) == 0 && v[0]) {
            snprintf(buf, len, "%s", v);
            rc = 0;
        }
        f_shut();
    }
    dlclose(lib);
    return rc;
}

/* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu ..." */
static int from_proc(char *buf, size_t len)
{
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (!f) return -1;
    char line[512];
    int rc = -1;
    if (fgets(line, sizeof line, f)) {
        const char *p = strstr(line, "Kernel Module");
        if (p) {
            p += strlen("Kernel Module");
            while (*p == ' ' || *p == '\t') p++;
            size_t n = 0;
            while (p[n] && (isdigit((unsigned char)p[n]) || p[n] == '.')) n++;
            if (n) {
                snprintf(buf, len, "%.*s", (int)n, p);
                rc = 0;
            }
        }
    }
    fclose(f);
    return rc;
}

void cckey_cu_driver_version(const cckey_cu_api *cu, char *buf, size_t len)
{
    if (from_nvml(buf, len) == 0 || from_proc(buf, len) == 0) return;
    int v = 0;
    if (cu && cu->DriverGetVersion(&v) == CCKEY_CUDA_SUCCESS) snprintf(buf, len, "CUDA %d.%d", v / 1000, v % 1000 / 10);
    else snprintf(buf, len, "unknown");
}
