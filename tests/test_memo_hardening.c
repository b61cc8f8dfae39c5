/* The memo's guarantees where random tests cannot reach: a hit is exact
 * even when two tuples share the 64-bit tag, and a look-up racing a writer
 * that replaces the entry it is reading never returns a torn key. Both use
 * the test build's memo hooks (host/testing/testing.h). */
#include "support.h"
#include "testing/testing.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static char (*ref_key(const char *dev, const char *name, const cckey_option *o, size_t n))[CCKEY_KEY_LEN + 1]
{
    static char out[CCKEY_KEY_LEN + 1];
    cr_assert_eq(cckey_make_key(out, (cckey_bytes){dev, strlen(dev)}, (cckey_bytes){name, strlen(name)},
                                (cckey_bytes){"src", 3}, o, n),
                 CCKEY_OK);
    return &out;
}

static void memo_key(char out[CCKEY_KEY_LEN + 1], cckey_source *s, const char *dev, const char *name,
                     const cckey_option *o, size_t n)
{
    cr_assert_eq(cckey_source_key(out, s, (cckey_bytes){dev, strlen(dev)}, (cckey_bytes){name, strlen(name)}, o, n),
                 CCKEY_OK, "%s", cckey_last_error());
}

/* ---- a forced collision ----------------------------------------------------
 * The memo hashes its material (each field as an 8-byte length and its
 * bytes, the option count, then the options) a 64-bit word at a time:
 * h = (h ^ w) * C; h ^= h >> 29; and the tag is h | 1. Both steps can be
 * undone, so a last word can be chosen that lands on the same tag as
 * another: here the last 8 bytes of the one option's value. The library's
 * own tag function confirms the collision, so a change of hash cannot make
 * this test pass without testing anything. */

#define MIX 0x9e3779b97f4a7c15u

static uint64_t mix_inverse(void)
{
    uint64_t inv = MIX;   /* Newton's iteration doubles the correct low bits */
    for (int i = 0; i < 6; i++) inv *= 2 - MIX * inv;
    return inv;
}

static uint64_t unshift(uint64_t y) { return y ^ (y >> 29) ^ (y >> 58); }

/* The hash state after every word of the material but the last. */
static uint64_t state_before_last(const uint8_t *mat, size_t nwords)
{
    uint64_t h = 0x243f6a8885a308d3u;
    for (size_t i = 0; i + 1 < nwords; i++) {
        uint64_t w;
        memcpy(&w, mat + 8 * i, 8);
        h = (h ^ w) * MIX;
        h ^= h >> 29;
    }
    return h;
}

static size_t put(uint8_t *p, const char *data, size_t len)
{
    uint64_t l = len;
    memcpy(p, &l, 8);
    memcpy(p + 8, data, len);
    return 8 + len;
}

Test(memo_hardening, a_tag_collision_is_never_a_hit)
{
    /* Lengths that are multiples of 8 put the value's 8 bytes in the last word. */
    const char *dev = "device01", *name = "kernel01";
    char va[9] = "AAAAAAAA", vb[8];
    cckey_option a = {{"optkey01", 8}, {va, 8}};
    uint8_t mat[128];
    size_t len = put(mat, dev, 8);
    len += put(mat + len, name, 8);
    uint64_t count = 1;
    memcpy(mat + len, &count, 8), len += 8;
    len += put(mat + len, "optkey01", 8);
    len += put(mat + len, va, 8);
    size_t nwords = len / 8;
    uint64_t h = state_before_last(mat, nwords), wa;
    memcpy(&wa, va, 8);
    uint64_t fa = (h ^ wa) * MIX;
    fa ^= fa >> 29;
    uint64_t wb = (unshift(fa ^ 1) * mix_inverse()) ^ h;   /* differs from fa in bit 0 only */
    memcpy(vb, &wb, 8);
    cckey_option b = {{"optkey01", 8}, {vb, 8}};
    cckey_bytes d = {dev, 8}, n = {name, 8};
    uint64_t ta = cckey_testing_memo_tag(d, n, &a, 1), tb = cckey_testing_memo_tag(d, n, &b, 1);
    cr_assert_eq(ta, tb, "no collision built: %016llx vs %016llx (did the memo's hash change?)",
                 (unsigned long long)ta, (unsigned long long)tb);
    cr_assert(memcmp(va, vb, 8) != 0);

    for (int order = 0; order < 2; order++) {
        cckey_source *s;
        cr_assert_eq(cckey_source_new(&s, (cckey_bytes){"src", 3}, 0), CCKEY_OK);
        const cckey_option *first = order ? &b : &a, *second = order ? &a : &b;
        char k1[CCKEY_KEY_LEN + 1], k2[CCKEY_KEY_LEN + 1], want[CCKEY_KEY_LEN + 1];
        memo_key(k1, s, dev, name, first, 1);
        memo_key(k2, s, dev, name, second, 1);   /* same tag, same set: must not hit */
        memcpy(want, *ref_key(dev, name, second, 1), sizeof want);
        cr_assert_str_eq(k2, want, "order %d: a tag match was served as a hit", order);
        memcpy(want, *ref_key(dev, name, first, 1), sizeof want);
        cr_assert_str_eq(k1, want);
        memo_key(k1, s, dev, name, first, 1);    /* both now memoised, both right */
        cr_assert_str_eq(k1, want);
        cckey_source_free(s);
    }
}

/* ---- a writer in the middle of a read ----------------------------------------
 * The hook runs inside the look-up of X, after X's material compared equal
 * and before X's key is copied. There it memoises tuples of X's set until
 * X's way has surely been reused (4 ways: the clock evicts X by the fourth),
 * so the key words the look-up goes on to copy are another tuple's. Only
 * the seqlock's second look can tell; the look-up must miss and compute. */

static cckey_source *race_src;
static char race_names[8][16];
static int race_fired;

static void overwrite_set(void)
{
    if (race_fired++) return;   /* the nested look-ups call the hook too */
    for (int i = 0; i < 8; i++) {
        char k[CCKEY_KEY_LEN + 1];
        memo_key(k, race_src, "d", race_names[i], NULL, 0);
    }
}

Test(memo_hardening, a_read_overlapping_a_write_is_never_torn)
{
    cr_assert_eq(cckey_source_new(&race_src, (cckey_bytes){"src", 3}, 0), CCKEY_OK);
    cckey_bytes d = {"d", 1};
    size_t set = cckey_testing_memo_set(d, (cckey_bytes){"x", 1}, NULL, 0);
    int found = 0;
    for (int i = 0; found < 8 && i < 100000; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "y%d", i);
        if (cckey_testing_memo_set(d, (cckey_bytes){nm, strlen(nm)}, NULL, 0) == set)
            memcpy(race_names[found++], nm, sizeof nm);
    }
    cr_assert_eq(found, 8);
    char k[CCKEY_KEY_LEN + 1], want[CCKEY_KEY_LEN + 1];
    memcpy(want, *ref_key("d", "x", NULL, 0), sizeof want);
    memo_key(k, race_src, "d", "x", NULL, 0);   /* X memoised */
    cr_assert_str_eq(k, want);
    cckey_testing_memo_hook = overwrite_set;
    memo_key(k, race_src, "d", "x", NULL, 0);
    cckey_testing_memo_hook = NULL;
    cr_assert_eq(race_fired, 1, "the look-up never reached X's key");
    cr_assert_str_eq(k, want, "a torn read: X's look-up returned another tuple's key");
    for (int i = 0; i < 8; i++) {   /* and what the hook wrote is right too */
        memo_key(k, race_src, "d", race_names[i], NULL, 0);
        cr_assert_str_eq(k, *ref_key("d", race_names[i], NULL, 0));
    }
    cckey_source_free(race_src);
}
