/* The tuple fingerprint and the entry signature against OpenSSL's one-shot
 * SHA256() and HMAC() over the bytes fingerprint.h documents, built here
 * by hand; and signed entries: accepted with the secret, refused when
 * tampered, unsigned or made under another secret. */
#include "entry/fingerprint.h"
#include "entry/sign.h"
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

/* ---- The store: put_meta with a tuple, get_checked with a tuple ---------- */

#include "support.h"

static char store_dir[64];
static void store_setup(void) { cr_assert(cckey_test_make_dir(store_dir, "fp")); }
static void store_teardown(void) { cckey_test_remove_tree(store_dir); }
TestSuite(poisoning, .init = store_setup, .fini = store_teardown);

static const char MISSING_DEP[] = "/nonexistent-cckey-fp-test/absent.h";

static void entry_path(const char *key, char path[4096]) { cckey_test_entry_path(path, 4096, store_dir, key); }

/* The FINGERPRINT record's value in the entry file at path, or NULL. */
static const uint8_t *fingerprint_record(const uint8_t *f, size_t len)
{
    cr_assert_geq(len, CCKEY_ENTRY_HEADER);
    uint32_t rl = cckey_get_le32(f + CCKEY_ENTRY_RECLEN_AT);
    const uint8_t *fp = NULL;
    for (uint32_t off = 0; off + CCKEY_REC_HEAD <= rl;) {
        const uint8_t *h = f + CCKEY_ENTRY_HEADER + off;
        uint32_t vl = cckey_get_le32(h + 4);
        if (cckey_get_le16(h) == CCKEY_REC_FINGERPRINT) {
            cr_assert_eq(vl, 32);
            fp = h + CCKEY_REC_HEAD;
        }
        off += CCKEY_REC_HEAD + vl;
    }
    return fp;
}

/* What a tuple {dev, name, src, one option -O=2} with the missing-file
 * dependency above must be fingerprinted as: OpenSSL's SHA256() over the
 * documented bytes, the dependency record written here by hand. */
static void oracle(const char *dev, const char *name, const char *src, uint8_t want[32])
{
    uint8_t buf[1024], dep[CCKEY_REC_HEAD + CCKEY_DEP_FIXED + sizeof MISSING_DEP];
    size_t pl = sizeof MISSING_DEP - 1, dl = CCKEY_REC_HEAD + CCKEY_DEP_FIXED + pl;
    memset(dep, 0, sizeof dep);
    dep[0] = 4, dep[2] = 1;   /* DEPENDENCY, critical */
    cckey_put_le32(dep + 4, (uint32_t)(CCKEY_DEP_FIXED + pl));
    cckey_put_le32(dep + 8, 0xFFFFFFFFu);   /* absolute; absent: the rest stays 0 */
    memcpy(dep + CCKEY_REC_HEAD + CCKEY_DEP_FIXED, MISSING_DEP, pl);
    size_t n = sizeof "cckey-fingerprint-1";
    memcpy(buf, "cckey-fingerprint-1", n);
    n = add(buf, n, dev, strlen(dev));
    n = add(buf, n, name, strlen(name));
    n = add(buf, n, src, strlen(src));
    uint8_t one[8] = {1};
    memcpy(buf + n, one, 8), n += 8;
    n = add(buf, n, "-O", 2), n = add(buf, n, "2", 1);
    n = add(buf, n, dep, dl);
    SHA256(buf, n, want);
}

typedef struct fixture {
    cckey_option opt;
    cckey_tuple good, evil;
    cckey_dep dep;
    char key[CCKEY_KEY_LEN + 1];   /* the good tuple's key */
} fixture;

static void make_fixture(fixture *x)
{
    x->opt = (cckey_option){B("-O"), B("2")};
    x->good = (cckey_tuple){B("Dev|1.0"), B("k"), B("__kernel void k(__global int *p) { p[0] = 1; }"), &x->opt, 1};
    x->evil = x->good;
    x->evil.source = B("__kernel void k(__global int *p) { p[0] = 666; }");
    x->dep = (cckey_dep){.root = CCKEY_DEP_ABSOLUTE, .path = MISSING_DEP, .present = 0};
    cckey_test_ref_key(x->key, x->good.device, x->good.name, x->good.source, x->good.options, 1);
}

static cckey_status put(cckey_store *s, const fixture *x, const cckey_tuple *t, const char *payload)
{
    const char *flags[] = {"-O2"};
    cckey_entry_meta meta = {"OpenCL", "PoCL 9", flags, 1, &x->dep, 1, t};
    return cckey_store_put_meta(s, x->key, payload, strlen(payload), &meta);
}

static cckey_status get(cckey_store *s, const fixture *x, const cckey_tuple *t, char **payload)
{
    const char *flags[] = {"-O2"};
    cckey_lookup lk = {.compiler = "OpenCL", .version = "PoCL 9", .options = flags, .n_options = 1, .tuple = t};
    void *buf = NULL;
    size_t len = 0;
    cckey_status st = cckey_store_get_checked(s, x->key, &lk, &buf, &len);
    *payload = buf ? strndup(buf, len) : NULL;
    cckey_store_free_buffer(buf);
    if (st != CCKEY_OK) cr_assert_null(buf, "a refused entry's payload was handed out");
    return st;
}

Test(poisoning, the_record_is_sha256_of_the_tuple_and_a_matching_lookup_hits)
{
    fixture x;
    make_fixture(&x);
    cckey_store *s;
    cr_assert_eq(cckey_store_open(&s, store_dir, 0), CCKEY_OK);
    cr_assert_eq(put(s, &x, &x.good, "GOOD"), CCKEY_OK, "%s", cckey_last_error());
    char path[4096];
    entry_path(x.key, path);
    size_t len;
    uint8_t *f = (uint8_t *)cckey_test_read_file(path, &len);
    cr_assert_not_null(f);
    const uint8_t *fp = fingerprint_record(f, len);
    cr_assert_not_null(fp, "put_meta with a tuple wrote no FINGERPRINT record");
    uint8_t want[32];
    oracle("Dev|1.0", "k", "__kernel void k(__global int *p) { p[0] = 1; }", want);
    cr_assert_arr_eq(fp, want, 32);
    free(f);
    char *p;
    cr_assert_eq(get(s, &x, &x.good, &p), CCKEY_OK, "%s", cckey_last_error());
    cr_assert_str_eq(p, "GOOD");
    free(p);
    cckey_store_close(s);
}

Test(poisoning, a_colliding_entry_is_refused_removed_and_counted_as_a_miss)
{
    fixture x;
    make_fixture(&x);
    cckey_store *s;
    cr_assert_eq(cckey_store_open(&s, store_dir, 0), CCKEY_OK);
    /* What a chosen-prefix collision gives an attacker: the good tuple's key
     * over another tuple's binary, fingerprinted honestly as that tuple. */
    cr_assert_eq(put(s, &x, &x.evil, "EVIL"), CCKEY_OK);
    uint64_t misses = atomic_load(&s->misses), hits = atomic_load(&s->hits);
    char *p = NULL;
    cr_assert_eq(get(s, &x, &x.good, &p), CCKEY_ERR_COLLISION);
    cr_assert_null(p);
    cr_assert(strstr(cckey_last_error(), "possible MD5 collision"), "%s", cckey_last_error());
    cr_assert_eq(atomic_load(&s->misses), misses + 1);
    cr_assert_eq(atomic_load(&s->hits), hits);
    /* Removed: not even a look-up without the tuple serves it afterwards. */
    void *buf;
    size_t len;
    cr_assert_eq(cckey_store_get(s, x.key, &buf, &len), CCKEY_ERR_NOT_FOUND);
    /* The right entry put again is served. */
    cr_assert_eq(put(s, &x, &x.good, "GOOD"), CCKEY_OK);
    cr_assert_eq(get(s, &x, &x.good, &p), CCKEY_OK);
    cr_assert_str_eq(p, "GOOD");
    free(p);
    cckey_store_close(s);
}

Test(poisoning, an_entry_without_a_fingerprint_or_with_a_forged_one_is_refused)
{
    fixture x;
    make_fixture(&x);
    cckey_store *s;
    cr_assert_eq(cckey_store_open(&s, store_dir, 0), CCKEY_OK);
    char *p;
    /* No fingerprint (put without the tuple): only an unchecked look-up serves it. */
    cr_assert_eq(put(s, &x, NULL, "UNFINGERPRINTED"), CCKEY_OK);
    cr_assert_eq(get(s, &x, NULL, &p), CCKEY_OK);
    cr_assert_str_eq(p, "UNFINGERPRINTED");
    free(p);
    cr_assert_eq(get(s, &x, &x.good, &p), CCKEY_ERR_COLLISION);
    cr_assert_null(p);
    /* A good entry whose fingerprint record is rewritten with each single
     * bit flipped, its MD5 checksum made right again: never served. */
    cr_assert_eq(put(s, &x, &x.good, "GOOD"), CCKEY_OK);
    char path[4096];
    entry_path(x.key, path);
    size_t len;
    uint8_t *orig = (uint8_t *)cckey_test_read_file(path, &len);
    cr_assert_not_null(orig);
    size_t at = (size_t)(fingerprint_record(orig, len) - orig);
    uint32_t rl = cckey_get_le32(orig + CCKEY_ENTRY_RECLEN_AT);
    for (size_t bit = 0; bit < 256; bit += 7) {
        uint8_t *f = malloc(len);
        memcpy(f, orig, len);
        f[at + bit / 8] ^= (uint8_t)(1u << (bit % 8));
        cckey_entry_header(f, x.key, f + CCKEY_ENTRY_HEADER, rl, f + CCKEY_ENTRY_HEADER + rl,
                           len - CCKEY_ENTRY_HEADER - rl);
        FILE *o = fopen(path, "wb");
        cr_assert_not_null(o);
        cr_assert_eq(fwrite(f, 1, len, o), len);
        fclose(o);
        free(f);
        cr_assert_eq(get(s, &x, &x.good, &p), CCKEY_ERR_COLLISION, "bit %zu", bit);
        cr_assert_null(p);
    }
    free(orig);
    cckey_store_close(s);
}
