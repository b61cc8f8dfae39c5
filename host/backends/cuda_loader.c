/* Loading the CUDA driver at run time; see cuda_loader.h for why. */
#include "cuda_loader.h"
#include "../core/dl_table.h"

#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static cckey_cu_api api;
static cckey_dl_driver driver = CCKEY_DL_DRIVER_INIT("the CUDA driver has no such function");

/* The field's name with "cu" in front; V2: the versioned name, which is the
 * ABI every driver since CUDA 4 exports for these; V2_OR_PLAIN: the
 * versioned name where the driver has it, else the plain one. */
#define E(f) {"cu" #f, NULL, offsetof(cckey_cu_api, f), false}
#define V2(f) {"cu" #f "_v2", NULL, offsetof(cckey_cu_api, f), false}
#define V2_OR_PLAIN(f) {"cu" #f "_v2", "cu" #f, offsetof(cckey_cu_api, f), false}

static const cckey_dl_entry entries[] = {
    E(Init), E(DriverGetVersion), E(GetErrorName), E(GetErrorString),
    E(DeviceGetCount), E(DeviceGet), E(DeviceGetName), E(DeviceGetAttribute), V2(DeviceTotalMem),
    E(DevicePrimaryCtxRetain), V2_OR_PLAIN(DevicePrimaryCtxRelease), V2(CtxPushCurrent), V2(CtxPopCurrent),
    E(ModuleLoadData), E(ModuleUnload), E(ModuleGetFunction), E(FuncGetAttribute),
    V2(MemAlloc), V2(MemFree), E(MemHostAlloc), E(MemFreeHost), V2(MemcpyHtoDAsync), V2(MemcpyDtoHAsync),
    E(StreamCreate), V2_OR_PLAIN(StreamDestroy), E(StreamSynchronize), E(LaunchKernel),
};

#define DEFAULT_LIBRARY "libcuda.so.1"

bool cckey_cu_set_library(const char *path, char *why, size_t why_len)
{
    return cckey_dl_set_path(&driver.path, path, DEFAULT_LIBRARY, "CUDA driver", why, why_len);
}

static void load(void)
{
    if (!cckey_dl_bind(&driver.path, DEFAULT_LIBRARY, entries, sizeof entries / sizeof *entries, &api,
                       "no CUDA driver", "driver too old?", driver.reason, sizeof driver.reason))
        return;
    cckey_CUresult r = api.Init(0);
    if (r != CCKEY_CUDA_SUCCESS) {
        char what[256];
        cckey_cu_describe(&api, r, what, sizeof what);
        snprintf(driver.reason, sizeof driver.reason, "cuInit failed: %s", what);
        return;   /* the library stays loaded; harmless */
    }
    driver.loaded = &api;
}

const cckey_cu_api *cckey_cu_load(const char **why) { return cckey_dl_driver_load(&driver, load, why); }

void *cckey_cu_symbol(const char *name, const char **why) { return cckey_dl_driver_symbol(&driver, load, name, why); }

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
