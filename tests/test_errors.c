/* Every error the public header promises: the status, out left untouched,
 * and a detail in cckey_last_error(). */
#include "cckey.h"
#include "core/internal.h"   /* cckey_clear_error: so each check sees fresh detail */

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cckey_bytes OK = {"ok", 2};
static const cckey_bytes BAD = {NULL, 1};

/* A failure must say something; the detail is the only lead a user gets. */
#define ASSERT_FAILS(expr, status)                                                             \
    do {                                                                                         \
        cckey_clear_error();                                                                     \
        cckey_status st_ = (expr);                                                               \
        cr_assert_eq(st_, (status), "%s gave %d (%s)", #expr, (int)st_, cckey_strerror(st_));    \
        cr_assert(cckey_last_error()[0] != '\0', "%s left no detail", #expr);                    \
    } while (0)

static void fill(char *k) { memset(k, '#', CCKEY_KEY_LEN + 1); }
static int untouched(const char *k)
{
    for (int i = 0; i <= CCKEY_KEY_LEN; i++)
        if (k[i] != '#') return 0;
    return 1;
}

Test(errors, make_key_null_out)
{
    ASSERT_FAILS(cckey_make_key(NULL, OK, OK, OK, NULL, 0), CCKEY_ERR_INVALID_ARG);
}

Test(errors, make_key_null_with_length_in_each_field)
{
    char k[CCKEY_KEY_LEN + 1];
    fill(k);
    ASSERT_FAILS(cckey_make_key(k, BAD, OK, OK, NULL, 0), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_make_key(k, OK, BAD, OK, NULL, 0), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_make_key(k, OK, OK, BAD, NULL, 0), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_make_key(k, OK, OK, OK, NULL, 1), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_make_key(k, OK, OK, OK, NULL, (size_t)-1), CCKEY_ERR_INVALID_ARG);
    cr_assert(untouched(k), "out was written on failure");
}

Test(errors, make_key_bad_option_anywhere)
{
    /* A bad key or value at each position of a list long enough for the
     * merge sort path. */
    enum { N = 20 };
    cckey_option o[N];
    for (int bad = 0; bad < N; bad++)
        for (int which = 0; which < 2; which++) {
            for (int i = 0; i < N; i++) o[i] = (cckey_option){OK, OK};
            if (which) o[bad].value = BAD;
            else o[bad].key = BAD;
            char k[CCKEY_KEY_LEN + 1];
            fill(k);
            ASSERT_FAILS(cckey_make_key(k, OK, OK, OK, o, N), CCKEY_ERR_INVALID_ARG);
            ASSERT_FAILS(cckey_make_key(k, OK, OK, OK, o + bad, 1), CCKEY_ERR_INVALID_ARG);
            cr_assert(untouched(k), "out was written on failure (option %d)", bad);
        }
}

Test(errors, null_with_zero_length_is_the_empty_string)
{
    char a[CCKEY_KEY_LEN + 1], b[CCKEY_KEY_LEN + 1];
    cckey_option o = {{NULL, 0}, {NULL, 0}}, e = {{"", 0}, {"", 0}};
    cr_assert_eq(cckey_make_key(a, (cckey_bytes){NULL, 0}, (cckey_bytes){NULL, 0}, (cckey_bytes){NULL, 0}, &o, 1),
                 CCKEY_OK);
    cr_assert_eq(cckey_make_key(b, (cckey_bytes){"", 0}, (cckey_bytes){"", 0}, (cckey_bytes){"", 0}, &e, 1),
                 CCKEY_OK);
    cr_assert_str_eq(a, b);
    cr_assert_eq(cckey_make_key(a, OK, OK, OK, NULL, 0), CCKEY_OK);
}

Test(errors, source_new)
{
    cckey_source *s = (cckey_source *)&s;
    ASSERT_FAILS(cckey_source_new(NULL, OK, CCKEY_SOURCE_COPY), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_source_new(&s, BAD, CCKEY_SOURCE_COPY), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_source_new(&s, BAD, CCKEY_SOURCE_BORROW), CCKEY_ERR_INVALID_ARG);
    const unsigned bad_flags[] = {2u, 3u, 0x80u, 0x80000000u, ~0u};
    for (size_t i = 0; i < sizeof bad_flags / sizeof *bad_flags; i++)
        ASSERT_FAILS(cckey_source_new(&s, OK, bad_flags[i]), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(s, (cckey_source *)&s, "out was written on failure");
    cr_assert_eq(cckey_source_new(&s, (cckey_bytes){NULL, 0}, CCKEY_SOURCE_COPY), CCKEY_OK);
    cckey_source_free(s);
    cckey_source_free(NULL);
}

Test(errors, source_key_and_digest)
{
    cckey_source *s;
    cr_assert_eq(cckey_source_new(&s, OK, CCKEY_SOURCE_COPY), CCKEY_OK);
    char k[CCKEY_KEY_LEN + 1], d[CCKEY_HEX_LEN + 1];
    cckey_option good = {OK, OK}, bad_key = {BAD, OK}, bad_val = {OK, BAD};
    fill(k);
    ASSERT_FAILS(cckey_source_key(NULL, s, OK, OK, NULL, 0), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_source_key(k, NULL, OK, OK, NULL, 0), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_source_key(k, s, BAD, OK, NULL, 0), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_source_key(k, s, OK, BAD, NULL, 0), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_source_key(k, s, OK, OK, NULL, 3), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_source_key(k, s, OK, OK, &bad_key, 1), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_source_key(k, s, OK, OK, &bad_val, 1), CCKEY_ERR_INVALID_ARG);
    cr_assert(untouched(k), "out was written on failure");
    /* A good call after the bad ones still works, and a bad call after a
     * memoised good one is still refused. */
    cr_assert_eq(cckey_source_key(k, s, OK, OK, &good, 1), CCKEY_OK);
    ASSERT_FAILS(cckey_source_key(k, s, OK, OK, &bad_val, 1), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_source_digest(NULL, s), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_source_digest(d, NULL), CCKEY_ERR_INVALID_ARG);
    cckey_source_free(s);
}

Test(errors, make_keys_null_arrays)
{
    char out[2][CCKEY_KEY_LEN + 1];
    cckey_tuple t[2] = {{OK, OK, OK, NULL, 0}, {OK, OK, OK, NULL, 0}};
    ASSERT_FAILS(cckey_make_keys(NULL, t, 2, NULL), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_make_keys(out, NULL, 2, NULL), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_make_keys(NULL, NULL, 0, NULL), CCKEY_OK, "an empty batch needs no arrays");
}

/* A bad tuple is refused and named by its index. */
static void expect_bad_tuple(size_t n, size_t bad, int field)
{
    cckey_tuple *t = calloc(n, sizeof *t);
    char (*out)[CCKEY_KEY_LEN + 1] = calloc(n, sizeof *out);
    cckey_option good[2] = {{OK, OK}, {OK, OK}}, bad_opt[2] = {{OK, OK}, {OK, OK}};
    if (field == 4) bad_opt[1].key = BAD;
    if (field == 5) bad_opt[1].value = BAD;
    for (size_t i = 0; i < n; i++) t[i] = (cckey_tuple){OK, OK, OK, good, 2};
    switch (field) {
    case 0: t[bad].device = BAD; break;
    case 1: t[bad].name = BAD; break;
    case 2: t[bad].source = BAD; break;
    case 3: t[bad].options = NULL; break;
    default: t[bad].options = bad_opt; break;
    }
    ASSERT_FAILS(cckey_make_keys(out, t, n, NULL), CCKEY_ERR_INVALID_ARG);
    char idx[32];
    snprintf(idx, sizeof idx, "%zu", bad);
    cr_assert(strstr(cckey_last_error(), idx), "field %d of tuple %zu: detail \"%s\" does not name the index",
              field, bad, cckey_last_error());
    free(t);
    free(out);
}

Test(errors, make_keys_names_the_bad_tuple)
{
    for (int field = 0; field < 6; field++) {
        expect_bad_tuple(1, 0, field);
        expect_bad_tuple(10, 9, field);
        expect_bad_tuple(70000, 65537, field);
    }
}

Test(errors, config_values)
{
    cckey_batch_config *cfg;
    ASSERT_FAILS(cckey_batch_config_new(NULL), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_batch_config_new(&cfg), CCKEY_OK);
    ASSERT_FAILS(cckey_batch_config_set_backend(cfg, (cckey_backend_kind)4), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_batch_config_set_backend(cfg, (cckey_backend_kind)-1), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_batch_config_set_backend(NULL, CCKEY_BACKEND_CPU), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_batch_config_set_threads(cfg, 4097), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_batch_config_set_threads(cfg, ~0u), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_batch_config_set_threads(NULL, 1), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_batch_config_set_verify(cfg, (cckey_verify_mode)3), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_batch_config_set_verify(cfg, (cckey_verify_mode)-1), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_batch_config_set_verify(NULL, CCKEY_VERIFY_ALL), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_batch_config_set_progress(NULL, NULL, NULL), CCKEY_ERR_INVALID_ARG);
    /* The good values are accepted, the edges included. */
    cr_assert_eq(cckey_batch_config_set_threads(cfg, 0), CCKEY_OK);
    cr_assert_eq(cckey_batch_config_set_threads(cfg, 4096), CCKEY_OK);
    for (int k = 0; k <= 3; k++) cr_assert_eq(cckey_batch_config_set_backend(cfg, (cckey_backend_kind)k), CCKEY_OK);
    for (int m = 0; m <= 2; m++) cr_assert_eq(cckey_batch_config_set_verify(cfg, (cckey_verify_mode)m), CCKEY_OK);
    cr_assert_eq(cckey_batch_config_set_progress(cfg, NULL, NULL), CCKEY_OK);
    cr_assert_str_eq(cckey_batch_config_used(cfg), "", "used before any batch");
    cr_assert_str_eq(cckey_batch_config_warning(cfg), "");
    cckey_batch_config_free(cfg);
    cckey_batch_config_free(NULL);
}

Test(errors, backend_names)
{
    static const char *names[] = {"auto", "cpu", "opencl", "cuda"};
    for (int k = 0; k < 4; k++) {
        cckey_backend_kind kind = (cckey_backend_kind)99;
        cr_assert_eq(cckey_backend_from_name(names[k], &kind), CCKEY_OK);
        cr_assert_eq((int)kind, k);
        cr_assert_str_eq(cckey_backend_name(kind), names[k]);
    }
    cckey_backend_kind kind = CCKEY_BACKEND_CPU;
    const char *bad[] = {"", "gpu", "cpu ", "cud", "cudaa", "opencl\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ASSERT_FAILS(cckey_backend_from_name(bad[i], &kind), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(kind, CCKEY_BACKEND_CPU, "out was written on failure");
    ASSERT_FAILS(cckey_backend_from_name(NULL, &kind), CCKEY_ERR_INVALID_ARG);
    ASSERT_FAILS(cckey_backend_from_name("cpu", NULL), CCKEY_ERR_INVALID_ARG);
    cr_assert_str_eq(cckey_backend_name((cckey_backend_kind)4), "unknown");
    cr_assert_str_eq(cckey_backend_name((cckey_backend_kind)-1), "unknown");
}

Test(errors, strerror_of_every_status)
{
    const char *seen[CCKEY_ERR_COLLISION + 1];
    for (int s = CCKEY_OK; s <= CCKEY_ERR_COLLISION; s++) {
        const char *m = cckey_strerror((cckey_status)s);
        cr_assert_not_null(m);
        cr_assert(m[0] != '\0', "status %d has an empty name", s);
        cr_assert_str_neq(m, "unknown status", "status %d is unnamed", s);
        for (int o = 0; o < s; o++) cr_assert_str_neq(m, seen[o], "statuses %d and %d share a name", o, s);
        seen[s] = m;
    }
    const int unknown[] = {CCKEY_ERR_COLLISION + 1, 100, -1, 0x7fffffff};
    for (size_t i = 0; i < sizeof unknown / sizeof *unknown; i++)
        cr_assert_str_eq(cckey_strerror((cckey_status)unknown[i]), "unknown status");
}

Test(errors, last_error_is_per_call_detail)
{
    cr_assert_not_null(cckey_last_error());
    cr_assert_eq(cckey_make_key(NULL, OK, OK, OK, NULL, 0), CCKEY_ERR_INVALID_ARG);
    char first[1024];
    snprintf(first, sizeof first, "%s", cckey_last_error());
    cr_assert(first[0] != '\0');
    cckey_batch_config *cfg;
    cr_assert_eq(cckey_batch_config_new(&cfg), CCKEY_OK);
    cr_assert_eq(cckey_batch_config_set_threads(cfg, 5000), CCKEY_ERR_INVALID_ARG);
    cr_assert_str_neq(cckey_last_error(), first, "a new failure must replace the detail");
    cr_assert(strstr(cckey_last_error(), "5000"), "detail \"%s\" does not name the bad value", cckey_last_error());
    cckey_batch_config_free(cfg);
}

Test(errors, version)
{
    cr_assert_str_eq(cckey_version(), CCKEY_VERSION_STRING);
    char v[32];
    snprintf(v, sizeof v, "%d.%d.%d", CCKEY_VERSION_MAJOR, CCKEY_VERSION_MINOR, CCKEY_VERSION_PATCH);
    cr_assert_str_eq(cckey_version(), v);
}
