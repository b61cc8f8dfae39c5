/* The tuple fingerprint and the entry signature against OpenSSL's one-shot
 * SHA256() and HMAC() over the bytes fingerprint.h documents, built here
 * by hand; and signed entries: accepted with the secret, refused when
 * tampered, unsigned or made under another secret. */
#include "store/fingerprint.h"
#include "store/sign.h"
#include "store/store_internal.h"

#include <criterion/criterion.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>

static size_t add(uint8_t *buf, size_t at, const void *p, size_t n)
{
    for (int i = 0; i < 8; i++) buf[at + i] = (uint8_t)((uint64_t)n >> (8 * i));
    memcpy(buf + at + 8, p, n);
    return at + 8 + n;
}

#define B(s) ((cckey_bytes){s, sizeof s - 1})

Test(fingerprint, matches_the_documented_bytes_with_options_in_canonical_order)
{
    cckey_option opts[] = {{B("-O"), B("3")}, {B("-D"), B("N=4")}, {B("-D"), B("M=1")}};
    cckey_tuple t = {B("Dev|1.0"), B("k"), B("__kernel void k() {}"), opts, 3};
    const char deps[] = "\x04\0\x01\0\x05\0\0\0dep.h";
    uint8_t got[32], want[32], buf[512];
    cr_assert_eq(cckey_fingerprint(&t, deps, sizeof deps - 1, got), CCKEY_OK);
    size_t n = sizeof "cckey-fingerprint-1";
    memcpy(buf, "cckey-fingerprint-1", n);
    n = add(buf, n, "Dev|1.0", 7);
    n = add(buf, n, "k", 1);
    n = add(buf, n, "__kernel void k() {}", 20);
    uint8_t three[8] = {3};
    memcpy(buf + n, three, 8), n += 8;
    /* Stable by key: -D N=4, -D M=1 (input order kept), then -O 3. */
    n = add(buf, n, "-D", 2), n = add(buf, n, "N=4", 3);
    n = add(buf, n, "-D", 2), n = add(buf, n, "M=1", 3);
    n = add(buf, n, "-O", 2), n = add(buf, n, "3", 1);
    n = add(buf, n, deps, sizeof deps - 1);
    SHA256(buf, n, want);
    cr_assert_arr_eq(got, want, 32);
    /* Any change of the tuple changes it; so does the order of equal keys. */
    cckey_option swapped[] = {opts[0], opts[2], opts[1]};
    t.options = swapped;
    cckey_fingerprint(&t, deps, sizeof deps - 1, want);
    cr_assert(memcmp(got, want, 32) != 0);
}

Test(fingerprint, hmac_matches_openssl)
{
    char key[CCKEY_KEY_LEN + 1];
    memset(key, 'a', CCKEY_KEY_LEN), key[CCKEY_KEY_LEN] = '\0';
    const uint8_t rec[] = {1, 0, 0, 0, 2, 0, 0, 0, 'h', 'i'};
    uint8_t got[32], want[32], buf[512];
    cr_assert_eq(cckey_entry_mac("s3cret", 6, key, rec, sizeof rec, "payload", 7, got), CCKEY_OK);
    size_t n = sizeof "cckey-entry-mac-1";
    memcpy(buf, "cckey-entry-mac-1", n);
    memcpy(buf + n, key, CCKEY_KEY_LEN), n += CCKEY_KEY_LEN;
    memset(buf + n, 0, 16), buf[n] = sizeof rec, buf[n + 8] = 7, n += 16;
    memcpy(buf + n, rec, sizeof rec), n += sizeof rec;
    memcpy(buf + n, "payload", 7), n += 7;
    unsigned len = 0;
    HMAC(EVP_sha256(), "s3cret", 6, buf, n, want, &len);
    cr_assert_eq(len, 32);
    cr_assert_arr_eq(got, want, 32);
}

/* An entry file as the store writes it, with one record. */
static uint8_t *entry(const char *key, size_t *n)
{
    const uint8_t rec[] = {1, 0, 0, 0, 5, 0, 0, 0, 'c', 'l', 'a', 'n', 'g'};
    *n = CCKEY_ENTRY_HEADER + sizeof rec + 100;
    uint8_t *e = calloc(1, *n);
    memcpy(e + CCKEY_ENTRY_HEADER, rec, sizeof rec);
    for (int i = 0; i < 100; i++) e[CCKEY_ENTRY_HEADER + sizeof rec + i] = (uint8_t)i;
    cckey_entry_header(e, key, e + CCKEY_ENTRY_HEADER, sizeof rec, e + CCKEY_ENTRY_HEADER + sizeof rec, 100);
    return e;
}

Test(fingerprint, signed_entries)
{
    char key[CCKEY_KEY_LEN + 1];
    for (size_t i = 0; i < CCKEY_KEY_LEN; i++) key[i] = i % 33 == 32 ? ':' : 'b';
    key[CCKEY_KEY_LEN] = '\0';
    size_t n, sn, sn2;
    uint8_t *e = entry(key, &n);
    void *s, *s2;
    cr_assert_eq(cckey_entry_check_signature(e, n, key, "k", 1), CCKEY_ERR_CORRUPT);   /* unsigned */
    cr_assert_eq(cckey_entry_sign(e, n, key, "k", 1, &s, &sn), CCKEY_OK);
    cr_assert_eq(sn, n + 8 + 32);
    cr_assert_eq(cckey_entry_check_signature(s, sn, key, "k", 1), CCKEY_OK);
    cr_assert_eq(cckey_entry_check_signature(s, sn, key, "K", 1), CCKEY_ERR_CORRUPT);   /* another secret */
    /* Signing again replaces the signature rather than stacking them. */
    cr_assert_eq(cckey_entry_sign(s, sn, key, "k2", 2, &s2, &sn2), CCKEY_OK);
    cr_assert_eq(sn2, sn);
    cr_assert_eq(cckey_entry_check_signature(s2, sn2, key, "k2", 2), CCKEY_OK);
    /* Every flipped byte after the header (records, the signature record,
     * the payload) is caught, even with the MD5 checksum made right again. */
    uint8_t *t = malloc(sn);
    for (size_t at = CCKEY_ENTRY_HEADER; at < sn; at++) {
        memcpy(t, s, sn);
        t[at] ^= 0x40;
        uint32_t rl = cckey_get_le32(t + CCKEY_ENTRY_RECLEN_AT);
        cckey_entry_header(t, key, t + CCKEY_ENTRY_HEADER, rl, t + CCKEY_ENTRY_HEADER + rl, sn - CCKEY_ENTRY_HEADER - rl);
        cr_assert_neq(cckey_entry_check_signature(t, sn, key, "k", 1), CCKEY_OK, "flip at %zu served", at);
    }
    free(t), free(s), free(s2), free(e);
}
