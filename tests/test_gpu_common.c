/* Edge cases shared by the device backend suites; see test_gpu_common.h. */
#include "test_gpu_common.h"
#include "backends/gpu_devices.h"
#include "backends/gpu_pipeline.h"
#include "batch/config.h"
#include "cckey_advanced.h"
#include "support.h"
#include "testing/testing.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The device settings of this test (each runs in a process of its own):
 * the backend calls get them in their job, configs through apply(). */
static cckey_device_settings gs = CCKEY_DEVICE_SETTINGS_INIT;

/* "2048", "64K", "8M". */
static size_t sz(const char *s)
{
    char *end;
    size_t v = (size_t)strtoull(s, &end, 10);
    return *end == 'K' ? v << 10 : *end == 'M' ? v << 20 : v;
}

/* The test's settings onto cfg, through the public setters and the test
 * hook. */
static void apply(cckey_batch_config *cfg)
{
    cr_assert_eq(cckey_batch_config_set_chunk_bytes(cfg, gs.chunk_bytes), CCKEY_OK);
    cr_assert_eq(cckey_batch_config_set_long_bytes(cfg, gs.long_bytes), CCKEY_OK);
    cr_assert_eq(cckey_batch_config_set_device_share(cfg, gs.cpu_share), CCKEY_OK);
    cr_assert_eq(cckey_testing_set_faults(cfg, gs.fault_chunk, gs.fault_corrupt, gs.fault_build), CCKEY_OK);
}

/* cckey_make_keys with the test's settings. */
static cckey_status make_keys(char (*out)[CCKEY_KEY_LEN + 1], const cckey_tuple *t, size_t n,
                              cckey_batch_config *cfg)
{
    apply(cfg);
    return cckey_make_keys(out, t, n, cfg);
}

/* The kind a backend's name names; CCKEY_BACKEND_AUTO for "native", the
 * testing library's engine, which no kind names. */
static cckey_backend_kind kind_named(const char *backend)
{
    cckey_backend_kind kind = CCKEY_BACKEND_AUTO;
    if (strcmp(backend, "native") != 0) cr_assert_eq(cckey_backend_from_name(backend, &kind), CCKEY_OK, "%s", backend);
    return kind;
}

/* Batches of cfg on the backend named. */
static void set_backend(cckey_batch_config *cfg, const char *backend)
{
    if (strcmp(backend, "native") == 0)
        cr_assert_eq(cckey_testing_use_native(cfg), CCKEY_OK);
    else
        cr_assert_eq(cckey_batch_config_set_backend(cfg, kind_named(backend)), CCKEY_OK);
}

const cckey_backend_ops *gpu_need(const char *backend)
{
    const cckey_backend_ops *b =
        strcmp(backend, "native") == 0 ? cckey_testing_native() : cckey_backend_ops_for(kind_named(backend));
    if (!b) cr_skip_test("the %s backend is not compiled into this build", backend);
    char why[512] = "";
    if (cckey_backend_available(b, NULL, why, sizeof why) != CCKEY_OK)
        cr_skip_test("the %s backend is unavailable here: %s", b->name, why);
    return b;
}

const cckey_backend_ops *gpu_compiled(cckey_backend_kind kind)
{
    const cckey_backend_ops *b = cckey_backend_ops_for(kind);
    if (!b) cr_skip_test("the %s backend is not compiled into this build", cckey_backend_name(kind));
    return b;
}

void gpu_expect_unloadable(cckey_backend_kind kind, const char *library, const char *reason_part)
{
    gpu_compiled(kind);
    cr_assert_eq(cckey_set_driver_library(kind, library), CCKEY_OK);
    gpu_expect_unavailable(kind, reason_part);
}

void gpu_expect_unavailable(cckey_backend_kind kind, const char *reason_part)
{
    const cckey_backend_ops *b = cckey_backend_ops_for(kind);
    cr_assert_not_null(b);
    char why[512] = "";
    cr_assert_eq(cckey_backend_available(b, NULL, why, sizeof why), CCKEY_ERR_UNAVAILABLE);
    cr_assert(strstr(why, reason_part), "reason: %s", why);
    cr_assert(!cckey_backend_worth_it(b, NULL, 100000000, (uint64_t)1 << 40, 1));

    cckey_tuple t = {.device = {"d", 1}, .name = {"n", 1}, .source = {"s", 1}};
    char key[1][CCKEY_KEY_LEN + 1], want[CCKEY_KEY_LEN + 1];
    cckey_test_ref_key(want, t.device, t.name, t.source, NULL, 0);
    cckey_batch_config *cfg;
    cr_assert_eq(cckey_batch_config_new(&cfg), CCKEY_OK);
    cckey_batch_config_set_backend(cfg, kind);
    cr_assert_eq(make_keys(key, &t, 1, cfg), CCKEY_ERR_UNAVAILABLE);
    cr_assert(strstr(cckey_last_error(), reason_part), "%s", cckey_last_error());
    cckey_batch_config_set_backend(cfg, CCKEY_BACKEND_AUTO);
    cr_assert_eq(make_keys(key, &t, 1, cfg), CCKEY_OK);
    cr_assert_str_eq(key[0], want);
    cr_assert_str_eq(cckey_batch_config_used(cfg), "cpu");
    cckey_batch_config_free(cfg);

    size_t n = 7;
    cckey_device_info info[1];
    cr_assert_eq(cckey_backend_devices(kind, NULL, info, 1, &n, why, sizeof why), CCKEY_ERR_UNAVAILABLE);
    cr_assert_eq(n, 0);
    cr_assert(strstr(why, reason_part), "%s", why);
}

static void *keep(gpu_batch *b, size_t len)
{
    void *p = malloc(len ? len : 1);
    cr_assert(p);
    b->blocks = realloc(b->blocks, (b->nblocks + 1) * sizeof *b->blocks);
    cr_assert(b->blocks);
    b->blocks[b->nblocks++] = p;
    return p;
}

static void push(gpu_batch *b, cckey_msg m)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 64;
        b->msgs = realloc(b->msgs, b->cap * sizeof *b->msgs);
        cr_assert(b->msgs);
    }
    b->msgs[b->n++] = m;
}

void gpu_add_random(gpu_batch *b, uint64_t *rng, size_t len)
{
    /* One spare byte in front: half of the sources start at an odd address. */
    uint8_t *p = keep(b, len + 1);
    cckey_test_fill(rng, p, len + 1);
    push(b, (cckey_msg){p + (b->n & 1), len});
}

void gpu_add_same(gpu_batch *b, const cckey_msg *m) { push(b, *m); }

void gpu_batch_free(gpu_batch *b)
{
    for (size_t i = 0; i < b->nblocks; i++) free(b->blocks[i]);
    free(b->blocks);
    free(b->msgs);
    memset(b, 0, sizeof *b);
}

void gpu_assert_used(const cckey_backend_ops *b, const char *used)
{
    char both[64];
    snprintf(both, sizeof both, "%s+cpu", b->name);
    cr_assert(strcmp(used, b->name) == 0 || strcmp(used, both) == 0, "used: '%s'", used);
}

static bool digest_ok(const cckey_msg *m, const uint8_t d[CCKEY_MD5_DIGEST])
{
    char want[CCKEY_HEX_LEN + 1], got[CCKEY_HEX_LEN + 1];
    cckey_test_md5_hex(m->ptr, m->len, want);
    cckey_hex(got, d);
    got[CCKEY_HEX_LEN] = '\0';
    return strcmp(want, got) == 0;
}

typedef struct outcome {
    uint8_t (*out)[CCKEY_MD5_DIGEST];
    uint8_t *done;
    cckey_status st;
    struct cckey_digest_split split;
    char error[1024];
} outcome;

static outcome run(const cckey_backend_ops *b, const gpu_batch *batch)
{
    size_t n = batch->n ? batch->n : 1;
    outcome o = {.out = calloc(n, CCKEY_MD5_DIGEST), .done = calloc(n, 1)};
    cr_assert(o.out && o.done);
    o.split = (struct cckey_digest_split){(size_t)-1, (size_t)-1};
    cckey_digest_job job = {.msgs = batch->msgs, .n = batch->n, .out = o.out, .done = o.done, .threads = 2,
                            .split = &o.split, .settings = &gs};
    o.st = cckey_backend_digest(b, &job);
    snprintf(o.error, sizeof o.error, "%s", cckey_last_error());
    return o;
}

static void outcome_free(outcome *o) { free(o->out), free(o->done); }

void gpu_check(const cckey_backend_ops *b, const gpu_batch *batch, const char *what)
{
    outcome o = run(b, batch);
    cr_assert_eq(o.st, CCKEY_OK, "%s: %s: %s", what, cckey_strerror(o.st), o.error);
    for (size_t i = 0; i < batch->n; i++) {
        cr_assert(o.done[i], "%s: message %zu (length %zu) not marked done", what, i, batch->msgs[i].len);
        cr_assert(digest_ok(&batch->msgs[i], o.out[i]), "%s: message %zu (length %zu) has a wrong digest", what, i,
                  batch->msgs[i].len);
    }
    outcome_free(&o);
}

/* What most cases start with: the backend (or a skip), a seeded generator
 * and an empty batch. */
typedef struct gpu_case {
    const cckey_backend_ops *b;
    uint64_t rng;
    gpu_batch batch;
} gpu_case;

static gpu_case gpu_begin(const char *backend, uint64_t seed) { return (gpu_case){gpu_need(backend), seed, {0}}; }

void gpu_case_lengths_0_300(const char *backend)
{
    gpu_case gc = gpu_begin(backend, 1);
    for (size_t len = 0; len <= 300; len++) gpu_add_random(&gc.batch, &gc.rng, len);
    gpu_check(gc.b, &gc.batch, "lengths 0..300");
    gpu_batch_free(&gc.batch);
}

void gpu_case_block_boundaries(const char *backend)
{
    gpu_case gc = gpu_begin(backend, 2);
    for (size_t blocks = 1; blocks <= 70; blocks += blocks < 4 ? 1 : 11)
        for (int d = -9; d <= 9; d++) gpu_add_random(&gc.batch, &gc.rng, (size_t)((long)(64 * blocks) + d));
    gpu_check(gc.b, &gc.batch, "block boundaries");
    gpu_batch_free(&gc.batch);
}

void gpu_case_empty_messages(const char *backend)
{
    const cckey_backend_ops *b = gpu_need(backend);
    gpu_batch batch = {0};
    static const uint8_t byte = 0;
    for (int i = 0; i < 500; i++) push(&batch, (cckey_msg){i % 2 ? &byte : NULL, 0});
    gpu_check(b, &batch, "only empty messages");
    uint64_t rng = 3;
    for (int i = 0; i < 100; i++) {
        gpu_add_random(&batch, &rng, cckey_test_below(&rng, 100));
        push(&batch, (cckey_msg){NULL, 0});
    }
    gpu_check(b, &batch, "empty messages among others");
    gpu_batch_free(&batch);
}

void gpu_case_empty_job(const char *backend)
{
    const cckey_backend_ops *b = gpu_need(backend);
    cckey_digest_job job = {.msgs = NULL, .n = 0, .out = NULL, .done = NULL};
    cr_assert_eq(cckey_backend_digest(b, &job), CCKEY_OK, "%s", cckey_last_error());
    char key[1][CCKEY_KEY_LEN + 1];
    cckey_batch_config *cfg;
    cr_assert_eq(cckey_batch_config_new(&cfg), CCKEY_OK);
    set_backend(cfg, backend);
    cr_assert_eq(make_keys(key, NULL, 0, cfg), CCKEY_OK);
    cckey_batch_config_free(cfg);
}

void gpu_case_duplicates(const char *backend)
{
    gpu_case gc = gpu_begin(backend, 4);
    gpu_add_random(&gc.batch, &gc.rng, 77);
    for (int i = 0; i < 4000; i++) gpu_add_same(&gc.batch, &gc.batch.msgs[0]);
    gpu_check(gc.b, &gc.batch, "4001 times the same pointer");
    gpu_batch_free(&gc.batch);

    /* Equal content at distinct addresses. */
    uint8_t *text = malloc(4001 * 130);
    cr_assert(text);
    for (int i = 0; i < 4001; i++) memset(text + 130 * i, 'k', 129);
    for (int i = 0; i < 4001; i++) push(&gc.batch, (cckey_msg){text + 130 * i + (i & 1), 128});
    gpu_check(gc.b, &gc.batch, "4001 equal copies");
    free(gc.batch.msgs);
    free(text);
}

void gpu_case_many_chunks(const char *backend)
{
    gpu_case gc = gpu_begin(backend, 5);
    for (int i = 0; i < 3000; i++) gpu_add_random(&gc.batch, &gc.rng, cckey_test_below(&gc.rng, 700));
    /* A chunk holds a few messages: hundreds of chunks, every slot reused. */
    gs.chunk_bytes = sz("2048");
    gpu_check(gc.b, &gc.batch, "2 KiB chunks");
    /* Smaller than some messages: a chunk still takes at least one. */
    gs.chunk_bytes = sz("64");
    gpu_check(gc.b, &gc.batch, "64-byte chunks");
    gs.chunk_bytes = CCKEY_GPU_DEFAULT_CHUNK_BYTES;
    gpu_check(gc.b, &gc.batch, "default chunks");
    gpu_batch_free(&gc.batch);
}

void gpu_case_long_threshold_routing(const char *backend)
{
    const cckey_backend_ops *b = gpu_need(backend);
    const size_t t = CCKEY_GPU_DEFAULT_LONG_BYTES;
    const size_t lens[] = {0, 5, t - 1, t, t + 1, 100, 2 * t + 3, 64};
    const size_t n = sizeof lens / sizeof *lens;
    uint64_t rng = 6;
    gpu_batch batch = {0};
    for (size_t i = 0; i < n; i++) gpu_add_random(&batch, &rng, lens[i]);
    gpu_check(b, &batch, "around the long-message threshold");

    /* With the device failing at once and the host kept to its own part,
     * only the host's share is done: exactly the messages longer than the
     * threshold. */
    gs.cpu_share = false;
    gs.fault_chunk = atol("0");
    outcome o = run(b, &batch);
    gs.fault_chunk = -1;
    cr_assert_eq(o.st, CCKEY_ERR_DEVICE, "%s", o.error);
    cr_assert(strstr(o.error, "CCKEY_FAULT_CHUNK"), "%s", o.error);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(o.done[i] != 0, lens[i] > t, "length %zu: done=%d", lens[i], o.done[i]);
        if (o.done[i]) cr_assert(digest_ok(&batch.msgs[i], o.out[i]), "length %zu", lens[i]);
    }
    cr_assert_eq(o.split.host, 2);
    cr_assert_eq(o.split.device, 0);
    outcome_free(&o);

    /* The threshold moves with CCKEY_GPU_LONG_BYTES. */
    gs.long_bytes = sz("64");
    gs.fault_chunk = atol("0");
    o = run(b, &batch);
    cr_assert_eq(o.st, CCKEY_ERR_DEVICE, "%s", o.error);
    for (size_t i = 0; i < n; i++) cr_assert_eq(o.done[i] != 0, lens[i] > 64, "length %zu", lens[i]);
    outcome_free(&o);

    /* Sharing, the host may have taken more before the device failed, but
     * never less than the long messages, and only right digests. */
    gs.cpu_share = true;
    o = run(b, &batch);
    cr_assert(o.st == CCKEY_ERR_DEVICE || o.st == CCKEY_OK, "%s", o.error);
    for (size_t i = 0; i < n; i++) {
        if (lens[i] > 64) cr_assert(o.done[i], "length %zu", lens[i]);
        if (o.done[i]) cr_assert(digest_ok(&batch.msgs[i], o.out[i]), "length %zu", lens[i]);
    }
    outcome_free(&o);
    gs.fault_chunk = -1;
    gpu_check(b, &batch, "threshold 64");
    gs.long_bytes = CCKEY_GPU_DEFAULT_LONG_BYTES;
    gpu_batch_free(&batch);
}

void gpu_case_long_messages(const char *backend)
{
    gpu_case gc = gpu_begin(backend, 7);
    gpu_add_random(&gc.batch, &gc.rng, (size_t)3 << 20);
    for (int i = 0; i < 200; i++) gpu_add_random(&gc.batch, &gc.rng, cckey_test_below(&gc.rng, 4000));
    gpu_add_random(&gc.batch, &gc.rng, ((size_t)1 << 20) + 17);
    gpu_check(gc.b, &gc.batch, "long messages among short ones");
    /* And all of them on the device, one long work-item each. */
    gs.long_bytes = sz("8M");
    gpu_check(gc.b, &gc.batch, "long messages on the device");
    gs.long_bytes = CCKEY_GPU_DEFAULT_LONG_BYTES;
    gpu_batch_free(&gc.batch);
}

void gpu_case_fault_chunk_backend(const char *backend)
{
    gpu_case gc = gpu_begin(backend, 8);
    for (int i = 0; i < 600; i++) gpu_add_random(&gc.batch, &gc.rng, cckey_test_below(&gc.rng, 300));
    gs.chunk_bytes = sz("1024");
    /* The device alone, so that it surely reaches chunk 6. */
    gs.cpu_share = false;
    gs.fault_chunk = atol("6");
    outcome o = run(gc.b, &gc.batch);
    cr_assert_eq(o.st, CCKEY_ERR_DEVICE, "%s", o.error);
    cr_assert(strstr(o.error, "chunk 6"), "%s", o.error);
    size_t done = 0;
    for (size_t i = 0; i < gc.batch.n; i++) {
        if (!o.done[i]) continue;
        done++;
        cr_assert(digest_ok(&gc.batch.msgs[i], o.out[i]), "message %zu marked done with a wrong digest", i);
    }
    /* Chunks before the fault came back; the rest did not. */
    cr_assert_gt(done, 0);
    cr_assert_lt(done, gc.batch.n);
    cr_assert_eq(o.split.device, done);
    cr_assert_eq(o.split.host, 0);
    /* What the planner does next: the CPU finishes what is not done. */
    cckey_digest_job job = {.msgs = gc.batch.msgs, .n = gc.batch.n, .out = o.out, .done = o.done, .threads = 2};
    cr_assert_eq(cckey_cpu_digest(&job), CCKEY_OK);
    for (size_t i = 0; i < gc.batch.n; i++) cr_assert(digest_ok(&gc.batch.msgs[i], o.out[i]), "message %zu", i);
    outcome_free(&o);

    /* The device is usable again on the next gc.batch. */
    gs.fault_chunk = -1;
    gpu_check(gc.b, &gc.batch, "after a fault");
    gs.cpu_share = true;
    gpu_check(gc.b, &gc.batch, "after a fault, sharing");
    gs.chunk_bytes = CCKEY_GPU_DEFAULT_CHUNK_BYTES;
    gpu_batch_free(&gc.batch);
}

/* Random tuples with options; keys checked against the OpenSSL reference. */
typedef struct tuples {
    cckey_tuple *t;
    size_t n;
    cckey_test_arena arena;
} tuples;

static tuples make_tuples(uint64_t *rng, size_t n)
{
    tuples ts = {.t = calloc(n, sizeof(cckey_tuple)), .n = n};
    cr_assert(ts.t);
    for (size_t i = 0; i < n; i++) {
        cckey_tuple *t = &ts.t[i];
        t->device = cckey_test_random_bytes(&ts.arena, rng, cckey_test_below(rng, 3) * 7);   /* few devices */
        t->name = cckey_test_random_bytes(&ts.arena, rng, 1 + cckey_test_below(rng, 40));
        t->source = cckey_test_random_bytes(&ts.arena, rng, cckey_test_below(rng, 2500));
        t->n_options = cckey_test_below(rng, 4);
        cckey_option *o = cckey_test_alloc(&ts.arena, (t->n_options + 1) * sizeof *o);
        for (size_t k = 0; k < t->n_options; k++) {
            o[k].key = cckey_test_random_bytes(&ts.arena, rng, 1 + cckey_test_below(rng, 3));
            o[k].value = cckey_test_random_bytes(&ts.arena, rng, cckey_test_below(rng, 20));
        }
        t->options = o;
    }
    return ts;
}

static void check_keys(const tuples *ts, char (*keys)[CCKEY_KEY_LEN + 1], const char *what)
{
    for (size_t i = 0; i < ts->n; i++) {
        char want[CCKEY_KEY_LEN + 1];
        const cckey_tuple *t = &ts->t[i];
        cckey_test_ref_key(want, t->device, t->name, t->source, t->options, t->n_options);
        cr_assert_str_eq(keys[i], want, "%s: tuple %zu", what, i);
    }
}

static void tuples_free(tuples *ts)
{
    free(ts->t);
    cckey_test_arena_free(&ts->arena);
}

static cckey_batch_config *config_for(const char *backend, cckey_verify_mode verify)
{
    cckey_batch_config *cfg;
    cr_assert_eq(cckey_batch_config_new(&cfg), CCKEY_OK);
    set_backend(cfg, backend);
    cr_assert_eq(cckey_batch_config_set_verify(cfg, verify), CCKEY_OK);
    cr_assert_eq(cckey_batch_config_set_threads(cfg, 2), CCKEY_OK);
    return cfg;
}

void gpu_case_fault_chunk_planner(const char *backend)
{
    const cckey_backend_ops *b = gpu_need(backend);
    uint64_t rng = 9;
    tuples ts = make_tuples(&rng, 400);
    char (*keys)[CCKEY_KEY_LEN + 1] = calloc(ts.n, sizeof *keys);
    cckey_batch_config *cfg = config_for(backend, CCKEY_VERIFY_NONE);
    gs.chunk_bytes = sz("4096");
    gs.cpu_share = false;
    gs.fault_chunk = atol("2");
    cr_assert_eq(make_keys(keys, ts.t, ts.n, cfg), CCKEY_OK, "%s", cckey_last_error());
    check_keys(&ts, keys, "device failed at chunk 2");
    const char *w = cckey_batch_config_warning(cfg);
    cr_assert(strstr(w, "CCKEY_FAULT_CHUNK") && strstr(w, "CPU"), "warning: '%s'", w);
    char used[32];
    snprintf(used, sizeof used, "%s+cpu", b->name);
    cr_assert_str_eq(cckey_batch_config_used(cfg), used);

    /* The same through cckey_make_keys_ex: the call's own result says it,
     * and the config, given as const, keeps every byte (its settings and the
     * pointer to what batches leave behind). */
    cckey_batch_config before = *cfg;
    cckey_batch_result res;
    memset(&res, 0x5a, sizeof res);
    memset(keys, 0, ts.n * sizeof *keys);
    cr_assert_eq(cckey_make_keys_ex(keys, ts.t, ts.n, cfg, &res), CCKEY_OK, "%s", cckey_last_error());
    check_keys(&ts, keys, "device failed at chunk 2, _ex");
    cr_assert(strstr(res.warning, "CCKEY_FAULT_CHUNK") && strstr(res.warning, "CPU"), "warning: '%s'", res.warning);
    cr_assert_str_eq(res.used, used);
    cr_assert_str_eq(res.warning, cckey_batch_config_warning(cfg));
    for (size_t i = 0; i < sizeof res.reserved / sizeof *res.reserved; i++) cr_assert_eq(res.reserved[i], 0);
    cr_assert(memcmp(&before, cfg, sizeof before) == 0, "the const config changed");

    /* No fault: no warning, and the device alone did the work. */
    gs.fault_chunk = -1;
    memset(keys, 0, ts.n * sizeof *keys);
    cr_assert_eq(make_keys(keys, ts.t, ts.n, cfg), CCKEY_OK, "%s", cckey_last_error());
    check_keys(&ts, keys, "no fault");
    cr_assert_str_eq(cckey_batch_config_warning(cfg), "");
    cr_assert_str_eq(cckey_batch_config_used(cfg), b->name);

    /* Sharing: wherever the fault hits (if the device gets that far before
     * the host has hashed the rest), the keys are right. */
    gs.cpu_share = true;
    for (const char *k = "0"; k; k = *k == '0' ? "1" : *k == '1' ? "3" : NULL) {
        gs.fault_chunk = atol(k);
        memset(keys, 0, ts.n * sizeof *keys);
        cr_assert_eq(make_keys(keys, ts.t, ts.n, cfg), CCKEY_OK, "%s", cckey_last_error());
        check_keys(&ts, keys, "sharing, device failed");
        gpu_assert_used(b, cckey_batch_config_used(cfg));
    }
    gs.fault_chunk = -1;
    gs.chunk_bytes = CCKEY_GPU_DEFAULT_CHUNK_BYTES;
    cckey_batch_config_free(cfg);
    free(keys);
    tuples_free(&ts);
}

void gpu_case_fault_build(const char *backend)
{
    gpu_case gc = gpu_begin(backend, 10);
    for (int i = 0; i < 50; i++) gpu_add_random(&gc.batch, &gc.rng, cckey_test_below(&gc.rng, 200));
    gs.fault_build = true;
    gs.cpu_share = false;
    outcome o = run(gc.b, &gc.batch);
    cr_assert_eq(o.st, CCKEY_ERR_DEVICE, "%s", o.error);
    cr_assert(strstr(o.error, "CCKEY_FAULT_BUILD"), "the driver's message should surface: %s", o.error);
    for (size_t i = 0; i < gc.batch.n; i++) cr_assert_eq(o.done[i], 0);
    outcome_free(&o);
    gs.cpu_share = true;

    tuples ts = make_tuples(&gc.rng, 100);
    char (*keys)[CCKEY_KEY_LEN + 1] = calloc(ts.n, sizeof *keys);
    cckey_batch_config *cfg = config_for(backend, CCKEY_VERIFY_NONE);
    cr_assert_eq(make_keys(keys, ts.t, ts.n, cfg), CCKEY_OK, "%s", cckey_last_error());
    check_keys(&ts, keys, "build failure");
    cr_assert(strstr(cckey_batch_config_warning(cfg), "CCKEY_FAULT_BUILD"), "warning: '%s'",
              cckey_batch_config_warning(cfg));

    /* A later batch builds again and runs on the device. */
    gs.fault_build = false;
    gpu_check(gc.b, &gc.batch, "after a failed build");
    cckey_batch_config_free(cfg);
    free(keys);
    tuples_free(&ts);
    gpu_batch_free(&gc.batch);
}

void gpu_case_make_keys(const char *backend)
{
    const cckey_backend_ops *b = gpu_need(backend);
    uint64_t rng = 11;
    tuples ts = make_tuples(&rng, 700);
    char (*keys)[CCKEY_KEY_LEN + 1] = calloc(ts.n, sizeof *keys);
    static const cckey_verify_mode modes[] = {CCKEY_VERIFY_NONE, CCKEY_VERIFY_ALL, CCKEY_VERIFY_SAMPLE};
    for (size_t m = 0; m < 3; m++) {
        cckey_batch_config *cfg = config_for(backend, modes[m]);
        memset(keys, 0, ts.n * sizeof *keys);
        cr_assert_eq(make_keys(keys, ts.t, ts.n, cfg), CCKEY_OK, "%s", cckey_last_error());
        check_keys(&ts, keys, "make_keys");
        gpu_assert_used(b, cckey_batch_config_used(cfg));
        cr_assert_str_eq(cckey_batch_config_warning(cfg), "");
        cckey_batch_config_free(cfg);
    }
    free(keys);
    tuples_free(&ts);
}

typedef struct worker_arg {
    const char *backend;
    uint64_t seed;
    int ok;
} worker_arg;

static void *worker(void *p)
{
    worker_arg *w = p;
    uint64_t rng = w->seed;
    tuples ts = make_tuples(&rng, 300);
    char (*keys)[CCKEY_KEY_LEN + 1] = calloc(ts.n, sizeof *keys);
    cckey_batch_config *cfg;
    cckey_batch_config_new(&cfg);
    set_backend(cfg, w->backend);
    w->ok = keys && make_keys(keys, ts.t, ts.n, cfg) == CCKEY_OK &&
            strcmp(cckey_batch_config_warning(cfg), "") == 0;
    for (size_t i = 0; w->ok && i < ts.n; i++) {
        char want[CCKEY_KEY_LEN + 1];
        const cckey_tuple *t = &ts.t[i];
        cckey_test_ref_key(want, t->device, t->name, t->source, t->options, t->n_options);
        w->ok = strcmp(want, keys[i]) == 0;
    }
    cckey_batch_config_free(cfg);
    free(keys);
    tuples_free(&ts);
    return NULL;
}

void gpu_case_concurrent_batches(const char *backend)
{
    gpu_need(backend);
    gs.chunk_bytes = sz("8192");
    enum { N = 3 };
    pthread_t th[N];
    worker_arg args[N];
    for (int i = 0; i < N; i++) {
        args[i] = (worker_arg){.backend = backend, .seed = 100 + (uint64_t)i};
        cr_assert_eq(pthread_create(&th[i], NULL, worker, &args[i]), 0);
    }
    for (int i = 0; i < N; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < N; i++) cr_assert(args[i].ok, "batch %d", i);
    gs.chunk_bytes = CCKEY_GPU_DEFAULT_CHUNK_BYTES;
}

void gpu_case_bad_settings(const char *backend)
{
    gpu_case gc = gpu_begin(backend, 12);
    gpu_add_random(&gc.batch, &gc.rng, 10);
    cckey_batch_config *cfg;
    cr_assert_eq(cckey_batch_config_new(&cfg), CCKEY_OK);
    static const size_t bad_chunk[] = {1, 63, ((size_t)1 << 30) + 1, (size_t)4 << 30, SIZE_MAX};
    for (size_t i = 0; i < sizeof bad_chunk / sizeof *bad_chunk; i++)
        cr_assert_eq(cckey_batch_config_set_chunk_bytes(cfg, bad_chunk[i]), CCKEY_ERR_INVALID_ARG, "%zu",
                     bad_chunk[i]);
    cr_assert_eq(cckey_batch_config_set_long_bytes(cfg, ((size_t)1 << 28) + 1), CCKEY_ERR_INVALID_ARG);
    char big[200];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    cr_assert_eq(cckey_batch_config_set_device(cfg, kind_named(backend), big), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_batch_config_set_device(cfg, CCKEY_BACKEND_CPU, "0"), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_testing_set_faults(cfg, -5, false, false), CCKEY_ERR_INVALID_ARG);
    /* The limits themselves are fine. */
    cr_assert_eq(cckey_batch_config_set_chunk_bytes(cfg, 64), CCKEY_OK);
    cr_assert_eq(cckey_batch_config_set_chunk_bytes(cfg, (size_t)1 << 30), CCKEY_OK);
    cr_assert_eq(cckey_batch_config_set_long_bytes(cfg, 0), CCKEY_OK);
    cckey_batch_config_free(cfg);
    /* Settings that bypass the setters (internal callers) are refused too. */
    gs.chunk_bytes = 3;
    outcome o = run(gc.b, &gc.batch);
    cr_assert_eq(o.st, CCKEY_ERR_INVALID_ARG, "%s", o.error);
    outcome_free(&o);
    gs.chunk_bytes = (size_t)1 << 20;
    gpu_check(gc.b, &gc.batch, "1 MiB chunks");
    gpu_batch_free(&gc.batch);
}

/* ---- the host's share ---------------------------------------------------- */

/* Mixed lengths: empty, short, around block edges, a few KiB, some past
 * the long threshold, and repeated pointers. */
static size_t mixed_batch(gpu_batch *batch, uint64_t *rng, size_t n)
{
    size_t n_long = 0;
    for (size_t i = 0; i < n; i++) {
        size_t pick = cckey_test_below(rng, 100), len;
        if (pick < 50) len = cckey_test_below(rng, 120);
        else if (pick < 80) len = 64 * (1 + cckey_test_below(rng, 8)) + cckey_test_below(rng, 19) - 9;
        else if (pick < 97) len = cckey_test_below(rng, 6000);
        else if (pick < 98) len = CCKEY_GPU_DEFAULT_LONG_BYTES + 1 + cckey_test_below(rng, 5000), n_long++;
        else {
            gpu_add_same(batch, &batch->msgs[cckey_test_below(rng, batch->n ? batch->n : 1)]);
            if (batch->msgs[batch->n - 1].len > CCKEY_GPU_DEFAULT_LONG_BYTES) n_long++;
            continue;
        }
        if (batch->n == 0) len = 0;
        gpu_add_random(batch, rng, len);
    }
    return n_long;
}

void gpu_case_share_identical(const char *backend)
{
    gpu_case gc = gpu_begin(backend, 13);
    size_t n_long = mixed_batch(&gc.batch, &gc.rng, 6000);
    static const char *const chunks[] = {"4096", "64K", NULL};
    for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++) {
        if (chunks[c]) gs.chunk_bytes = sz(chunks[c]);
        else gs.chunk_bytes = CCKEY_GPU_DEFAULT_CHUNK_BYTES;
        gs.cpu_share = false;
        outcome off = run(gc.b, &gc.batch);
        gs.cpu_share = true;
        outcome on = run(gc.b, &gc.batch);
        gs.cpu_share = true;
        cr_assert_eq(off.st, CCKEY_OK, "%s", off.error);
        cr_assert_eq(on.st, CCKEY_OK, "%s", on.error);
        cr_assert(memcmp(off.out, on.out, gc.batch.n * CCKEY_MD5_DIGEST) == 0, "chunks %s: sharing changed digests",
                  chunks[c] ? chunks[c] : "default");
        for (size_t i = 0; i < gc.batch.n; i++) {
            cr_assert(on.done[i] && off.done[i], "message %zu not done", i);
            cr_assert(digest_ok(&gc.batch.msgs[i], on.out[i]), "message %zu (length %zu)", i, gc.batch.msgs[i].len);
        }
        /* Without sharing the host does the long messages and nothing else. */
        cr_assert_eq(off.split.host, n_long);
        cr_assert_eq(off.split.device, gc.batch.n - n_long);
        cr_assert_eq(on.split.host + on.split.device, gc.batch.n);
        cr_assert_geq(on.split.host, n_long);
        outcome_free(&off);
        outcome_free(&on);
    }
    gs.chunk_bytes = CCKEY_GPU_DEFAULT_CHUNK_BYTES;
    gpu_batch_free(&gc.batch);
}

void gpu_case_share_both_sides(const char *backend)
{
    gpu_case gc = gpu_begin(backend, 14);
    for (int i = 0; i < 20000; i++) gpu_add_random(&gc.batch, &gc.rng, cckey_test_below(&gc.rng, 400));
    /* Build the kernel first, so that the device is ready when the host
     * threads start. */
    gpu_check(gc.b, &gc.batch, "warm-up");
    /* Small chunks: the device needs hundreds of them, the host hashes
     * meanwhile. Who wins each claim depends on the scheduler, so a few
     * tries; a pipeline that never shares fails all of them. */
    gs.chunk_bytes = sz("8192");
    size_t best_host = 0, best_dev = 0;
    for (int t = 0; t < 20 && !(best_host && best_dev); t++) {
        outcome o = run(gc.b, &gc.batch);
        cr_assert_eq(o.st, CCKEY_OK, "%s", o.error);
        for (size_t i = 0; i < gc.batch.n; i++)
            cr_assert(o.done[i] && digest_ok(&gc.batch.msgs[i], o.out[i]), "message %zu", i);
        cr_assert_eq(o.split.host + o.split.device, gc.batch.n);
        if (o.split.host && o.split.device) best_host = o.split.host, best_dev = o.split.device;
        outcome_free(&o);
    }
    cr_assert(best_host && best_dev, "in 20 runs, never did both the host and the device get work");
    /* No long messages and no sharing: the device does every one. */
    gs.cpu_share = false;
    outcome o = run(gc.b, &gc.batch);
    cr_assert_eq(o.st, CCKEY_OK, "%s", o.error);
    cr_assert_eq(o.split.device, gc.batch.n);
    cr_assert_eq(o.split.host, 0);
    outcome_free(&o);
    gs.cpu_share = true;
    gs.chunk_bytes = CCKEY_GPU_DEFAULT_CHUNK_BYTES;
    gpu_batch_free(&gc.batch);
}

void gpu_case_share_fault(const char *backend)
{
    gpu_case gc = gpu_begin(backend, 15);
    size_t n_long = mixed_batch(&gc.batch, &gc.rng, 3000);
    gs.chunk_bytes = sz("2048");
    static const char *const at[] = {"0", "1", "5", "40"};
    for (size_t k = 0; k < sizeof at / sizeof *at; k++) {
        gs.fault_chunk = atol(at[k]);
        outcome o = run(gc.b, &gc.batch);
        /* OK only when the host hashed the rest before the device got to
         * chunk K. */
        cr_assert(o.st == CCKEY_ERR_DEVICE || (o.st == CCKEY_OK && o.split.host > n_long), "chunk %s: %s", at[k],
                  o.error);
        size_t done = 0;
        for (size_t i = 0; i < gc.batch.n; i++) {
            if (gc.batch.msgs[i].len > CCKEY_GPU_DEFAULT_LONG_BYTES) cr_assert(o.done[i], "long message %zu", i);
            if (!o.done[i]) continue;
            done++;
            cr_assert(digest_ok(&gc.batch.msgs[i], o.out[i]), "chunk %s: message %zu marked done, wrong digest", at[k],
                      i);
        }
        cr_assert_eq(done, o.split.host + o.split.device, "chunk %s", at[k]);
        if (o.st == CCKEY_OK) cr_assert_eq(done, gc.batch.n);
        /* The planner's fallback: the CPU finishes what is not done. */
        cckey_digest_job job = {.msgs = gc.batch.msgs, .n = gc.batch.n, .out = o.out, .done = o.done, .threads = 2};
        cr_assert_eq(cckey_cpu_digest(&job), CCKEY_OK);
        for (size_t i = 0; i < gc.batch.n; i++) cr_assert(digest_ok(&gc.batch.msgs[i], o.out[i]), "message %zu", i);
        outcome_free(&o);
    }
    gs.fault_chunk = -1;
    gs.chunk_bytes = CCKEY_GPU_DEFAULT_CHUNK_BYTES;
    gpu_batch_free(&gc.batch);
}
