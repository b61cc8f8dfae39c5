/* A stand-in for the CUDA driver, for the tests only (never installed): a
 * libcuda.so.1 that implements, on host memory, the driver calls cckey's
 * CUDA engine makes (host/backends/cuda_loader.c), so that cuda.c's host
 * logic runs on every machine, under the sanitizers too.
 *
 * It keeps the driver's rules where cuda.c could break them: every call but
 * the version and error-name ones needs cuInit; memory, module and stream
 * calls need a current context (pushed, and retained); device pointers are
 * checked against live allocations; a zero-byte cuMemAlloc is refused;
 * copies and launches are asynchronous, run in order by a thread per
 * stream, and only cuStreamSynchronize makes their results visible (a
 * digest read before it is a data race under ThreadSanitizer). The module
 * loader accepts a fatbin (its header's size bounds it) or PTX text and
 * finds kernels by name in the image; the kernel launched is
 * kernels/md5.kern built as host C (host/testing/native_kernel.c).
 *
 * Test controls: CCKEY_FAKE_CUDA_FAIL=cuName:N (read on first use) or
 * fake_cuda_fail() makes the Nth call of cuName from then on fail once with
 * that call's usual error; several calls can be armed at once (a failure
 * and then one in the teardown it causes), fake_cuda_fail(NULL, 0) disarms
 * them all. A teardown call that fails does nothing, as a refused free
 * leaves the driver's memory in place. fake_cuda_count() reads per-call
 * counters and fake_cuda_stat() a few totals. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

enum {
    OK = 0, INVALID_VALUE = 1, OUT_OF_MEMORY = 2, NOT_INITIALIZED = 3, INVALID_DEVICE = 101,
    INVALID_IMAGE = 200, INVALID_CONTEXT = 201, INVALID_HANDLE = 400, NOT_FOUND = 500,
    ILLEGAL_ADDRESS = 700, LAUNCH_FAILED = 719, UNKNOWN = 999
};

#define KERNEL_NAME "cckey_md5_kernel"
#define MAX_THREADS 1024
#define LATENCY_NS 10000L   /* per copy: a transfer is never instant */

void cckey_md5_kernel(const uint8_t *data, const uint32_t *meta, uint32_t *out, uint32_t count);
extern _Thread_local uint32_t cckey_host_gid;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;   /* everything below */

/* ---- call counters and injected faults ----------------------------------- */

static const char *const calls[] = {
    "cuInit", "cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetName", "cuDeviceGetAttribute", "cuDeviceTotalMem",
    "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease", "cuCtxPushCurrent", "cuCtxPopCurrent",
    "cuModuleLoadData", "cuModuleUnload", "cuModuleGetFunction", "cuFuncGetAttribute", "cuMemAlloc", "cuMemFree",
    "cuMemHostAlloc", "cuMemFreeHost", "cuMemcpyHtoDAsync", "cuMemcpyDtoHAsync", "cuStreamCreate",
    "cuStreamDestroy", "cuStreamSynchronize", "cuLaunchKernel"};
#define NCALLS (sizeof calls / sizeof *calls)
static unsigned long count[NCALLS];
static unsigned long fail_left[NCALLS];   /* 0: not armed */
static bool initialized;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static int call_index(const char *name)
{
    for (size_t i = 0; i < NCALLS; i++)
        if (strcmp(calls[i], name) == 0) return (int)i;
    return -1;
}

EXPORT int fake_cuda_fail(const char *name, unsigned nth)
{
    int i = name ? call_index(name) : -1;
    if (name && i < 0) return -1;
    pthread_mutex_lock(&lock);
    if (!name) memset(fail_left, 0, sizeof fail_left);
    else fail_left[i] = nth;
    pthread_mutex_unlock(&lock);
    return 0;
}

static void read_env(void)
{
    const char *v = getenv("CCKEY_FAKE_CUDA_FAIL");
    char name[64];
    unsigned nth;
    if (v && sscanf(v, "%63[^:]:%u", name, &nth) == 2 && fake_cuda_fail(name, nth) != 0)
        fprintf(stderr, "fake libcuda: CCKEY_FAKE_CUDA_FAIL names no call: %s\n", v);
}

/* Counts a call (lock held) and says whether this one is to fail. */
static bool counted_fails(const char *name)
{
    int i = call_index(name);
    count[i]++;
    return fail_left[i] && --fail_left[i] == 0;
}

/* Entry of every counted call: the lock taken, the fault or the cuInit rule
 * applied. OK means go on (and unlock when done). */
static CUresult enter(const char *name, CUresult usual)
{
    pthread_once(&env_once, read_env);
    pthread_mutex_lock(&lock);
    CUresult r = counted_fails(name) ? usual : !initialized && strcmp(name, "cuInit") ? NOT_INITIALIZED : OK;
    if (r != OK) pthread_mutex_unlock(&lock);
    return r;
}

static CUresult leave(CUresult r)
{
    pthread_mutex_unlock(&lock);
    return r;
}

EXPORT unsigned long fake_cuda_count(const char *name)
{
    int i = call_index(name);
    pthread_mutex_lock(&lock);
    unsigned long n = i < 0 ? 0 : count[i];
    pthread_mutex_unlock(&lock);
    return n;
}

/* ---- errors ---------------------------------------------------------------- */

static const struct {
    CUresult r;
    const char *name, *text;
} errors[] = {
    {OK, "CUDA_SUCCESS", "no error"},
    {INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

static CUresult describe(CUresult r, const char **out, bool text)
{
    for (size_t i = 0; i < sizeof errors / sizeof *errors; i++)
        if (errors[i].r == r) {
            *out = text ? errors[i].text : errors[i].name;
            return OK;
        }
    *out = NULL;
    return INVALID_VALUE;
}

EXPORT CUresult cuGetErrorName(CUresult r, const char **s) { return describe(r, s, false); }
EXPORT CUresult cuGetErrorString(CUresult r, const char **s) { return describe(r, s, true); }

/* ---- the device -------------------------------------------------------------- */

EXPORT CUresult cuInit(unsigned flags)
{
    CUresult r = enter("cuInit", UNKNOWN);
    if (r != OK) return r;
    if (flags) return leave(INVALID_VALUE);
    initialized = true;
    return leave(OK);
}

EXPORT CUresult cuDriverGetVersion(int *v)
{
    if (!v) return INVALID_VALUE;
    *v = 12080;
    return OK;
}

EXPORT CUresult cuDeviceGetCount(int *n)
{
    CUresult r = enter("cuDeviceGetCount", UNKNOWN);
    if (r != OK) return r;
    *n = 1;
    return leave(OK);
}

EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    CUresult r = enter("cuDeviceGet", UNKNOWN);
    if (r != OK) return r;
    if (ordinal != 0) return leave(INVALID_DEVICE);
    *d = 0;
    return leave(OK);
}

/* A query about device d: counted, faulted, checked; no lock held after. */
static CUresult device_call(const char *name, CUdevice d)
{
    CUresult r = enter(name, UNKNOWN);
    return r != OK ? r : leave(d != 0 ? INVALID_DEVICE : OK);
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    CUresult r = device_call("cuDeviceGetName", d);
    if (r == OK) snprintf(name, (size_t)len, "cckey fake CUDA device");
    return r;
}

EXPORT CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d)
{
    CUresult r = device_call("cuDeviceGetAttribute", d);
    if (r == OK) *v = attr == 16 ? 4 : attr == 75 ? 9 : 0;   /* SMs, compute capability 9.0 */
    return r;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d)
{
    CUresult r = device_call("cuDeviceTotalMem", d);
    if (r == OK) *bytes = (size_t)1 << 30;
    return r;
}

/* ---- contexts: one primary context, a stack of current ones per thread ---- */

typedef struct fake_ctx {
    int retains;
} fake_ctx;
static fake_ctx primary;
static _Thread_local fake_ctx *current[16];
static _Thread_local int depth;

EXPORT CUresult cuDevicePrimaryCtxRetain(fake_ctx **ctx, CUdevice d)
{
    CUresult r = enter("cuDevicePrimaryCtxRetain", OUT_OF_MEMORY);
    if (r != OK) return r;
    if (d != 0) return leave(INVALID_DEVICE);
    primary.retains++;
    *ctx = &primary;
    return leave(OK);
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
    CUresult r = enter("cuDevicePrimaryCtxRelease", UNKNOWN);
    if (r != OK) return r;
    if (d != 0) return leave(INVALID_DEVICE);
    if (primary.retains <= 0) return leave(INVALID_CONTEXT);
    primary.retains--;
    return leave(OK);
}

EXPORT CUresult cuCtxPushCurrent_v2(fake_ctx *ctx)
{
    CUresult r = enter("cuCtxPushCurrent", INVALID_CONTEXT);
    if (r != OK) return r;
    if (ctx != &primary || primary.retains <= 0 || depth == 16) return leave(INVALID_CONTEXT);
    current[depth++] = ctx;
    return leave(OK);
}

EXPORT CUresult cuCtxPopCurrent_v2(fake_ctx **ctx)
{
    CUresult r = enter("cuCtxPopCurrent", INVALID_CONTEXT);
    if (r != OK) return r;
    if (!depth) return leave(INVALID_CONTEXT);
    fake_ctx *c = current[--depth];
    if (ctx) *ctx = c;
    return leave(OK);
}

/* Memory, module and stream calls: a current, live context. Lock held. */
static bool have_context(void) { return depth > 0 && current[depth - 1]->retains > 0; }

/* ---- memory ------------------------------------------------------------------ */

typedef struct block {
    uint8_t *p;
    size_t n;
    bool pinned;
    struct block *next;
} block;
static block *blocks;
static unsigned long pageable_copies, bytes_copied;

/* The live allocation of that kind holding [p, p + n), or NULL. Lock held. */
static block *find(const void *p, size_t n, bool pinned)
{
    for (block *b = blocks; b; b = b->next)
        if (b->pinned == pinned && (const uint8_t *)p >= b->p && (const uint8_t *)p + n <= b->p + b->n) return b;
    return NULL;
}

static CUresult allocate(void **out, size_t n, bool pinned)
{
    if (!have_context()) return INVALID_CONTEXT;
    if (!out || !n) return INVALID_VALUE;   /* as the driver: no zero-byte allocation */
    block *b = malloc(sizeof *b);
    uint8_t *p = malloc(n);
    if (!b || !p) {
        free(b), free(p);
        return OUT_OF_MEMORY;
    }
    *b = (block){p, n, pinned, blocks};
    blocks = b;
    *out = p;
    return OK;
}

static CUresult release(void *p, bool pinned)
{
    if (!have_context()) return INVALID_CONTEXT;
    for (block **at = &blocks; *at; at = &(*at)->next)
        if ((*at)->p == p && (*at)->pinned == pinned) {
            block *b = *at;
            *at = b->next;
            free(b->p), free(b);
            return OK;
        }
    return INVALID_VALUE;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *d, size_t n)
{
    CUresult r = enter("cuMemAlloc", OUT_OF_MEMORY);
    if (r != OK) return r;
    void *p = NULL;
    r = allocate(&p, n, false);
    if (r == OK) *d = (CUdeviceptr)(uintptr_t)p;
    return leave(r);
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr d)
{
    CUresult r = enter("cuMemFree", UNKNOWN);
    return r != OK ? r : leave(release((void *)(uintptr_t)d, false));
}

EXPORT CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags)
{
    CUresult r = enter("cuMemHostAlloc", OUT_OF_MEMORY);
    if (r != OK) return r;
    return leave(flags > 0xf ? INVALID_VALUE : allocate(p, n, true));
}

EXPORT CUresult cuMemFreeHost(void *p)
{
    CUresult r = enter("cuMemFreeHost", UNKNOWN);
    return r != OK ? r : leave(release(p, true));
}

/* ---- modules ------------------------------------------------------------------ */

typedef struct fake_module {
    bool has_kernel;
    struct fake_module *next;   /* the driver's books: a refused unload keeps it */
} fake_module;
static fake_module *modules;
typedef struct fake_func {
    int max_threads;
} fake_func;
static fake_func md5_kernel = {MAX_THREADS};

/* The image's extent: a fatbin's header gives it; PTX is NUL-terminated text. */
static size_t image_size(const uint8_t *img)
{
    uint32_t magic;
    memcpy(&magic, img, sizeof magic);
    if (magic == 0xba55ed50u) {
        uint16_t header;
        uint64_t body;
        memcpy(&header, img + 6, sizeof header);
        memcpy(&body, img + 8, sizeof body);
        return header >= 16 ? header + (size_t)body : 0;
    }
    if (memcmp(img, "//", 2) == 0 || memcmp(img, ".version", 8) == 0) return strlen((const char *)img);
    return 0;
}

EXPORT CUresult cuModuleLoadData(fake_module **m, const void *image)
{
    CUresult r = enter("cuModuleLoadData", INVALID_IMAGE);
    if (r != OK) return r;
    if (!have_context()) return leave(INVALID_CONTEXT);
    size_t n = image ? image_size(image) : 0;
    if (!n) return leave(INVALID_IMAGE);
    fake_module *mod = malloc(sizeof *mod);
    if (!mod) return leave(OUT_OF_MEMORY);
    mod->has_kernel = memmem(image, n, KERNEL_NAME, sizeof KERNEL_NAME - 1) != NULL;
    mod->next = modules;
    modules = mod;
    *m = mod;
    return leave(OK);
}

EXPORT CUresult cuModuleUnload(fake_module *m)
{
    CUresult r = enter("cuModuleUnload", UNKNOWN);
    if (r != OK) return r;
    if (!have_context()) return leave(INVALID_CONTEXT);
    for (fake_module **at = &modules; *at; at = &(*at)->next)
        if (*at == m) {
            *at = m->next;
            free(m);
            return leave(OK);
        }
    return leave(INVALID_HANDLE);
}

EXPORT CUresult cuModuleGetFunction(fake_func **f, fake_module *m, const char *name)
{
    CUresult r = enter("cuModuleGetFunction", NOT_FOUND);
    if (r != OK) return r;
    if (!have_context()) return leave(INVALID_CONTEXT);
    if (!m || !name) return leave(INVALID_HANDLE);
    if (!m->has_kernel || strcmp(name, KERNEL_NAME) != 0) return leave(NOT_FOUND);
    *f = &md5_kernel;
    return leave(OK);
}

EXPORT CUresult cuFuncGetAttribute(int *v, int attr, fake_func *f)
{
    CUresult r = enter("cuFuncGetAttribute", INVALID_VALUE);
    if (r != OK) return r;
    if (f != &md5_kernel) return leave(INVALID_HANDLE);
    if (attr != 0) return leave(INVALID_VALUE);
    *v = f->max_threads;
    return leave(OK);
}

/* ---- streams: a thread each, running its operations in order ---------------- */

typedef struct op {
    enum { COPY, LAUNCH } kind;
    void *dst;
    const void *src;
    size_t n;
    const uint8_t *data;   /* LAUNCH: the kernel's parameters, by value */
    const uint32_t *meta;
    uint32_t *out, count;
    size_t items;
    struct op *next;
} op;

typedef struct fake_stream {
    pthread_mutex_t m;
    pthread_cond_t cv;
    op *head, *tail;
    bool busy, stop;
    pthread_t th;
} fake_stream;

static void pause_for_transfer(void)
{
    struct timespec ts = {0, LATENCY_NS};
    nanosleep(&ts, NULL);
}

static void run(op *o)
{
    if (o->kind == COPY) {
        pause_for_transfer();
        memcpy(o->dst, o->src, o->n);
        return;
    }
    for (size_t i = 0; i < o->items; i++) {
        cckey_host_gid = (uint32_t)i;
        cckey_md5_kernel(o->data, o->meta, o->out, o->count);
    }
}

static void *stream_main(void *p)
{
    fake_stream *s = p;
    pthread_mutex_lock(&s->m);
    for (;;) {
        while (!s->head && !s->stop) pthread_cond_wait(&s->cv, &s->m);
        if (!s->head) break;
        op *o = s->head;
        s->head = o->next;
        if (!s->head) s->tail = NULL;
        s->busy = true;
        pthread_mutex_unlock(&s->m);
        run(o);
        free(o);
        pthread_mutex_lock(&s->m);
        s->busy = false;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->m);
    return NULL;
}

EXPORT CUresult cuStreamCreate(fake_stream **out, unsigned flags)
{
    CUresult r = enter("cuStreamCreate", OUT_OF_MEMORY);
    if (r != OK) return r;
    if (!have_context()) return leave(INVALID_CONTEXT);
    if (flags > 1) return leave(INVALID_VALUE);
    fake_stream *s = calloc(1, sizeof *s);
    if (!s) return leave(OUT_OF_MEMORY);
    pthread_mutex_init(&s->m, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (pthread_create(&s->th, NULL, stream_main, s) != 0) {
        free(s);
        return leave(OUT_OF_MEMORY);
    }
    *out = s;
    return leave(OK);
}

/* Waits for everything queued on s. */
static void drain(fake_stream *s)
{
    pthread_mutex_lock(&s->m);
    while (s->head || s->busy) pthread_cond_wait(&s->cv, &s->m);
    pthread_mutex_unlock(&s->m);
}

EXPORT CUresult cuStreamSynchronize(fake_stream *s)
{
    CUresult r = enter("cuStreamSynchronize", LAUNCH_FAILED);
    if (r != OK) return r;
    if (!s) return leave(INVALID_HANDLE);
    pthread_mutex_unlock(&lock);   /* the stream's work takes no driver lock */
    drain(s);
    return OK;
}

EXPORT CUresult cuStreamDestroy_v2(fake_stream *s)
{
    CUresult r = enter("cuStreamDestroy", UNKNOWN);
    if (r != OK) return r;
    if (!have_context()) return leave(INVALID_CONTEXT);
    if (!s) return leave(INVALID_HANDLE);
    pthread_mutex_unlock(&lock);
    pthread_mutex_lock(&s->m);
    s->stop = true;   /* the queue still runs to its end, as the driver's does */
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->m);
    pthread_join(s->th, NULL);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->m);
    free(s);
    return OK;
}

static CUresult enqueue(fake_stream *s, op *o)
{
    if (!s) {
        free(o);
        return INVALID_HANDLE;
    }
    pthread_mutex_lock(&s->m);
    o->next = NULL;
    if (s->tail) s->tail->next = o;
    else s->head = o;
    s->tail = o;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->m);
    return OK;
}

static CUresult copy(void *dst, const void *src, size_t n, fake_stream *s, bool to_device)
{
    if (!have_context()) return INVALID_CONTEXT;
    const void *dev = to_device ? dst : src, *host = to_device ? src : dst;
    if (!find(dev, n, false)) return INVALID_VALUE;
    if (!find(host, n, true)) pageable_copies++;   /* allowed, but not what cckey means to do */
    op *o = calloc(1, sizeof *o);
    if (!o) return OUT_OF_MEMORY;
    *o = (op){.kind = COPY, .dst = dst, .src = src, .n = n};
    bytes_copied += n;
    return enqueue(s, o);
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *h, size_t n, fake_stream *s)
{
    CUresult r = enter("cuMemcpyHtoDAsync", ILLEGAL_ADDRESS);
    return r != OK ? r : leave(copy((void *)(uintptr_t)d, h, n, s, true));
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *h, CUdeviceptr d, size_t n, fake_stream *s)
{
    CUresult r = enter("cuMemcpyDtoHAsync", ILLEGAL_ADDRESS);
    return r != OK ? r : leave(copy(h, (const void *)(uintptr_t)d, n, s, false));
}

EXPORT CUresult cuLaunchKernel(fake_func *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shared, fake_stream *s, void **params, void **extra)
{
    CUresult r = enter("cuLaunchKernel", LAUNCH_FAILED);
    if (r != OK) return r;
    if (!have_context()) return leave(INVALID_CONTEXT);
    if (f != &md5_kernel) return leave(INVALID_HANDLE);
    if (!params || extra || shared || gy != 1 || gz != 1 || by != 1 || bz != 1 || !gx || !bx ||
        bx > (unsigned)f->max_threads)
        return leave(INVALID_VALUE);
    op *o = calloc(1, sizeof *o);
    if (!o) return leave(OUT_OF_MEMORY);
    CUdeviceptr data, meta, out;
    memcpy(&data, params[0], sizeof data);
    memcpy(&meta, params[1], sizeof meta);
    memcpy(&out, params[2], sizeof out);
    *o = (op){.kind = LAUNCH, .data = (const uint8_t *)(uintptr_t)data, .meta = (const uint32_t *)(uintptr_t)meta,
              .out = (uint32_t *)(uintptr_t)out, .items = (size_t)gx * bx};
    memcpy(&o->count, params[3], sizeof o->count);
    /* The kernel's buffers must be device memory: 8 and 16 bytes per item. */
    if (!find(o->meta, 8 * (size_t)o->count, false) || !find(o->out, 16 * (size_t)o->count, false) ||
        !find(o->data, 1, false) || o->items < o->count) {
        free(o);
        return leave(ILLEGAL_ADDRESS);
    }
    return leave(enqueue(s, o));
}

/* ---- totals for the tests -------------------------------------------------- */

typedef struct fake_cuda_stats {
    unsigned long live_blocks, live_pinned, pageable_copies, bytes_copied;
    int retains;
    unsigned long live_modules;
} fake_cuda_stats;

EXPORT void fake_cuda_stat(fake_cuda_stats *out)
{
    pthread_mutex_lock(&lock);
    *out = (fake_cuda_stats){.pageable_copies = pageable_copies, .bytes_copied = bytes_copied,
                             .retains = primary.retains};
    for (block *b = blocks; b; b = b->next) b->pinned ? out->live_pinned++ : out->live_blocks++;
    for (fake_module *m = modules; m; m = m->next) out->live_modules++;
    pthread_mutex_unlock(&lock);
}
