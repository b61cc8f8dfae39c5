/* Entry format v3 (records read back by hand against the documented layout,
 * checksum and header digests by OpenSSL) and the dependency rule: only the
 * entries that read a changed, removed or newly shadowing header miss; the
 * toolchain is checked; moving the suite keeps hits. */
#include "support.h"
#include "store/store_internal.h"

#include <criterion/criterion.h>
#include <openssl/evp.h>
#include <openssl/md5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char dir[64];
static char store_dir[200], src_dir[200], inc_dir[200];

static void put_text(const char *folder, const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", folder, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    mkdir(path, 0777);
    *slash = '/';
    cr_assert(cckey_test_write_file(path, text, strlen(text)), "%s", path);
}

static void setup(void)
{
    cr_assert(cckey_test_make_dir(dir, "deps"));
    snprintf(store_dir, sizeof store_dir, "%s/store", dir);
    char suite[200];
    cr_assert(cckey_test_sub_dir(suite, sizeof suite, dir, "suite"));
    cr_assert(cckey_test_sub_dir(src_dir, sizeof src_dir, suite, "src"));
    cr_assert(cckey_test_sub_dir(inc_dir, sizeof inc_dir, suite, "inc"));
    put_text(src_dir, "hdr.h", "#pragma once\n#include \"nested/inner.h\"\n#define HDR 1\n");
    put_text(src_dir, "nested/inner.h", "/* #include \"not_this.h\" */\n#define INNER 2\n");
    put_text(inc_dir, "common.h", "#define COMMON 3\n");
    put_text(src_dir, "other.h", "#define OTHER 4\n");
}
static void teardown(void) { cckey_test_remove_tree(dir); }
TestSuite(deps, .init = setup, .fini = teardown);

static const char SRC_A[] = "#include \"hdr.h\"\n#include <common.h>\n// #include \"commented.h\"\n"
                            "__kernel void a(void) {}\n";
static const char SRC_B[] = "#include \"other.h\"\n__kernel void b(void) {}\n";

static void md5_file(const char *path, uint8_t out[16])
{
    size_t len;
    char *text = cckey_test_read_file(path, &len);
    cr_assert_not_null(text, "%s", path);
    unsigned int n = 16;
    EVP_Digest(text, len, out, &n, EVP_md5(), NULL);
    free(text);
}

static const cckey_dep *find(const cckey_dep *d, size_t n, uint32_t root, const char *path)
{
    for (size_t i = 0; i < n; i++)
        if (d[i].root == root && strcmp(d[i].path, path) == 0) return &d[i];
    return NULL;
}

Test(deps, scan_follows_includes_through_the_roots)
{
    const char *roots[] = {src_dir, inc_dir};
    cckey_dep *d;
    size_t n;
    cr_assert_eq(cckey_deps_scan(SRC_A, strlen(SRC_A), roots, 2, NULL, &d, &n), CCKEY_OK, "%s", cckey_last_error());
    /* hdr.h in the source's folder; its nested include beside it; <common.h>
     * probed in root 0 first (absent), then found in root 1. Nothing from
     * comments. */
    char path[512];
    uint8_t want[16];
    const cckey_dep *h = find(d, n, 0, "hdr.h"), *in = find(d, n, 0, "nested/inner.h");
    const cckey_dep *miss = find(d, n, 0, "common.h"), *c = find(d, n, 1, "common.h");
    cr_assert(h && in && miss && c, "got %zu deps", n);
    cr_assert(h->present && in->present && c->present && !miss->present);
    snprintf(path, sizeof path, "%s/nested/inner.h", src_dir);
    md5_file(path, want);
    cr_assert_eq(memcmp(in->md5, want, 16), 0);
    snprintf(path, sizeof path, "%s/common.h", inc_dir);
    md5_file(path, want);
    cr_assert_eq(memcmp(c->md5, want, 16), 0);
    cr_assert_eq(c->size, strlen("#define COMMON 3\n"));
    cr_assert_null(find(d, n, 0, "commented.h"));
    cr_assert_null(find(d, n, 0, "not_this.h"));
    cr_assert_null(find(d, n, 0, "nested/not_this.h"));
    cr_assert_eq(n, 4);
    cckey_deps_free(d, n);
}

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t le32(const uint8_t *p) { return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

static char *entry_file(const char *key)
{
    static char path[512];
    cckey_test_entry_path(path, sizeof path, store_dir, key);
    return path;
}

static cckey_store *open_store(void)
{
    cckey_store *s;
    cr_assert_eq(cckey_store_open(&s, store_dir, 0), CCKEY_OK);
    return s;
}

static void write_bytes(const char *path, const void *p, size_t n)
{
    cr_assert(cckey_test_write_file(path, p, n), "%s", path);
}

Test(deps, records_follow_the_documented_layout)
{
    cckey_store *s = open_store();
    const char *opts[] = {"-DN=4", "-cl-fast-relaxed-math"};
    cckey_dep dep = {.root = 1, .path = "common.h", .present = 1, .size = 17};
    memset(dep.md5, 0xab, 16);
    cckey_entry_meta meta = {"OpenCL", "PoCL 9", opts, 2, &dep, 1, NULL};
    char key[CCKEY_KEY_LEN + 1];
    cckey_test_src_key(key, SRC_A);
    cr_assert_eq(cckey_store_put_meta(s, key, "BIN", 3, &meta), CCKEY_OK, "%s", cckey_last_error());
    size_t len;
    uint8_t *f = (uint8_t *)cckey_test_read_file(entry_file(key), &len);
    cr_assert_not_null(f);
    cr_assert_eq(le32(f + 8), 4);
    cr_assert_eq(le32(f + 176), 1, "one build");
    uint32_t r = le32(f + 172);
    cr_assert_eq(len, 192 + r + 3);
    cr_assert_eq(memcmp(f + 192 + r, "BIN", 3), 0);
    /* The records, in order: the build (its binary at 0, 3 bytes, built
     * now), then its compiler, version, options, the dependency. */
    const uint8_t *p = f + 192;
    cr_assert_eq(le16(p), 7); cr_assert_eq(le16(p + 2), 1); cr_assert_eq(le32(p + 4), 24);
    cr_assert_eq(le32(p + 8), 0); cr_assert_eq(le32(p + 16), 3);
    uint64_t built = le32(p + 24) | (uint64_t)le32(p + 28) << 32;
    cr_assert(built / 1000000000u + 60 > (uint64_t)time(NULL) && built / 1000000000u <= (uint64_t)time(NULL));
    p += 8 + 24;
    cr_assert_eq(le16(p), 1); cr_assert_eq(le16(p + 2), 0); cr_assert_eq(le32(p + 4), 6);
    cr_assert_eq(memcmp(p + 8, "OpenCL", 6), 0);
    p += 8 + 6;
    cr_assert_eq(le16(p), 2); cr_assert_eq(le32(p + 4), 6); cr_assert_eq(memcmp(p + 8, "PoCL 9", 6), 0);
    p += 8 + 6;
    cr_assert_eq(le16(p), 3); cr_assert_eq(le32(p + 4), 28);
    cr_assert_eq(memcmp(p + 8, "-DN=4\0-cl-fast-relaxed-math\0", 28), 0);
    p += 8 + 28;
    cr_assert_eq(le16(p), 4); cr_assert_eq(le16(p + 2), 1); cr_assert_eq(le32(p + 4), 32 + 8);
    cr_assert_eq(le32(p + 8), 1); cr_assert_eq(p[12], 1); cr_assert_eq(le32(p + 16), 17);
    cr_assert_eq(p[24], 0xab); cr_assert_eq(memcmp(p + 40, "common.h", 8), 0);
    cr_assert_eq(p + 48, f + 192 + r);
    uint8_t sum[16];
    memcpy(sum, f + 24, 16);
    cckey_test_entry_seal(f, len);
    cr_assert_eq(memcmp(sum, f + 24, 16), 0, "the checksum covers header, records and payload");
    free(f);
    cckey_store_close(s);
}

/* Put an entry for src with its scanned dependencies and toolchain. */
static void put_with_deps(cckey_store *s, const char *src, const char *const *roots, const char *version)
{
    cckey_dep *d;
    size_t n;
    cr_assert_eq(cckey_deps_scan(src, strlen(src), roots, 2, NULL, &d, &n), CCKEY_OK);
    cckey_entry_meta meta = {"OpenCL", version, NULL, 0, d, n, NULL};
    char key[CCKEY_KEY_LEN + 1];
    cckey_test_src_key(key, src);
    cr_assert_eq(cckey_store_put_meta(s, key, src, strlen(src), &meta), CCKEY_OK);
    cckey_deps_free(d, n);
}

static cckey_status get(cckey_store *s, const char *src, const char *const *roots, const char *version,
                        cckey_dep_memo *memo)
{
    cckey_lookup lk = {.compiler = "OpenCL", .version = version, .roots = roots, .n_roots = 2, .memo = memo};
    char key[CCKEY_KEY_LEN + 1];
    cckey_test_src_key(key, src);
    void *buf;
    size_t len;
    cckey_status st = cckey_store_get_checked(s, key, &lk, &buf, &len);
    if (st == CCKEY_OK) {
        cr_assert_eq(len, strlen(src));
        cr_assert_eq(memcmp(buf, src, len), 0);
    } else {
        cr_assert_null(buf);
    }
    cckey_store_free_buffer(buf);
    return st;
}

Test(deps, only_entries_that_read_a_changed_header_miss)
{
    cckey_store *s = open_store();
    cckey_dep_memo *memo;
    cr_assert_eq(cckey_dep_memo_new(&memo), CCKEY_OK);
    const char *roots[] = {src_dir, inc_dir};
    put_with_deps(s, SRC_A, roots, "1.0");
    put_with_deps(s, SRC_B, roots, "1.0");
    cr_assert_eq(get(s, SRC_A, roots, "1.0", memo), CCKEY_OK, "%s", cckey_last_error());
    cr_assert_eq(get(s, SRC_B, roots, "1.0", memo), CCKEY_OK);

    /* A nested header changes (same size, so the digest decides). */
    put_text(src_dir, "nested/inner.h", "/* #include \"not_this.h\" */\n#define INNER 9\n");
    cr_assert_eq(get(s, SRC_A, roots, "1.0", memo), CCKEY_ERR_STALE);
    cr_assert(strstr(cckey_last_error(), "nested/inner.h"), "%s", cckey_last_error());
    cr_assert_eq(get(s, SRC_B, roots, "1.0", memo), CCKEY_OK, "an unrelated entry stays a hit");
    /* The stale entry is kept until a put replaces it. */
    put_with_deps(s, SRC_A, roots, "1.0");
    cr_assert_eq(get(s, SRC_A, roots, "1.0", memo), CCKEY_OK);

    /* Another compiler version misses. */
    cr_assert_eq(get(s, SRC_A, roots, "1.1", memo), CCKEY_ERR_STALE);
    cr_assert(strstr(cckey_last_error(), "version"), "%s", cckey_last_error());

    /* A header that appears earlier in the search path shadows common.h. */
    put_text(src_dir, "common.h", "#define COMMON 99\n");
    cr_assert_eq(get(s, SRC_A, roots, "1.0", memo), CCKEY_ERR_STALE);
    cr_assert(strstr(cckey_last_error(), "appeared"), "%s", cckey_last_error());
    char path[512];
    snprintf(path, sizeof path, "%s/common.h", src_dir);
    unlink(path);
    cr_assert_eq(get(s, SRC_A, roots, "1.0", memo), CCKEY_OK);

    /* A removed nested include misses. */
    snprintf(path, sizeof path, "%s/nested/inner.h", src_dir);
    unlink(path);
    cr_assert_eq(get(s, SRC_A, roots, "1.0", memo), CCKEY_ERR_STALE);
    cr_assert(strstr(cckey_last_error(), "gone"), "%s", cckey_last_error());
    cr_assert_eq(get(s, SRC_B, roots, "1.0", memo), CCKEY_OK);
    cckey_dep_memo_free(memo);
    cckey_store_close(s);
}

Test(deps, a_moved_suite_still_hits)
{
    cckey_store *s = open_store();
    const char *roots[] = {src_dir, inc_dir};
    put_with_deps(s, SRC_A, roots, "1.0");
    char old_suite[200], new_suite[200], nsrc[256], ninc[256];
    snprintf(old_suite, sizeof old_suite, "%s/suite", dir);
    snprintf(new_suite, sizeof new_suite, "%s/moved", dir);
    cr_assert_eq(rename(old_suite, new_suite), 0);
    snprintf(nsrc, sizeof nsrc, "%s/src", new_suite);
    snprintf(ninc, sizeof ninc, "%s/inc", new_suite);
    const char *moved[] = {nsrc, ninc};
    cr_assert_eq(get(s, SRC_A, moved, "1.0", NULL), CCKEY_OK, "%s", cckey_last_error());
    /* The old roots no longer hold the headers. */
    cr_assert_eq(get(s, SRC_A, roots, "1.0", NULL), CCKEY_ERR_STALE);
    cckey_store_close(s);
}

/* Append a record to an entry file by hand, resealing it. */
static void append_record(const char *key, uint16_t type, uint16_t flags)
{
    size_t len;
    uint8_t *f = (uint8_t *)cckey_test_read_file(entry_file(key), &len);
    cr_assert_not_null(f);
    uint32_t r = le32(f + 172);
    uint8_t *g = malloc(len + 12);
    memcpy(g, f, 192 + r);
    uint8_t rec[12] = {(uint8_t)type, (uint8_t)(type >> 8), (uint8_t)flags, 0, 4, 0, 0, 0, 'x', 'y', 'z', 'w'};
    memcpy(g + 192 + r, rec, 12);
    memcpy(g + 192 + r + 12, f + 192 + r, len - 192 - r);
    r += 12;
    g[172] = (uint8_t)r, g[173] = (uint8_t)(r >> 8), g[174] = (uint8_t)(r >> 16), g[175] = (uint8_t)(r >> 24);
    cckey_test_entry_seal(g, len + 12);
    write_bytes(entry_file(key), g, len + 12);
    free(f), free(g);
}

Test(deps, unknown_records_are_skipped_unless_critical)
{
    cckey_store *s = open_store();
    const char *roots[] = {src_dir, inc_dir};
    char key[CCKEY_KEY_LEN + 1];
    cckey_test_src_key(key, SRC_B);
    put_with_deps(s, SRC_B, roots, "1.0");
    append_record(key, 77, 0);
    cr_assert_eq(get(s, SRC_B, roots, "1.0", NULL), CCKEY_OK, "%s", cckey_last_error());
    append_record(key, 78, CCKEY_REC_CRITICAL);
    cr_assert_eq(get(s, SRC_B, roots, "1.0", NULL), CCKEY_ERR_STALE);
    /* An unchecked get serves the payload; records are for checked look-ups. */
    void *buf;
    size_t len;
    cr_assert_eq(cckey_store_get(s, key, &buf, &len), CCKEY_OK);
    cckey_store_free_buffer(buf);
    /* Flag bits other than CRITICAL are malformed: the entry is corrupt. */
    append_record(key, 79, 2);
    cr_assert_eq(get(s, SRC_B, roots, "1.0", NULL), CCKEY_ERR_CORRUPT);
    cr_assert_eq(access(entry_file(key), F_OK), -1, "a corrupt entry is removed");
    cckey_store_close(s);
}

Test(deps, version_2_entries_are_still_read)
{
    cckey_store *s = open_store();
    char key[CCKEY_KEY_LEN + 1];
    cckey_test_src_key(key, SRC_B);
    /* Over one 4 KiB piece, so the two checksums differ. */
    size_t plen = 10000;
    uint8_t *bin = malloc(plen);
    for (size_t i = 0; i < plen; i++) bin[i] = (uint8_t)(i * 7 + 3);
    cr_assert_eq(cckey_store_put(s, key, bin, plen), CCKEY_OK);
    /* The same entry as version 2 wrote it: one MD5 over the whole payload. */
    size_t flen, len;
    uint8_t *f = (uint8_t *)cckey_test_read_file(entry_file(key), &flen);
    f[8] = 2;
    cckey_test_entry_seal(f, flen);
    write_bytes(entry_file(key), f, flen);
    void *buf;
    cr_assert_eq(cckey_store_get(s, key, &buf, &len), CCKEY_OK, "%s", cckey_last_error());
    cr_assert_eq(len, plen);
    cr_assert_eq(memcmp(buf, bin, plen), 0);
    cckey_store_free_buffer(buf);
    /* Sealed the version 3 way, a version 2 header fails its checksum. */
    f[8] = 3;
    cckey_test_entry_seal(f, flen);
    f[8] = 2;
    write_bytes(entry_file(key), f, flen);
    cr_assert_eq(cckey_store_get(s, key, &buf, &len), CCKEY_ERR_CORRUPT);
    cr_assert(strstr(cckey_last_error(), "checksum"), "%s", cckey_last_error());
    free(f), free(bin);
    cckey_store_close(s);
}

Test(deps, version_1_entries_are_misses)
{
    cckey_store *s = open_store();
    char key[CCKEY_KEY_LEN + 1];
    cckey_test_src_key(key, SRC_B);
    cr_assert_eq(cckey_store_put(s, key, "BIN", 3), CCKEY_OK);
    /* The same entry as version 1 wrote it: no record section. */
    size_t len;
    uint8_t *f = (uint8_t *)cckey_test_read_file(entry_file(key), &len);
    f[8] = 1;
    cckey_test_entry_seal(f, len);
    write_bytes(entry_file(key), f, len);
    free(f);
    void *buf;
    cr_assert_eq(cckey_store_get(s, key, &buf, &len), CCKEY_ERR_CORRUPT);
    cr_assert(strstr(cckey_last_error(), "version 1"), "%s", cckey_last_error());
    cr_assert_eq(cckey_store_get(s, key, &buf, &len), CCKEY_ERR_NOT_FOUND);
    cckey_store_close(s);
}
