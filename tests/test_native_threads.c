/* The device pipeline on the native test engine, as a plain program so that
 * the ThreadSanitizer build runs it too (Criterion cannot start there): the
 * pipeline's two-ended claiming, packing helpers, slots in flight, the
 * engine pool under concurrent batches, and the fallback after a driver
 * error at each call site. Digests are checked against OpenSSL. */
#include "backends/gpu_pipeline.h"
#include "check.h"
#include "support.h"
#include "testing/testing.h"

#include <pthread.h>
#include <string.h>

#define K CCKEY_BACKEND_NATIVE_TEST

typedef struct batch {
    cckey_msg msgs[4000];
    uint8_t (*out)[CCKEY_MD5_DIGEST];
    uint8_t *done;
    size_t n;
    cckey_test_arena a;
} batch;

static void make(batch *b, uint64_t seed, size_t n)
{
    memset(b, 0, sizeof *b);
    uint64_t rng = seed;
    b->n = n;
    for (size_t i = 0; i < n; i++) {
        size_t pick = cckey_test_below(&rng, 100);
        size_t len = pick < 60 ? cckey_test_below(&rng, 130) : pick < 98 ? cckey_test_below(&rng, 5000)
                                                                          : CCKEY_GPU_DEFAULT_LONG_BYTES + 3;
        cckey_bytes m = cckey_test_random_bytes(&b->a, &rng, len);
        b->msgs[i] = (cckey_msg){m.ptr, m.len};
    }
    b->out = calloc(n, CCKEY_MD5_DIGEST);
    b->done = calloc(n, 1);
    CHECK(b->out && b->done, "out of memory");
}

static void check_all(const batch *b, const char *what)
{
    for (size_t i = 0; i < b->n; i++) {
        char want[CCKEY_HEX_LEN + 1], got[CCKEY_HEX_LEN + 1];
        cckey_test_md5_hex(b->msgs[i].ptr, b->msgs[i].len, want);
        for (int k = 0; k < 16; k++) snprintf(got + 2 * k, 3, "%02x", b->out[i][k]);
        CHECK(b->done[i], "%s: message %zu not done", what, i);
        CHECK(strcmp(want, got) == 0, "%s: message %zu (length %zu) wrong", what, i, b->msgs[i].len);
    }
}

static void release(batch *b)
{
    free(b->out), free(b->done);
    cckey_test_arena_free(&b->a);
}

/* Through the pipeline, then the planner's fallback on the CPU. */
static cckey_status digest(batch *b, const cckey_device_settings *s)
{
    memset(b->done, 0, b->n);
    cckey_digest_job job = {.msgs = b->msgs, .n = b->n, .out = b->out, .done = b->done, .threads = 3, .settings = s};
    cckey_status st = cckey_backend_digest(cckey_backend_ops_for(K), &job);
    if (st != CCKEY_OK) CHECK(cckey_cpu_digest(&job) == CCKEY_OK, "fallback");
    return st;
}

typedef struct conc {
    uint64_t seed;
    int ok;
} conc;

static void *concurrent(void *p)
{
    conc *c = p;
    batch *b = malloc(sizeof *b);
    make(b, c->seed, 1500);
    cckey_device_settings s = CCKEY_DEVICE_SETTINGS_INIT;
    s.chunk_bytes = 8192;
    c->ok = digest(b, &s) == CCKEY_OK;
    check_all(b, "concurrent");
    release(b);
    free(b);
    return NULL;
}

int main(void)
{
    batch *b = malloc(sizeof *b);
    make(b, 1, 3000);
    static const size_t chunks[] = {64, 2048, 65536, CCKEY_GPU_DEFAULT_CHUNK_BYTES};
    for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++)
        for (int share = 0; share < 2; share++) {
            cckey_device_settings s = CCKEY_DEVICE_SETTINGS_INIT;
            s.chunk_bytes = chunks[c];
            s.cpu_share = share;
            CHECK(digest(b, &s) == CCKEY_OK, "chunk %zu share %d: %s", chunks[c], share, cckey_last_error());
            check_all(b, "chunks");
        }
    /* A driver error at each call site (and a pipeline fault): right digests. */
    for (int call = CCKEY_NATIVE_OPEN; call < CCKEY_NATIVE_CALLS; call++) {
        cckey_device_settings s = CCKEY_DEVICE_SETTINGS_INIT;
        s.chunk_bytes = 2048;
        s.cpu_share = call % 2;
        cckey_native_fail((cckey_native_call)call, call >= CCKEY_NATIVE_LAUNCH ? 3 : 1);
        cckey_status st = digest(b, &s);
        CHECK(st == CCKEY_ERR_DEVICE || (s.cpu_share && st == CCKEY_OK), "call %d: %d", call, st);
        check_all(b, "driver error");
        cckey_native_fail(CCKEY_NATIVE_NONE, 0);
    }
    cckey_device_settings s = CCKEY_DEVICE_SETTINGS_INIT;
    s.chunk_bytes = 1024, s.cpu_share = false, s.fault_chunk = 4;
    CHECK(digest(b, &s) == CCKEY_ERR_DEVICE, "fault at chunk 4");
    check_all(b, "fault at chunk 4");
    release(b);
    free(b);

    /* Concurrent batches: engines of their own, more than the pool holds. */
    enum { T = 6 };
    pthread_t th[T];
    conc c[T];
    for (int i = 0; i < T; i++) {
        c[i] = (conc){.seed = 100 + (uint64_t)i};
        CHECK(pthread_create(&th[i], NULL, concurrent, &c[i]) == 0, "thread %d", i);
    }
    for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < T; i++) CHECK(c[i].ok, "concurrent batch %d", i);
    printf("native engine: every digest right\n");
    return 0;
}
