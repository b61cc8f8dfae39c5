/* The device pipeline on the native test engine, as a plain program so that
 * the ThreadSanitizer build runs it too (Criterion cannot start there): the
 * pipeline's two-ended claiming, packing helpers, slots in flight, the
 * engine pool under concurrent batches, and the fallback after a driver
 * error at each call site. Digests are checked against OpenSSL. */
#include "backends/gpu_pipeline.h"
#include "check.h"
#include "msg_batch.h"
#include "support.h"
#include "testing/testing.h"

#include <pthread.h>
#include <string.h>


/* Through the pipeline, then the planner's fallback on the CPU. */
static cckey_status digest(msg_batch *b, const cckey_device_settings *s)
{
    memset(b->done, 0, b->n);
    cckey_digest_job job = {.msgs = b->msgs, .n = b->n, .out = b->out, .done = b->done, .threads = 3, .settings = s};
    cckey_status st = cckey_backend_digest(cckey_testing_native(), &job);
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
    msg_batch *b = malloc(sizeof *b);
    msg_batch_make(b, c->seed, 1500);
    cckey_device_settings s = CCKEY_DEVICE_SETTINGS_INIT;
    s.chunk_bytes = 8192;
    c->ok = digest(b, &s) == CCKEY_OK;
    msg_batch_check(b, "concurrent");
    msg_batch_free(b);
    free(b);
    return NULL;
}

int main(void)
{
    msg_batch *b = malloc(sizeof *b);
    msg_batch_make(b, 1, 3000);
    for (int i = 0; i < MSG_SWEEP_STEPS; i++) {
        cckey_device_settings s = msg_batch_sweep(i);
        CHECK(digest(b, &s) == CCKEY_OK, "chunk %zu share %d: %s", s.chunk_bytes, s.cpu_share, cckey_last_error());
        msg_batch_check(b, "chunks");
    }
    /* A driver error at each call site (and a pipeline fault): right digests. */
    for (int call = CCKEY_NATIVE_OPEN; call < CCKEY_NATIVE_CALLS; call++) {
        cckey_device_settings s = CCKEY_DEVICE_SETTINGS_INIT;
        s.chunk_bytes = 2048;
        s.cpu_share = call % 2;
        cckey_native_fail((cckey_native_call)call, call >= CCKEY_NATIVE_LAUNCH ? 3 : 1);
        cckey_status st = digest(b, &s);
        CHECK(st == CCKEY_ERR_DEVICE || (s.cpu_share && st == CCKEY_OK), "call %d: %d", call, st);
        msg_batch_check(b, "driver error");
        cckey_native_fail(CCKEY_NATIVE_NONE, 0);
    }
    cckey_device_settings s = CCKEY_DEVICE_SETTINGS_INIT;
    s.chunk_bytes = 1024, s.cpu_share = false, s.fault_chunk = 4;
    CHECK(digest(b, &s) == CCKEY_ERR_DEVICE, "fault at chunk 4");
    msg_batch_check(b, "fault at chunk 4");
    msg_batch_free(b);
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
