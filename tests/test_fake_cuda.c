/* The CUDA engine (host/backends/cuda.c) on the stand-in driver of
 * tests/fake_cuda: a plain program, so that the ASan/UBSan and TSan builds
 * run it too. Through the device pipeline and through cckey_make_keys, with
 * digests and keys checked against OpenSSL: every chunk size, pinned
 * staging only, concurrent batches on engines of their own, and a driver
 * error injected at each call site, which must leave the batch to the CPU
 * with the driver's error named and every key right. Exit 77: skipped. */
#include "backends/cuda_backend.h"
#include "backends/gpu_pipeline.h"
#include "check.h"
#include "msg_batch.h"
#include "cckey_advanced.h"
#include "support.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#define K CCKEY_BACKEND_CUDA

typedef struct fake_cuda_stats {
    unsigned long live_blocks, live_pinned, pageable_copies, bytes_copied;
    int retains;
    unsigned long live_modules;
} fake_cuda_stats;
static int (*fake_fail)(const char *, unsigned);
static unsigned long (*fake_count)(const char *);
static void (*fake_stat)(fake_cuda_stats *);

/* The stand-in's controls: the same library the loader opened. */
static void bind_fake(void)
{
    void *lib = dlopen(CCKEY_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL);
    CHECK(lib, "%s", dlerror());
    void *f = dlsym(lib, "fake_cuda_fail"), *c = dlsym(lib, "fake_cuda_count"), *s = dlsym(lib, "fake_cuda_stat");
    CHECK(f && c && s, "the stand-in lacks its controls");
    memcpy(&fake_fail, &f, sizeof f);
    memcpy(&fake_count, &c, sizeof c);
    memcpy(&fake_stat, &s, sizeof s);
}

/* ---- digests through the pipeline ------------------------------------------ */

static cckey_status digest(msg_batch *b, const cckey_device_settings *s)
{
    memset(b->done, 0, b->n);
    memset(b->out, 0, b->n * CCKEY_MD5_DIGEST);
    cckey_digest_job job = {.msgs = b->msgs, .n = b->n, .out = b->out, .done = b->done, .threads = 2, .settings = s};
    return cckey_backend_digest(cckey_backend_ops_for(K), &job);
}

static void pipeline_chunks(void)
{
    msg_batch b;
    msg_batch_make(&b, 1, 2500);
    for (int i = 0; i < MSG_SWEEP_STEPS; i++) {
        cckey_device_settings s = msg_batch_sweep(i);
        unsigned long launches = fake_count("cuLaunchKernel");
        CHECK(digest(&b, &s) == CCKEY_OK, "chunk %zu share %d: %s", s.chunk_bytes, s.cpu_share, cckey_last_error());
        msg_batch_check(&b, "chunks");
        /* Without sharing, the device did the work. */
        if (!s.cpu_share) CHECK(fake_count("cuLaunchKernel") > launches, "chunk %zu: no launch", s.chunk_bytes);
    }
    msg_batch_free(&b);
    fake_cuda_stats st;
    fake_stat(&st);
    CHECK(st.pageable_copies == 0, "%lu copies from pageable memory: staging must be pinned", st.pageable_copies);
    CHECK(st.live_pinned > 0 && st.live_blocks > 0, "the engine keeps its buffers between batches");
}

/* ---- keys through the public API --------------------------------------------- */

typedef struct keyset {
    cckey_tuple *t;
    char (*keys)[CCKEY_KEY_LEN + 1];
    size_t n;
    cckey_test_arena a;
} keyset;

static void make_keys(keyset *k, uint64_t seed, size_t n)
{
    memset(k, 0, sizeof *k);
    uint64_t rng = seed;
    k->n = n;
    k->t = calloc(n, sizeof *k->t);
    k->keys = calloc(n, sizeof *k->keys);
    CHECK(k->t && k->keys, "out of memory");
    for (size_t i = 0; i < n; i++) {
        cckey_test_tuple r = cckey_test_random_tuple(&k->a, &rng, 300);
        cckey_bytes src = cckey_test_random_bytes(&k->a, &rng, cckey_test_below(&rng, 3000));
        k->t[i] = (cckey_tuple){r.device, r.name, src, r.opts, r.n};
    }
}

static void check_keys(const keyset *k, const char *what)
{
    for (size_t i = 0; i < k->n; i++) {
        char want[CCKEY_KEY_LEN + 1];
        const cckey_tuple *t = &k->t[i];
        cckey_test_ref_key(want, t->device, t->name, t->source, t->options, t->n_options);
        CHECK(strcmp(want, k->keys[i]) == 0, "%s: key %zu wrong", what, i);
    }
}

static cckey_batch_config *cuda_config(int share)
{
    cckey_batch_config *cfg = NULL;
    CHECK(cckey_batch_config_new(&cfg) == CCKEY_OK, "config");
    CHECK(cckey_batch_config_set_backend(cfg, K) == CCKEY_OK, "backend");
    CHECK(cckey_batch_config_set_device_share(cfg, share) == CCKEY_OK, "share");
    CHECK(cckey_batch_config_set_chunk_bytes(cfg, 4096) == CCKEY_OK, "chunk");
    return cfg;
}

static void public_keys(void)
{
    keyset k;
    make_keys(&k, 7, 1200);
    for (int share = 0; share < 2; share++) {
        cckey_batch_config *cfg = cuda_config(share);
        CHECK(cckey_make_keys(k.keys, k.t, k.n, cfg) == CCKEY_OK, "%s", cckey_last_error());
        check_keys(&k, "public");
        CHECK(strncmp(cckey_batch_config_used(cfg), "cuda", 4) == 0, "used %s", cckey_batch_config_used(cfg));
        CHECK(!*cckey_batch_config_warning(cfg), "warning: %s", cckey_batch_config_warning(cfg));
        cckey_batch_config_free(cfg);
    }
    free(k.t), free(k.keys);
    cckey_test_arena_free(&k.a);
}

/* A driver error at each call site cuda.c makes in a batch, in the order a
 * fresh engine makes them (each failure tears the engine down, so the next
 * batch sets it up again): the batch ends on the CPU, right, and the
 * warning names the call and the driver's error. */
static void faults(void)
{
    static const struct {
        const char *call, *error;
        unsigned nth;
    } site[] = {
        {"cuDevicePrimaryCtxRetain", "CUDA_ERROR_OUT_OF_MEMORY", 1},
        {"cuCtxPushCurrent", "CUDA_ERROR_INVALID_CONTEXT", 1},
        {"cuStreamCreate", "CUDA_ERROR_OUT_OF_MEMORY", 2},
        {"cuModuleLoadData", "CUDA_ERROR_INVALID_IMAGE", 1},
        {"cuModuleGetFunction", "CUDA_ERROR_NOT_FOUND", 1},
        {"cuMemAlloc", "CUDA_ERROR_OUT_OF_MEMORY", 3},
        {"cuMemHostAlloc", "CUDA_ERROR_OUT_OF_MEMORY", 2},
        {"cuMemcpyHtoDAsync", "CUDA_ERROR_ILLEGAL_ADDRESS", 4},
        {"cuLaunchKernel", "CUDA_ERROR_LAUNCH_FAILED", 2},
        {"cuMemcpyDtoHAsync", "CUDA_ERROR_ILLEGAL_ADDRESS", 2},
        {"cuStreamSynchronize", "CUDA_ERROR_LAUNCH_FAILED", 3},
    };
    keyset k;
    make_keys(&k, 11, 600);
    cckey_batch_config *cfg = cuda_config(0);
    for (size_t i = 0; i < sizeof site / sizeof *site; i++) {
        unsigned long before = fake_count(site[i].call);
        CHECK(fake_fail(site[i].call, site[i].nth) == 0, "%s", site[i].call);
        memset(k.keys, 0, k.n * sizeof *k.keys);
        CHECK(cckey_make_keys(k.keys, k.t, k.n, cfg) == CCKEY_OK, "%s: %s", site[i].call, cckey_last_error());
        fake_fail(NULL, 0);
        check_keys(&k, site[i].call);
        const char *w = cckey_batch_config_warning(cfg);
        CHECK(fake_count(site[i].call) >= before + site[i].nth, "%s: not called %u times", site[i].call,
              site[i].nth);
        CHECK(strstr(w, "cuda backend failed") && strstr(w, site[i].call) && strstr(w, site[i].error),
              "%s: warning '%s'", site[i].call, w);
        CHECK(strcmp(cckey_batch_config_used(cfg), "cuda+cpu") == 0, "used %s", cckey_batch_config_used(cfg));
    }
    /* A failed attribute query is no failure: the block size falls back.
     * The engine must be rebuilt for it to be asked, so fail a batch first. */
    CHECK(fake_fail("cuMemAlloc", 1) == 0, "arm");
    CHECK(cckey_make_keys(k.keys, k.t, k.n, cfg) == CCKEY_OK, "%s", cckey_last_error());
    CHECK(fake_fail("cuFuncGetAttribute", 1) == 0, "arm");
    CHECK(cckey_make_keys(k.keys, k.t, k.n, cfg) == CCKEY_OK, "%s", cckey_last_error());
    fake_fail(NULL, 0);
    check_keys(&k, "cuFuncGetAttribute");
    CHECK(!*cckey_batch_config_warning(cfg), "cuFuncGetAttribute: warning %s", cckey_batch_config_warning(cfg));
    /* And after all that, the device works again. */
    CHECK(cckey_make_keys(k.keys, k.t, k.n, cfg) == CCKEY_OK, "%s", cckey_last_error());
    check_keys(&k, "after the faults");
    CHECK(strcmp(cckey_batch_config_used(cfg), "cuda") == 0, "used %s", cckey_batch_config_used(cfg));
    cckey_batch_config_free(cfg);
    free(k.t), free(k.keys);
    cckey_test_arena_free(&k.a);
}

/* ---- a driver that will not let go ------------------------------------------ */

typedef struct teardown_run {
    keyset small, big;
    cckey_batch_config *tiny, *wide;   /* 64-byte chunks; 1 MiB chunks */
    fake_cuda_stats idle;              /* the driver's books with the engine idle after a big batch */
} teardown_run;

static void keys_on(teardown_run *r, keyset *k, cckey_batch_config *cfg, const char *used, const char *what)
{
    memset(k->keys, 0, k->n * sizeof *k->keys);
    CHECK(cckey_make_keys(k->keys, k->t, k->n, cfg) == CCKEY_OK, "%s: %s", what, cckey_last_error());
    check_keys(k, what);
    CHECK(strcmp(cckey_batch_config_used(cfg), used) == 0, "%s: used %s, expected %s", what,
          cckey_batch_config_used(cfg), used);
    (void)r;
}

/* A big batch on a rebuilt engine leaves the driver's books as they were
 * with the engine idle before, but for what it refused to free. */
static void books_balance(const teardown_run *r, long blocks, int retains, long modules, const char *what)
{
    fake_cuda_stats st;
    fake_stat(&st);
    CHECK((long)(st.live_blocks + st.live_pinned) == (long)(r->idle.live_blocks + r->idle.live_pinned) + blocks,
          "%s: %lu+%lu blocks live, expected %lu+%lu%+ld", what, st.live_blocks, st.live_pinned, r->idle.live_blocks,
          r->idle.live_pinned, blocks);
    CHECK(st.retains == r->idle.retains + retains, "%s: %d context retains, expected %d", what, st.retains,
          r->idle.retains + retains);
    CHECK((long)st.live_modules == (long)r->idle.live_modules + modules, "%s: %lu modules", what, st.live_modules);
}

/* The warning of the last batch on cfg names the failed call and the
 * driver's error, and says the batch went to the CPU. */
static void warned(cckey_batch_config *cfg, const char *call, const char *error, const char *what)
{
    const char *w = cckey_batch_config_warning(cfg);
    CHECK(strstr(w, "cuda backend failed") && strstr(w, call) && strstr(w, error), "%s: warning '%s'", what, w);
}

/* Releasing staging to grow it, mid-batch: a refusal fails the batch over
 * to the CPU (the device is suspect), its keys right, the warning naming
 * the call; the next batch rebuilds the engine. */
static void refused_release(teardown_run *r, const char *call, const char *error, long kept)
{
    /* A fresh engine with tiny staging: tear the old one down first. */
    CHECK(fake_fail("cuLaunchKernel", 1) == 0, "arm");
    keys_on(r, &r->small, r->tiny, "cuda+cpu", "tear down");
    fake_fail(NULL, 0);
    keys_on(r, &r->small, r->tiny, "cuda", "tiny staging");
    unsigned long before = fake_count(call);
    CHECK(fake_fail(call, 1) == 0, "arm %s", call);
    keys_on(r, &r->big, r->wide, "cuda+cpu", call);
    fake_fail(NULL, 0);
    CHECK(fake_count(call) > before, "%s: never called", call);
    warned(r->wide, call, error, call);
    keys_on(r, &r->big, r->wide, "cuda", "after a refused release");
    CHECK(!*cckey_batch_config_warning(r->wide), "warning: %s", cckey_batch_config_warning(r->wide));
    books_balance(r, kept, 0, 0, call);
}

/* Tearing down after a failure: the failure is what the warning names, the
 * refusal changes nothing else, and every other resource still goes. The
 * failure comes at open (the context push), before a batch can grow its
 * staging: so the refused call is surely one of the teardown's. */
static void refused_teardown(teardown_run *r, const char *call, long blocks, int retains, long modules)
{
    unsigned long before = fake_count(call);
    CHECK(fake_fail("cuCtxPushCurrent", 1) == 0 && fake_fail(call, 1) == 0, "arm %s", call);
    keys_on(r, &r->big, r->wide, "cuda+cpu", call);
    fake_fail(NULL, 0);
    CHECK(fake_count(call) > before, "%s: never called", call);
    warned(r->wide, "cuCtxPushCurrent", "CUDA_ERROR_INVALID_CONTEXT", call);
    keys_on(r, &r->big, r->wide, "cuda", "after a refused teardown");
    books_balance(r, blocks, retains, modules, call);
}

static void teardown_faults(void)
{
    teardown_run r;
    make_keys(&r.small, 21, 4);
    make_keys(&r.big, 22, 600);
    r.tiny = cuda_config(0);
    r.wide = cuda_config(0);
    CHECK(cckey_batch_config_set_chunk_bytes(r.tiny, 64) == CCKEY_OK, "chunk");
    CHECK(cckey_batch_config_set_chunk_bytes(r.wide, 1 << 20) == CCKEY_OK, "chunk");
    keys_on(&r, &r.big, r.wide, "cuda", "baseline");
    fake_stat(&r.idle);
    CHECK(r.idle.retains == 1 && r.idle.live_modules == 1, "idle engine: %d retains, %lu modules", r.idle.retains,
          r.idle.live_modules);

    /* Growing staging: release() sees each refusal; a refused free is one
     * block the driver keeps (the counts below add up). */
    refused_release(&r, "cuStreamSynchronize", "CUDA_ERROR_LAUNCH_FAILED", 0);
    refused_release(&r, "cuMemFree", "CUDA_ERROR_UNKNOWN", 1);
    refused_release(&r, "cuMemFreeHost", "CUDA_ERROR_UNKNOWN", 2);

    /* Giving the context back after a batch the device did right. */
    unsigned long before = fake_count("cuCtxPopCurrent");
    CHECK(fake_fail("cuCtxPopCurrent", 1) == 0, "arm");
    keys_on(&r, &r.big, r.wide, "cuda+cpu", "cuCtxPopCurrent");
    fake_fail(NULL, 0);
    CHECK(fake_count("cuCtxPopCurrent") > before, "cuCtxPopCurrent: never called");
    warned(r.wide, "cuCtxPopCurrent", "CUDA_ERROR_INVALID_CONTEXT", "cuCtxPopCurrent");
    keys_on(&r, &r.big, r.wide, "cuda", "after a refused pop");
    books_balance(&r, 2, 0, 0, "cuCtxPopCurrent");

    /* Teardown after a failure. */
    refused_teardown(&r, "cuMemFree", 3, 0, 0);
    refused_teardown(&r, "cuStreamDestroy", 3, 0, 0);
    refused_teardown(&r, "cuModuleUnload", 3, 0, 1);
    refused_teardown(&r, "cuDevicePrimaryCtxRelease", 3, 1, 1);
    cckey_batch_config_free(r.tiny);
    cckey_batch_config_free(r.wide);
    keyset *ks[] = {&r.small, &r.big};
    for (size_t i = 0; i < 2; i++) {
        free(ks[i]->t), free(ks[i]->keys);
        cckey_test_arena_free(&ks[i]->a);
    }
}

/* ---- concurrent batches: engines of their own, one primary context ------- */

static void *concurrent(void *p)
{
    uint64_t seed = *(uint64_t *)p;
    msg_batch b;
    msg_batch_make(&b, seed, 1200);
    cckey_device_settings s = CCKEY_DEVICE_SETTINGS_INIT;
    s.chunk_bytes = 8192;
    s.cpu_share = seed % 2;
    CHECK(digest(&b, &s) == CCKEY_OK, "concurrent: %s", cckey_last_error());
    msg_batch_check(&b, "concurrent");
    msg_batch_free(&b);
    return NULL;
}

int main(void)
{
    CHECK(cckey_set_driver_library(K, CCKEY_FAKE_CUDA) == CCKEY_OK, "%s", cckey_last_error());
    if (!cckey_cuda_has_kernel()) {
        printf("skipped: built without a compiled CUDA kernel (no nvcc)\n");
        return 77;
    }
    cckey_device dev;
    size_t n = 0;
    CHECK(cckey_devices(NULL, K, &dev, 1, &n) == CCKEY_OK, "%s", cckey_last_error());
    CHECK(n == 1 && strcmp(dev.name, "cckey fake CUDA device") == 0 && dev.usable && dev.selected, "device %s",
          dev.name);
    bind_fake();
    faults();   /* first: the engine's setup calls come on its first batch */
    teardown_faults();
    pipeline_chunks();
    public_keys();
    enum { T = 5 };
    pthread_t th[T];
    uint64_t seeds[T];
    for (int i = 0; i < T; i++) {
        seeds[i] = 100 + (uint64_t)i;
        CHECK(pthread_create(&th[i], NULL, concurrent, &seeds[i]) == 0, "thread %d", i);
    }
    for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
    printf("CUDA engine on the stand-in driver: every digest and key right\n");
    return 0;
}
