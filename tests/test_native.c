/* The device pipeline on the native test engine (kernels/md5.kern as host
 * C, host threads as work-items): the shared device edge cases, on every
 * machine, under ASan and UBSan in the sanitizer build; and a driver error
 * injected at each engine call site, with the CPU fallback finishing every
 * key. The oracle is OpenSSL's MD5 (support.h). */
#include "backends/gpu_pipeline.h"
#include "cckey_advanced.h"
#include "support.h"
#include "test_gpu_common.h"
#include "testing/testing.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

GPU_COMMON_TESTS(native, "native")

static const char *const call_names[] = {"open", "alloc", "launch", "wait"};

/* n random tuples and room for their keys, all in one arena. */
typedef struct native_batch {
    cckey_test_arena a;
    cckey_tuple *t;
    char (*keys)[CCKEY_KEY_LEN + 1];
    size_t n;
} native_batch;

/* n random tuples from seed, sources of up to max_src bytes; keys zeroed. */
static native_batch random_batch(uint64_t seed, size_t n, size_t max_src)
{
    native_batch nb = {.n = n};
    uint64_t rng = seed;
    nb.t = cckey_test_alloc(&nb.a, n * sizeof *nb.t);
    for (size_t i = 0; i < n; i++) {
        cckey_test_tuple r = cckey_test_random_tuple(&nb.a, &rng, 60);
        cckey_bytes src = cckey_test_random_bytes(&nb.a, &rng, cckey_test_below(&rng, max_src));
        nb.t[i] = (cckey_tuple){r.device, r.name, src, r.opts, r.n};
    }
    nb.keys = cckey_test_alloc(&nb.a, n * sizeof *nb.keys);
    memset(nb.keys, 0, n * sizeof *nb.keys);
    return nb;
}

/* Every key of the batch against the OpenSSL recipe. */
static void check_keys(const cckey_tuple *t, size_t n, char (*keys)[CCKEY_KEY_LEN + 1], const char *what)
{
    for (size_t i = 0; i < n; i++) {
        char want[CCKEY_KEY_LEN + 1];
        cckey_test_ref_key(want, t[i].device, t[i].name, t[i].source, t[i].options, t[i].n_options);
        cr_assert_str_eq(keys[i], want, "%s: tuple %zu", what, i);
    }
}

/* A config on the native engine with no host share, so the device
 * reaches every message. */
static cckey_batch_config *device_only(void)
{
    cckey_batch_config *cfg;
    cr_assert_eq(cckey_batch_config_new(&cfg), CCKEY_OK);
    cr_assert_eq(cckey_testing_use_native(cfg), CCKEY_OK);
    cr_assert_eq(cckey_batch_config_set_device_share(cfg, 0), CCKEY_OK);
    return cfg;
}

/* A driver error at each call site, at the first and a later call: the
 * batch still gives every right key, says the device failed, and the next
 * batch runs on the device again. */
Test(native, driver_error_at_each_call_site)
{
    native_batch nb = random_batch(77, 900, 3000);
    cckey_batch_config *cfg = device_only();
    cr_assert_eq(cckey_batch_config_set_chunk_bytes(cfg, 4096), CCKEY_OK);   /* many launches and waits */
    for (int call = CCKEY_NATIVE_OPEN; call < CCKEY_NATIVE_CALLS; call++) {
        for (unsigned nth = 1; nth <= (call == CCKEY_NATIVE_OPEN || call == CCKEY_NATIVE_ALLOC ? 1u : 5u); nth += 4) {
            /* The pipeline keeps an engine's staging between batches: only
             * a batch that needs bigger chunks allocates. */
            if (call == CCKEY_NATIVE_ALLOC) cr_assert_eq(cckey_batch_config_set_chunk_bytes(cfg, 8192), CCKEY_OK);
            cckey_native_fail((cckey_native_call)call, nth);
            memset(nb.keys, 0, nb.n * sizeof *nb.keys);
            cr_assert_eq(cckey_make_keys(nb.keys, nb.t, nb.n, cfg), CCKEY_OK, "%s #%u: %s", call_names[call], nth,
                         cckey_last_error());
            const char *w = cckey_batch_config_warning(cfg);
            cr_assert(strstr(w, "injected driver error") && strstr(w, call_names[call]), "%s #%u: warning '%s'",
                      call_names[call], nth, w);
            cr_assert_str_eq(cckey_batch_config_used(cfg), "native+cpu");
            check_keys(nb.t, nb.n, nb.keys, call_names[call]);
            /* The device comes back. */
            cr_assert_eq(cckey_make_keys(nb.keys, nb.t, nb.n, cfg), CCKEY_OK, "%s", cckey_last_error());
            cr_assert_str_eq(cckey_batch_config_warning(cfg), "");
            cr_assert_str_eq(cckey_batch_config_used(cfg), "native");
        }
    }
    cckey_batch_config_free(cfg);
    cckey_test_arena_free(&nb.a);
}

/* A chunk size that is no multiple of the alignment (the setter takes any
 * size in range) still leaves the message table aligned: the batch stays
 * on the device, with no fallback. */
Test(native, odd_chunk_sizes_keep_the_message_table_aligned)
{
    native_batch nb = random_batch(78, 400, 2000);
    cckey_batch_config *cfg = device_only();
    static const size_t sizes[] = {4099, 5001, 8190};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        cr_assert_eq(cckey_batch_config_set_chunk_bytes(cfg, sizes[k]), CCKEY_OK);
        cr_assert_eq(cckey_make_keys(nb.keys, nb.t, nb.n, cfg), CCKEY_OK, "%s", cckey_last_error());
        cr_assert_str_eq(cckey_batch_config_warning(cfg), "", "chunk %zu", sizes[k]);
        cr_assert_str_eq(cckey_batch_config_used(cfg), "native");
        check_keys(nb.t, nb.n, nb.keys, "odd chunk size");
    }
    cckey_batch_config_free(cfg);
    cckey_test_arena_free(&nb.a);
}

/* Auto never picks the test engine, whatever the batch. */
Test(native, auto_never_picks_it)
{
    const cckey_backend_ops *b = cckey_testing_native();
    cr_assert_not_null(b);
    cr_assert(!cckey_backend_worth_it(b, NULL, 1u << 24, (uint64_t)64 << 30, 1));
}

/* The release backends' names stay the public ones: no kind names the
 * test engine, and naming a kind after it puts the kind's backend back. */
Test(native, name_and_kind)
{
    const cckey_backend_ops *b = cckey_testing_native();
    cr_assert_str_eq(b->name, "native");
    cr_assert_eq(b->kind, CCKEY_BACKEND_AUTO);
    for (int k = CCKEY_BACKEND_AUTO; k <= CCKEY_BACKEND_CUDA; k++)
        cr_assert_neq(cckey_backend_ops_for((cckey_backend_kind)k), b);
    cr_assert_eq(cckey_backend_available(b, NULL, NULL, 0), CCKEY_OK);

    cckey_batch_config *cfg;
    cr_assert_eq(cckey_batch_config_new(&cfg), CCKEY_OK);
    cr_assert_eq(cckey_testing_use_native(cfg), CCKEY_OK);
    cr_assert_eq(cckey_batch_config_set_backend(cfg, CCKEY_BACKEND_CPU), CCKEY_OK);
    cckey_tuple t = {.device = {"d", 1}, .name = {"n", 1}, .source = {"s", 1}};
    char key[1][CCKEY_KEY_LEN + 1], want[CCKEY_KEY_LEN + 1];
    cr_assert_eq(cckey_make_keys(key, &t, 1, cfg), CCKEY_OK);
    cr_assert_str_eq(cckey_batch_config_used(cfg), "cpu");
    cckey_test_ref_key(want, t.device, t.name, t.source, NULL, 0);
    cr_assert_str_eq(key[0], want);
    cckey_batch_config_free(cfg);
}
