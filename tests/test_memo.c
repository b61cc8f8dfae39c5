/* Source handles: the memo returns exactly what cckey_make_key returns,
 * digests the source once, and computes nothing on a hit. */
#include "testing/testing.h"   /* cckey_md5_count, the per-thread digest counter */
#include "support.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

typedef cckey_test_tuple tuple;

static void expected(char out[CCKEY_KEY_LEN + 1], const tuple *t, cckey_bytes src)
{
    cr_assert_eq(cckey_make_key(out, t->device, t->name, src, t->opts, t->n), CCKEY_OK);
}

static void check(cckey_source *s, const tuple *t, cckey_bytes src, const char *what)
{
    char want[CCKEY_KEY_LEN + 1], got[CCKEY_KEY_LEN + 1];
    expected(want, t, src);
    memset(got, '#', sizeof got);
    cr_assert_eq(cckey_source_key(got, s, t->device, t->name, t->opts, t->n), CCKEY_OK, "%s", what);
    cr_assert_eq(got[CCKEY_KEY_LEN], '\0', "%s: terminator", what);
    cr_assert_str_eq(got, want, "%s", what);
}

/* A handle on src made with flags (CCKEY_SOURCE_COPY or _BORROW). */
static cckey_source *source_of(cckey_bytes src, unsigned flags)
{
    cckey_source *s;
    cr_assert_eq(cckey_source_new(&s, src, flags), CCKEY_OK);
    return s;
}

Test(memo, identical_to_make_key_on_random_tuples)
{
    uint64_t rng = 11;
    cckey_test_arena a = {0};
    for (int h = 0; h < 20; h++) {
        cckey_bytes src = cckey_test_random_bytes(&a, &rng, cckey_test_below(&rng, 3000));
        cckey_source *s = source_of(src, h % 2 ? CCKEY_SOURCE_BORROW : CCKEY_SOURCE_COPY);
        tuple ts[100];
        for (int i = 0; i < 100; i++) ts[i] = cckey_test_random_tuple(&a, &rng, h < 10 ? 60 : 600);
        /* Three passes: misses, then hits (or evictions), in another order. */
        for (int pass = 0; pass < 3; pass++)
            for (int i = 0; i < 100; i++) {
                int j = pass == 1 ? 99 - i : i;
                check(s, &ts[j], src, "random tuple");
            }
        cckey_source_free(s);
    }
    cckey_test_arena_free(&a);
}

Test(memo, source_digested_once_and_no_md5_on_a_hit)
{
    uint64_t rng = 12;
    cckey_test_arena a = {0};
    cckey_bytes src = cckey_test_random_bytes(&a, &rng, 10000);
    for (unsigned flags = 0; flags <= CCKEY_SOURCE_BORROW; flags++) {
        uint64_t c0 = cckey_md5_count;
        cckey_source *s = source_of(src, flags);
        cr_assert_eq(cckey_md5_count - c0, 1u, "creating a handle digests its source once");
        /* Up to 4 tuples fit one memo set whatever their hash, so each of
         * them must hit on the second call. */
        tuple ts[4];
        for (int i = 0; i < 4; i++) ts[i] = cckey_test_random_tuple(&a, &rng, 40);
        for (int i = 0; i < 4; i++) {
            char k[CCKEY_KEY_LEN + 1];
            uint64_t before = cckey_md5_count;
            expected(k, &ts[i], src);
            uint64_t full = cckey_md5_count - before;   /* device, name, source, options */
            before = cckey_md5_count;
            cr_assert_eq(cckey_source_key(k, s, ts[i].device, ts[i].name, ts[i].opts, ts[i].n), CCKEY_OK);
            uint64_t miss = cckey_md5_count - before;
            cr_assert_eq(miss, full - 1, "a miss digests all but the source (%llu of %llu)",
                         (unsigned long long)miss, (unsigned long long)full);
        }
        for (int round = 0; round < 3; round++)
            for (int i = 0; i < 4; i++) {
                check(s, &ts[i], src, "hit");   /* right, via cckey_make_key */
                char k[CCKEY_KEY_LEN + 1];
                uint64_t c = cckey_md5_count;
                cr_assert_eq(cckey_source_key(k, s, ts[i].device, ts[i].name, ts[i].opts, ts[i].n), CCKEY_OK);
                cr_assert_eq(cckey_md5_count, c, "a memo hit computed an MD5 (tuple %d)", i);
            }
        cckey_source_free(s);
    }
    cckey_test_arena_free(&a);
}

Test(memo, copy_survives_the_callers_buffer)
{
    const char *text = "__global__ void k(int *p) { *p = 42; }";
    size_t n = strlen(text);
    char *buf = malloc(n);
    memcpy(buf, text, n);
    cckey_source *s = source_of((cckey_bytes){buf, n}, CCKEY_SOURCE_COPY);
    memset(buf, 'X', n);
    free(buf);   /* under ASan, any later read of it is a report */
    cckey_option o = {{"arch", 4}, {"sm_90", 5}};
    tuple t = {{"dev", 3}, {"k", 1}, &o, 1};
    for (int i = 0; i < 2; i++) check(s, &t, (cckey_bytes){text, n}, "after free");
    char d[CCKEY_HEX_LEN + 1], want[CCKEY_HEX_LEN + 1];
    cckey_test_md5_hex(text, n, want);
    cr_assert_eq(cckey_source_digest(d, s), CCKEY_OK);
    cr_assert_str_eq(d, want);
    cckey_source_free(s);
}

Test(memo, borrow_reads_the_callers_bytes)
{
    uint64_t rng = 13;
    cckey_test_arena a = {0};
    cckey_bytes src = cckey_test_random_bytes(&a, &rng, 5000);
    cckey_source *s = source_of(src, CCKEY_SOURCE_BORROW);
    char d[CCKEY_HEX_LEN + 1], want[CCKEY_HEX_LEN + 1];
    cckey_test_md5_hex(src.ptr, src.len, want);
    cr_assert_eq(cckey_source_digest(d, s), CCKEY_OK);
    cr_assert_str_eq(d, want);
    for (int i = 0; i < 50; i++) {
        tuple t = cckey_test_random_tuple(&a, &rng, 100);
        check(s, &t, src, "borrowed");
    }
    cckey_source_free(s);
    cckey_test_arena_free(&a);
}

Test(memo, empty_sources)
{
    const cckey_bytes empties[] = {{NULL, 0}, {"", 0}};
    for (int e = 0; e < 2; e++)
        for (unsigned flags = 0; flags <= CCKEY_SOURCE_BORROW; flags++) {
            cckey_source *s = source_of(empties[e], flags);
            char d[CCKEY_HEX_LEN + 1];
            cr_assert_eq(cckey_source_digest(d, s), CCKEY_OK);
            cr_assert_str_eq(d, "d41d8cd98f00b204e9800998ecf8427e");
            tuple t = {{NULL, 0}, {NULL, 0}, NULL, 0};
            check(s, &t, empties[e], "empty everything");
            check(s, &t, empties[e], "empty everything, again");
            cckey_source_free(s);
        }
}

Test(memo, eviction_keeps_results_right)
{
    uint64_t rng = 14;
    cckey_test_arena a = {0};
    cckey_bytes src = {"src", 3};
    cckey_source *s = source_of(src, CCKEY_SOURCE_COPY);
    enum { N = 5 * CCKEY_MEMO_ENTRIES };
    static tuple ts[N];
    for (int i = 0; i < N; i++) ts[i] = cckey_test_random_tuple(&a, &rng, 30);
    /* A hot few among a stream of cold ones: the clock keeps the hot ones,
     * the cold ones evict each other, and every answer stays right. */
    for (int i = 0; i < 20 * N; i++) {
        int j = i % 3 ? (int)cckey_test_below(&rng, 8) : (int)cckey_test_below(&rng, N);
        check(s, &ts[j], src, "under eviction");
    }
    cckey_source_free(s);
    cckey_test_arena_free(&a);
}

Test(memo, tuples_that_serialise_alike_stay_apart)
{
    /* Length prefixes keep (ab, "") and (a, b) apart, and option order
     * and grouping too. */
    cckey_bytes src = {"s", 1};
    cckey_source *s = source_of(src, CCKEY_SOURCE_COPY);
    cckey_option o1[] = {{{"a", 1}, {"1", 1}}, {{"a", 1}, {"2", 1}}};
    cckey_option o2[] = {{{"a", 1}, {"2", 1}}, {{"a", 1}, {"1", 1}}};
    cckey_option o3[] = {{{"b", 1}, {"2", 1}}, {{"a", 1}, {"1", 1}}};
    cckey_option o4[] = {{{"a1", 2}, {"", 0}}};
    cckey_option o5[] = {{{"a", 1}, {"1", 1}}};
    cckey_option o6[] = {{{"", 0}, {"", 0}}};
    tuple ts[] = {
        {{"ab", 2}, {"", 0}, NULL, 0}, {{"a", 1}, {"b", 1}, NULL, 0}, {{"", 0}, {"ab", 2}, NULL, 0},
        {{"d", 1}, {"n", 1}, o1, 2},   {{"d", 1}, {"n", 1}, o2, 2},  {{"d", 1}, {"n", 1}, o3, 2},
        {{"d", 1}, {"n", 1}, o4, 1},   {{"d", 1}, {"n", 1}, o5, 1},  {{"d", 1}, {"n", 1}, o6, 1},
        {{"d", 1}, {"n", 1}, NULL, 0},
    };
    size_t n = sizeof ts / sizeof *ts;
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < n; i++) check(s, &ts[round == 1 ? n - 1 - i : i], src, "look-alike");
    char a[CCKEY_KEY_LEN + 1], b[CCKEY_KEY_LEN + 1];
    cr_assert_eq(cckey_source_key(a, s, ts[3].device, ts[3].name, ts[3].opts, 2), CCKEY_OK);
    cr_assert_eq(cckey_source_key(b, s, ts[4].device, ts[4].name, ts[4].opts, 2), CCKEY_OK);
    cr_assert_str_neq(a, b, "equal option keys keep their order");
    cckey_source_free(s);
}

Test(memo, material_around_and_past_the_limit)
{
    uint64_t rng = 15;
    cckey_test_arena a = {0};
    cckey_bytes src = {"s", 1};
    cckey_source *s = source_of(src, CCKEY_SOURCE_COPY);
    /* Every device length across the limit, with and without options,
     * and option lists too long to memoise. */
    for (size_t len = CCKEY_MEMO_MAX_MATERIAL - 80; len <= CCKEY_MEMO_MAX_MATERIAL + 80; len++)
        for (int with_opts = 0; with_opts < 2; with_opts++) {
            cckey_option o = {{"k", 1}, {"v", 1}};
            tuple t = {cckey_test_random_bytes(&a, &rng, len), {"n", 1}, with_opts ? &o : NULL, (size_t)with_opts};
            check(s, &t, src, "near the limit");
            check(s, &t, src, "near the limit, again");
        }
    for (size_t nopt = 20; nopt <= 100; nopt += 40) {
        cckey_option *o = cckey_test_alloc(&a, nopt * sizeof *o);
        for (size_t i = 0; i < nopt; i++) o[i] = (cckey_option){{"k", 1}, cckey_test_random_bytes(&a, &rng, 3)};
        tuple t = {{"d", 1}, {"n", 1}, o, nopt};
        check(s, &t, src, "many options");
        check(s, &t, src, "many options, again");
    }
    tuple huge = {cckey_test_random_bytes(&a, &rng, 1 << 20), {"n", 1}, NULL, 0};
    check(s, &huge, src, "a 1 MiB device");
    cckey_source_free(s);
    cckey_test_arena_free(&a);
}

Test(memo, small_material_is_memoised_large_is_not_kept)
{
    /* Behaviour either side of the limit, seen through the digest count;
     * well inside and well outside, so the exact accounting is free. */
    cckey_source *s = source_of((cckey_bytes){"s", 1}, CCKEY_SOURCE_COPY);
    static char dev[CCKEY_MEMO_MAX_MATERIAL * 2];
    memset(dev, 'd', sizeof dev);
    char k[CCKEY_KEY_LEN + 1];
    cckey_bytes small = {dev, CCKEY_MEMO_MAX_MATERIAL / 2}, big = {dev, sizeof dev};
    cr_assert_eq(cckey_source_key(k, s, small, (cckey_bytes){"n", 1}, NULL, 0), CCKEY_OK);
    uint64_t c = cckey_md5_count;
    cr_assert_eq(cckey_source_key(k, s, small, (cckey_bytes){"n", 1}, NULL, 0), CCKEY_OK);
    cr_assert_eq(cckey_md5_count, c, "small material was not memoised");
    cr_assert_eq(cckey_source_key(k, s, big, (cckey_bytes){"n", 1}, NULL, 0), CCKEY_OK);
    c = cckey_md5_count;
    cr_assert_eq(cckey_source_key(k, s, big, (cckey_bytes){"n", 1}, NULL, 0), CCKEY_OK);
    cr_assert(cckey_md5_count > c, "material past CCKEY_MEMO_MAX_MATERIAL is documented as not memoised");
    cckey_source_free(s);
}

/* Many threads on one handle: tests/test_threads.c, a plain program, so
 * that the ThreadSanitizer build runs it too. */
