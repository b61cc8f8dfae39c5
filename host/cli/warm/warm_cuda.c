/* Building CUDA kernels for `cckey warm`: NVRTC to a cubin for the device's
 * architecture. NVRTC and the driver (for the device list and compute
 * capability) are dlopen'ed. The driver is optional: given a device identity
 * and the architecture (arch=sm_XX), NVRTC alone makes the same cubin a GPU
 * machine would, so a CPU-only machine can warm caches for a GPU fleet. */
#include "warm.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEVS 32
_Static_assert(MAX_DEVS <= CCKEY_WARM_MAX_DEVS, "every device needs an identity slot");

typedef int (*nvrtc_create_fn)(void **, const char *, const char *, int, const char *const *, const char *const *);
typedef int (*nvrtc_compile_fn)(void *, int, const char *const *);
typedef int (*nvrtc_size_fn)(void *, size_t *);
typedef int (*nvrtc_get_fn)(void *, char *);
typedef int (*nvrtc_destroy_fn)(void **);
typedef const char *(*nvrtc_error_fn)(int);
typedef int (*nvrtc_version_fn)(int *, int *);

typedef struct cuda_state {
    nvrtc_create_fn create;
    nvrtc_compile_fn compile;
    nvrtc_size_fn log_size, cubin_size, ptx_size;
    nvrtc_get_fn log, cubin, ptx;
    nvrtc_destroy_fn destroy;
    nvrtc_error_fn error;
    int nvrtc_major, nvrtc_minor;
    warm_devices devices;
    char driver_why[256];   /* why there are no local devices, when there are none */
    int major[MAX_DEVS], minor[MAX_DEVS];
    char toolkit[2][CCKEY_TOOLKIT_PATH];   /* its include folders, searched after the options' */
    char *toolkit_flag[2];                  /* -IDIR for each */
    size_t n_toolkit;
    char version[160];   /* recorded in entries: "NVRTC 13.0 (V13.0.88; CCCL 3.0.1)" */
    bool ready;
    char why[512];
} cuda_state;

static cuda_state state;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Set by the CLI (CCKEY_NVRTC_LIBRARY) before any compiler is made. */
static char nvrtc_path[4096];

int warm_set_nvrtc_library(const char *path)
{
    if (path && strlen(path) >= sizeof nvrtc_path) return -1;
    snprintf(nvrtc_path, sizeof nvrtc_path, "%s", path ? path : "");
    return 0;
}

static void *open_nvrtc(void)
{
    if (*nvrtc_path) return dlopen(nvrtc_path, RTLD_NOW | RTLD_LOCAL);
    static const char *const names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
                                        "/usr/local/cuda/lib64/libnvrtc.so"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h) return h;
    }
    return NULL;
}

int warm_nvrtc_probe(char *why, size_t why_len)
{
    void *h = open_nvrtc();
    if (!h) {
        snprintf(why, why_len, "libnvrtc.so not found (CCKEY_NVRTC_LIBRARY names it)");
        return -1;
    }
    int ok = dlsym(h, "nvrtcCompileProgram") != NULL;
    if (!ok) snprintf(why, why_len, "libnvrtc lacks nvrtcCompileProgram");
    /* Stays loaded: warm would load it again, and NVRTC does not promise a
     * clean unload. */
    return ok ? 0 : -1;
}

/* The NVIDIA driver's version as `cckey devices` shows it, e.g. 580.159.04. */
static void driver_version(char *buf, size_t len, int cu_version)
{
    snprintf(buf, len, "%d.%d", cu_version / 1000, cu_version % 1000 / 10);
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (!f) return;
    char line[512];
    if (fgets(line, sizeof line, f)) {
        char *p = strstr(line, "Kernel Module");
        if (p) {
            p += strlen("Kernel Module");
            while (*p == ' ' || *p == '\t') p++;
            size_t n = strcspn(p, " \t\n");
            if (n) snprintf(buf, len, "%.*s", (int)n, p);
        }
    }
    fclose(f);
}

/* The local devices, when a driver is here; else driver_why says why not. */
static void load_driver(cuda_state *s)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cuda) {
        snprintf(s->driver_why, sizeof s->driver_why, "no CUDA driver (libcuda.so.1)");
        return;
    }
    int (*cu_init)(unsigned) = (int (*)(unsigned))dlsym(cuda, "cuInit");
    int (*cu_count)(int *) = (int (*)(int *))dlsym(cuda, "cuDeviceGetCount");
    int (*cu_get)(int *, int) = (int (*)(int *, int))dlsym(cuda, "cuDeviceGet");
    int (*cu_name)(char *, int, int) = (int (*)(char *, int, int))dlsym(cuda, "cuDeviceGetName");
    int (*cu_attr)(int *, int, int) = (int (*)(int *, int, int))dlsym(cuda, "cuDeviceGetAttribute");
    int (*cu_version)(int *) = (int (*)(int *))dlsym(cuda, "cuDriverGetVersion");
    int count = 0, version = 0;
    if (!cu_init || !cu_count || !cu_get || !cu_name || !cu_attr || !cu_version || cu_init(0) != 0 ||
        cu_count(&count) != 0 || count == 0) {
        snprintf(s->driver_why, sizeof s->driver_why, "the CUDA driver reports no usable device");
        return;
    }
    cu_version(&version);
    /* Identities as cckey devices prints them, when the CUDA backend is in
     * this build; else the same recipe from the driver directly. */
    cckey_device infos[MAX_DEVS];
    size_t listed = 0;
    cckey_devices(NULL, CCKEY_BACKEND_CUDA, infos, MAX_DEVS, &listed);   /* UNAVAILABLE still lists them */
    if (listed > MAX_DEVS) listed = MAX_DEVS;
    s->devices.n = (size_t)count < MAX_DEVS ? (size_t)count : MAX_DEVS;
    for (size_t i = 0; i < s->devices.n; i++) {
        int dev = 0;
        cu_get(&dev, (int)i);
        cu_attr(&s->major[i], 75, dev);   /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
        cu_attr(&s->minor[i], 76, dev);   /* ..._MINOR */
        if (i < listed) {
            snprintf(s->devices.ident[i], sizeof s->devices.ident[i], "%s", infos[i].id);
        } else {
            char name[256] = "", drv[64];
            cu_name(name, sizeof name, dev);
            driver_version(drv, sizeof drv, version);
            snprintf(s->devices.ident[i], sizeof s->devices.ident[i], "%s|%s", name, drv);
        }
    }
}

/* The toolkit beside the NVRTC library that was loaded (or CUDA_HOME's). */
static void find_toolkit(cuda_state *s)
{
    Dl_info info;
    const char *lib = dladdr((void *)s->create, &info) && info.dli_fname ? info.dli_fname : NULL;
    s->n_toolkit = warm_cuda_toolkit_find(lib, s->toolkit, 2);
    /* nvrtcVersion says 13.0 for every 13.0.x; the build and the toolkit's
     * headers (whose files are not recorded as dependencies: the version
     * stands for them) make a patch upgrade a miss too. */
    char build[64], cccl[64] = "";
    warm_nvrtc_build(lib, build, sizeof build);
    if (s->n_toolkit) warm_cccl_version(s->toolkit[0], cccl, sizeof cccl);
    snprintf(s->version, sizeof s->version, "NVRTC %d.%d%s%s%s%s%s", s->nvrtc_major, s->nvrtc_minor,
             *build || *cccl ? " (" : "", build, *build && *cccl ? "; " : "", cccl, *build || *cccl ? ")" : "");
    for (size_t i = 0; i < s->n_toolkit; i++) {
        size_t n = strlen(s->toolkit[i]) + 3;
        if ((s->toolkit_flag[i] = malloc(n))) snprintf(s->toolkit_flag[i], n, "-I%s", s->toolkit[i]);
        else s->n_toolkit = i;
    }
}

size_t warm_nvrtc_toolkit_include(const char **dirs, size_t max)
{
    size_t n = 0;
    for (; state.ready && n < state.n_toolkit && n < max; n++) dirs[n] = state.toolkit[n];
    return n;
}

static void load(void)
{
    cuda_state *s = &state;
    void *h = open_nvrtc();
    if (!h) {
        snprintf(s->why, sizeof s->why, "NVRTC (libnvrtc.so) not found; set CCKEY_NVRTC_LIBRARY to its path");
        return;
    }
#define SYM(field, type, name) s->field = (type)dlsym(h, name)
    SYM(create, nvrtc_create_fn, "nvrtcCreateProgram");
    SYM(compile, nvrtc_compile_fn, "nvrtcCompileProgram");
    SYM(log_size, nvrtc_size_fn, "nvrtcGetProgramLogSize");
    SYM(log, nvrtc_get_fn, "nvrtcGetProgramLog");
    SYM(cubin_size, nvrtc_size_fn, "nvrtcGetCUBINSize");
    SYM(cubin, nvrtc_get_fn, "nvrtcGetCUBIN");
    SYM(ptx_size, nvrtc_size_fn, "nvrtcGetPTXSize");
    SYM(ptx, nvrtc_get_fn, "nvrtcGetPTX");
    SYM(destroy, nvrtc_destroy_fn, "nvrtcDestroyProgram");
    SYM(error, nvrtc_error_fn, "nvrtcGetErrorString");
#undef SYM
    nvrtc_version_fn ver = (nvrtc_version_fn)dlsym(h, "nvrtcVersion");
    if (!s->create || !s->compile || !s->log_size || !s->log || !s->ptx_size || !s->ptx || !s->destroy ||
        !s->error || !ver || ver(&s->nvrtc_major, &s->nvrtc_minor) != 0) {
        snprintf(s->why, sizeof s->why, "libnvrtc lacks the functions cckey needs (too old?)");
        return;
    }
    load_driver(s);
    find_toolkit(s);
    s->ready = true;
}

bool warm_nvrtc_usable(char *what, size_t len)
{
    pthread_once(&once, load);
    if (!state.ready) snprintf(what, len, "%s", state.why);
    else snprintf(what, len, "NVRTC %d.%d", state.nvrtc_major, state.nvrtc_minor);
    return state.ready;
}

static int find(void *impl, const char *ident, size_t len)
{
    int dev = warm_find(&((const cuda_state *)impl)->devices, ident, len);
    /* Another machine's GPU, named NAME|DRIVER: NVRTC alone, given the
     * architecture (checked per build, as it is in the options). */
    if (dev < 0 && len > 2 && memchr(ident, '|', len) && ident[0] != '|' && ident[len - 1] != '|')
        dev = CCKEY_WARM_REMOTE_DEV;
    return dev;
}

static void names(void *impl, char *buf, size_t len)
{
    const cuda_state *s = impl;
    warm_names(&s->devices, buf, len);
    if (s->devices.n == 0) snprintf(buf, len, "none (%s)", s->driver_why);
}

static void version(void *impl, int dev, char *buf, size_t len)
{
    (void)dev;
    const cuda_state *s = impl;
    snprintf(buf, len, "%s", s->version);
}

/* The entry is in the cubin's string table (NUL-delimited), or is a PTX
 * .entry. */
static bool has_entry(const char *bin, size_t len, const char *name, bool ptx)
{
    size_t n = strlen(name);
    for (const char *p = bin; (p = memmem(p, len - (size_t)(p - bin), name, n)); p++) {
        const char *end = p + n;
        if (ptx) {
            if (end < bin + len && *end == '(' && p - bin >= 7 && memcmp(p - 7, ".entry ", 7) == 0) return true;
        } else if (end < bin + len && *end == '\0' && (p == bin || p[-1] == '\0')) {
            return true;
        }
    }
    return false;
}

/* src compiled by NVRTC under the name file: the program, or NULL with
 * out->error (and out->log, the compiler's log, either way). dev < 0: no
 * device, so the options' architecture or NVRTC's default. */
static void *compile(cuda_state *s, int dev, const char *src, size_t len, const char *file,
                     const warm_flags *flags, warm_build *out)
{
    memset(out, 0, sizeof *out);
    char *text = malloc(len + 1);   /* NVRTC reads a C string */
    const char **argv = calloc(flags->argc + 1 + s->n_toolkit, sizeof *argv);
    if (!text || !argv) {
        free(text), free(argv);
        snprintf(out->error, sizeof out->error, "out of memory");
        return NULL;
    }
    memcpy(text, src, len);
    text[len] = '\0';
    char arch[64];
    size_t argc = 0;
    if (!flags->has_arch && dev == CCKEY_WARM_REMOTE_DEV) {
        free(text), free(argv);
        snprintf(out->error, sizeof out->error, "no CUDA device here has this identity; give its architecture "
                 "(option arch=sm_XX, e.g. cckey scan -O arch=sm_90) to compile with NVRTC alone");
        return NULL;
    }
    if (!flags->has_arch && dev >= 0) {
        snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", s->major[dev], s->minor[dev]);
        argv[argc++] = arch;
    }
    for (size_t i = 0; i < flags->argc; i++) argv[argc++] = flags->argv[i];
    for (size_t i = 0; i < s->n_toolkit; i++) argv[argc++] = s->toolkit_flag[i];   /* searched last */
    void *prog = NULL;
    int r = s->create(&prog, text, file, 0, NULL, NULL);
    free(text);
    if (r != 0) {
        free(argv);
        snprintf(out->error, sizeof out->error, "nvrtcCreateProgram: %s", s->error(r));
        return NULL;
    }
    r = s->compile(prog, (int)argc, argv);
    free(argv);
    size_t n = 0;
    if (s->log_size(prog, &n) == 0 && n > 1 && (out->log = malloc(n)) && s->log(prog, out->log) != 0) {
        free(out->log);
        out->log = NULL;
    }
    if (r != 0) {
        snprintf(out->error, sizeof out->error, "nvrtcCompileProgram: %s", s->error(r));
        s->destroy(&prog);
        return NULL;
    }
    return prog;
}

/* The PTX's .entry names: NVRTC keeps the PTX for real architectures too. */
static int entries(void *impl, int dev, const char *src, size_t len, const char *file, const warm_flags *flags,
                   warm_build *out)
{
    (void)dev;
    cuda_state *s = impl;
    void *prog = compile(s, -1, src, len, file, flags, out);
    if (!prog) return -1;
    size_t n = 0;
    char *ptx = s->ptx_size(prog, &n) == 0 && n ? malloc(n) : NULL;
    if (!ptx || s->ptx(prog, ptx) != 0) {
        free(ptx);
        s->destroy(&prog);
        snprintf(out->error, sizeof out->error, "reading NVRTC's PTX failed");
        return -1;
    }
    s->destroy(&prog);
    out->binary = warm_ptx_entries(ptx, n - 1, &out->binary_len);
    free(ptx);
    if (!out->binary) {
        snprintf(out->error, sizeof out->error, "out of memory");
        return -1;
    }
    return 0;
}

static int build(void *impl, int dev, const char *src, size_t len, const warm_flags *flags,
                 const char *const *entry_names, size_t n_names, bool *present, warm_build *out)
{
    cuda_state *s = impl;
    void *prog = compile(s, dev, src, len, "kernel.cu", flags, out);
    if (!prog) return -1;
    size_t n = 0;
    /* A cubin when the target is a real architecture (sm_XY); PTX when the
     * options asked for a virtual one (compute_XY). */
    bool ptx = !(s->cubin_size && s->cubin && s->cubin_size(prog, &n) == 0 && n > 0);
    if (ptx && (s->ptx_size(prog, &n) != 0 || n == 0)) {
        snprintf(out->error, sizeof out->error, "NVRTC produced neither a cubin nor PTX");
        s->destroy(&prog);
        return -1;
    }
    char *bin = malloc(n);
    if (!bin || (ptx ? s->ptx(prog, bin) : s->cubin(prog, bin)) != 0) {
        free(bin);
        snprintf(out->error, sizeof out->error, "reading NVRTC's output failed");
        s->destroy(&prog);
        return -1;
    }
    s->destroy(&prog);
    for (size_t i = 0; i < n_names; i++) present[i] = has_entry(bin, n, entry_names[i], ptx);
    out->binary = bin;
    out->binary_len = ptx && n ? n - 1 : n;   /* PTX without its NUL */
    return 0;
}

int warm_compiler_cuda(warm_compiler *out, char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    pthread_once(&once, load);
    if (!state.ready) {
        snprintf(why, why_len, "%s", state.why);
        return -1;
    }
    *out = (warm_compiler){"CUDA", "NVRTC", &state, find, names, version, build, entries};
    return 0;
}
