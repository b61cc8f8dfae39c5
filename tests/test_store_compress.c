/* Compressed entries (format 5): the file read back by hand against the
 * documented header, its frame decoded by libzstd itself and its checksum
 * computed with OpenSSL (the oracles); exact bytes back; format 4 entries
 * read by a compressing handle and format 5 by a plain one; damaged frames
 * are misses that verify removes; builds of one key kept across compressed
 * puts; a write that runs out of room leaves no file behind. */
#include "support.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <openssl/evp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <zstd.h>

static char dir[64];

static void make_dir(void) { cr_assert(cckey_test_make_dir(dir, "zstd")); }
static void remove_dir(void) { cckey_test_remove_tree(dir); }

TestSuite(compress, .init = make_dir, .fini = remove_dir);

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* Text-like bytes (a compiler's output compresses the same way): words
 * from a small vocabulary with random numbers between them. */
static uint8_t *compressible(uint64_t *seed, size_t len)
{
    static const char *words[] = {"ld.global.f32 ", "mad.lo.s32 ", "%r", "bra LBB0_", "\n\t", "st.shared.u64 "};
    uint8_t *p = malloc(len + 1);
    for (size_t i = 0; i < len;) {
        char w[32];
        int n = snprintf(w, sizeof w, "%s%u", words[cckey_test_below(seed, 6)], (unsigned)cckey_test_below(seed, 64));
        for (int k = 0; k < n && i < len; k++) p[i++] = (uint8_t)w[k];
    }
    return p;
}

static cckey_store *open_store(bool zstd)
{
    cckey_store *s;
    cr_assert_eq(cckey_store_open(&s, dir, 0), CCKEY_OK, "%s", cckey_last_error());
    if (zstd) cr_assert_eq(cckey_store_set_compression(s, CCKEY_COMPRESSION_ZSTD, 3), CCKEY_OK, "%s", cckey_last_error());
    return s;
}

static uint8_t *entry_file(const char *key, size_t *len)
{
    char path[512];
    cckey_test_entry_path(path, sizeof path, dir, key);
    uint8_t *file = (uint8_t *)cckey_test_read_file(path, len);
    cr_assert_not_null(file, "%s: %s", path, strerror(errno));
    return file;
}

static void rewrite_entry(const char *key, const void *data, size_t len)
{
    char path[512];
    cckey_test_entry_path(path, sizeof path, dir, key);
    cr_assert(cckey_test_write_file(path, data, len));
}

/* The documented checksum of a format 5 entry, by OpenSSL: MD5 over the
 * header (sum zeroed), the records, then each 4096-byte piece's MD5 of the
 * payload uncompressed. */
static void oracle_sum(const uint8_t *file, const uint8_t *plain, size_t plen, uint8_t out[16])
{
    uint8_t hdr[192], d[16];
    memcpy(hdr, file, 192);
    memset(hdr + 24, 0, 16);
    uint32_t rlen = (uint32_t)le(file + 172, 4);
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    EVP_DigestInit_ex(c, EVP_md5(), NULL);
    EVP_DigestUpdate(c, hdr, 192);
    EVP_DigestUpdate(c, file + 192, rlen);
    for (size_t at = 0; at < plen; at += 4096) {
        size_t n = plen - at < 4096 ? plen - at : 4096;
        EVP_Digest(plain + at, n, d, NULL, EVP_md5(), NULL);
        EVP_DigestUpdate(c, d, 16);
    }
    EVP_DigestFinal_ex(c, out, NULL);
    EVP_MD_CTX_free(c);
}

static void expect_get(cckey_store *s, const char *key, const void *data, size_t len)
{
    void *buf;
    size_t n;
    cr_assert_eq(cckey_store_get(s, key, &buf, &n), CCKEY_OK, "%s", cckey_last_error());
    cr_assert_eq(n, len);
    cr_assert(len == 0 || memcmp(buf, data, len) == 0, "get returned other bytes");
    cckey_store_free_buffer(buf);
}

Test(compress, format_5_on_disk_and_exact_bytes_back)
{
    uint64_t seed = 5;
    cckey_store *s = open_store(true);
    size_t sizes[] = {4096, 3 * 4096 + 5, (1u << 20) + 17, (3u << 20) + 1};
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
        char key[CCKEY_KEY_LEN + 1];
        cckey_test_store_key(key, (int)t);
        uint8_t *data = compressible(&seed, sizes[t]);
        cr_assert_eq(cckey_store_put(s, key, data, sizes[t]), CCKEY_OK, "%s", cckey_last_error());
        size_t flen;
        uint8_t *file = entry_file(key, &flen);
        cr_assert_eq(memcmp(file, "CCKEYBIN", 8), 0);
        cr_assert_eq(le(file + 8, 4), 5, "compressed entries are format 5");
        cr_assert_eq(le(file + 16, 8), sizes[t], "the header holds the payload's own length");
        cr_assert_eq(le(file + 180, 4), 1, "encoding 1: zstd");
        uint64_t stored = le(file + 184, 8);
        cr_assert_eq(flen, 192 + stored);
        cr_assert_lt(stored, sizes[t] / 2, "%zu bytes of text stored in %llu", sizes[t], (unsigned long long)stored);
        /* libzstd itself decodes the stored frame to the payload. */
        uint8_t *plain = malloc(sizes[t]);
        cr_assert_eq(ZSTD_getFrameContentSize(file + 192, stored), sizes[t]);
        cr_assert_eq(ZSTD_decompress(plain, sizes[t], file + 192, stored), sizes[t]);
        cr_assert_eq(memcmp(plain, data, sizes[t]), 0);
        uint8_t sum[16];
        oracle_sum(file, plain, sizes[t], sum);
        cr_assert_eq(memcmp(sum, file + 24, 16), 0, "checksum over the uncompressed payload");
        expect_get(s, key, data, sizes[t]);
        free(plain), free(file), free(data);
    }
    cckey_store_close(s);
}

Test(compress, incompressible_and_tiny_payloads_stay_format_4)
{
    uint64_t seed = 9;
    cckey_store *s = open_store(true);
    size_t sizes[] = {0, 10, 65536};
    for (size_t t = 0; t < 3; t++) {
        char key[CCKEY_KEY_LEN + 1];
        cckey_test_store_key(key, (int)t);
        uint8_t *data = malloc(sizes[t] + 1);
        cckey_test_fill(&seed, data, sizes[t]);   /* random: zstd cannot shrink it */
        cr_assert_eq(cckey_store_put(s, key, data, sizes[t]), CCKEY_OK);
        size_t flen;
        uint8_t *file = entry_file(key, &flen);
        cr_assert_eq(le(file + 8, 4), 4);
        cr_assert_eq(flen, 192 + sizes[t]);
        for (int i = 180; i < 192; i++) cr_assert_eq(file[i], 0);
        expect_get(s, key, data, sizes[t]);
        free(file), free(data);
    }
    cckey_store_close(s);
}

Test(compress, either_handle_reads_both_formats)
{
    uint64_t seed = 2;
    char plain_key[CCKEY_KEY_LEN + 1], packed_key[CCKEY_KEY_LEN + 1];
    cckey_test_store_key(plain_key, 1);
    cckey_test_store_key(packed_key, 2);
    uint8_t *a = compressible(&seed, 200000), *b = compressible(&seed, 300000);
    cckey_store *plain = open_store(false), *packed = open_store(true);
    cr_assert_eq(cckey_store_put(plain, plain_key, a, 200000), CCKEY_OK);
    cr_assert_eq(cckey_store_put(packed, packed_key, b, 300000), CCKEY_OK);
    expect_get(packed, plain_key, a, 200000);   /* format 4 under a compressing handle */
    expect_get(plain, packed_key, b, 300000);   /* format 5 under a plain one */
    size_t n;
    uint8_t *file = entry_file(plain_key, &n);
    cr_assert_eq(le(file + 8, 4), 4, "a read does not rewrite the entry");
    free(file);
    /* Through cckey.conf, as every writer of the folder sees it. */
    char conf[128];
    snprintf(conf, sizeof conf, "%s/cckey.conf", dir);
    const char text[] = "# shared\ncompression = zstd\ncompression_level = 19\n";
    cr_assert(cckey_test_write_file(conf, text, sizeof text - 1));
    cckey_store *configured = open_store(false);
    cr_assert_eq(cckey_store_put(configured, plain_key, a, 200000), CCKEY_OK);
    file = entry_file(plain_key, &n);
    cr_assert_eq(le(file + 8, 4), 5, "compression = zstd in cckey.conf");
    free(file);
    cckey_store_close(configured), cckey_store_close(plain), cckey_store_close(packed);
    free(a), free(b);
}

/* Put a compressed entry, spoil it with f, and expect a corrupt miss that
 * leaves nothing behind, then the same spoilt file removed by verify. */
static void expect_spoilt_removed(void (*spoil)(uint8_t *file, size_t *n, const uint8_t *data, size_t len),
                                  const char *what)
{
    uint64_t seed = 77;
    char key[CCKEY_KEY_LEN + 1];
    cckey_test_store_key(key, 3);
    size_t len = 500000;
    uint8_t *data = compressible(&seed, len);
    cckey_store *s = open_store(true);
    for (int round = 0; round < 2; round++) {
        cr_assert_eq(cckey_store_put(s, key, data, len), CCKEY_OK);
        size_t n;
        uint8_t *file = entry_file(key, &n);
        uint8_t *grown = realloc(file, n + 1024);
        spoil(grown, &n, data, len);
        rewrite_entry(key, grown, n);
        free(grown);
        if (round == 0) {
            void *buf = NULL;
            size_t got;
            cr_assert_eq(cckey_store_get(s, key, &buf, &got), CCKEY_ERR_CORRUPT, "%s: a miss", what);
            cr_assert_null(buf);
            cr_assert_eq(cckey_store_get(s, key, &buf, &got), CCKEY_ERR_NOT_FOUND, "%s: removed", what);
        } else {
            cckey_store_report r;
            cr_assert_eq(cckey_store_verify(s, &r), CCKEY_OK);
            cr_assert_eq(r.removed, 1, "%s: verify removes it", what);
            cr_assert_eq(r.ok, 0);
        }
    }
    cckey_store_close(s);
    free(data);
}

static void flip_in_frame(uint8_t *file, size_t *n, const uint8_t *data, size_t len)
{
    (void)data, (void)len;
    file[192 + (*n - 192) / 2] ^= 0x40;
}

/* A whole, valid zstd frame of other bytes of the same length, the
 * header's stored length and the file size made to match it. */
static void other_frame(uint8_t *file, size_t *n, const uint8_t *data, size_t len)
{
    uint8_t *other = malloc(len);
    memcpy(other, data, len);
    other[len / 3] ^= 1;
    size_t cap = ZSTD_compressBound(len);
    uint8_t *frame = malloc(cap);
    size_t fl = ZSTD_compress(frame, cap, other, len, 3);
    cr_assert(!ZSTD_isError(fl) && fl <= *n - 192 + 1024);
    memcpy(file + 192, frame, fl);
    put_le(file + 184, fl, 8);
    *n = 192 + fl;
    free(other), free(frame);
}

/* A frame that says it holds one byte more than the header's length. */
static void longer_frame(uint8_t *file, size_t *n, const uint8_t *data, size_t len)
{
    uint8_t *more = malloc(len + 1);
    memcpy(more, data, len);
    more[len] = 'x';
    size_t cap = ZSTD_compressBound(len + 1);
    uint8_t *frame = malloc(cap);
    size_t fl = ZSTD_compress(frame, cap, more, len + 1, 3);
    cr_assert(fl <= *n - 192 + 1024);
    memcpy(file + 192, frame, fl);
    put_le(file + 184, fl, 8);
    *n = 192 + fl;
    free(more), free(frame);
}

static void unknown_encoding(uint8_t *file, size_t *n, const uint8_t *data, size_t len)
{
    (void)n, (void)data, (void)len;
    put_le(file + 180, 2, 4);
}

Test(compress, a_flipped_byte_in_the_frame_is_a_miss_verify_removes) { expect_spoilt_removed(flip_in_frame, "flip"); }
Test(compress, a_frame_of_other_bytes_is_a_miss_verify_removes) { expect_spoilt_removed(other_frame, "other"); }
Test(compress, a_frame_of_another_length_is_a_miss_verify_removes) { expect_spoilt_removed(longer_frame, "length"); }
Test(compress, an_unknown_encoding_is_a_miss_verify_removes) { expect_spoilt_removed(unknown_encoding, "encoding"); }

Test(compress, builds_of_one_key_survive_compressed_puts)
{
    uint64_t seed = 11;
    char key[CCKEY_KEY_LEN + 1];
    cckey_test_store_key(key, 4);
    cckey_store *s = open_store(true);
    uint8_t *bin[3];
    const char *versions[] = {"1.0", "2.0", "3.0"};
    for (int i = 0; i < 3; i++) {
        bin[i] = compressible(&seed, 100000);
        cckey_entry_meta m = {.compiler = "OpenCL", .version = versions[i]};
        cr_assert_eq(cckey_store_put_meta(s, key, bin[i], 100000, &m), CCKEY_OK, "%s", cckey_last_error());
    }
    for (int i = 0; i < 3; i++) {
        cckey_lookup lk = {.compiler = "OpenCL", .version = versions[i]};
        void *buf;
        size_t n;
        cr_assert_eq(cckey_store_get_checked(s, key, &lk, &buf, &n), CCKEY_OK, "build %d: %s", i, cckey_last_error());
        cr_assert(n == 100000 && memcmp(buf, bin[i], n) == 0, "build %d", i);
        cckey_store_free_buffer(buf);
        free(bin[i]);
    }
    size_t flen;
    uint8_t *file = entry_file(key, &flen);
    cr_assert_eq(le(file + 8, 4), 5);
    cr_assert_eq(le(file + 176, 4), 3, "three builds in one compressed entry");
    free(file);
    cckey_store_close(s);
}

/* Only the folder's own files: no entry, no temporary file. */
static size_t files_in_shards(void)
{
    size_t n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strlen(e->d_name) != 2 || e->d_name[0] == '.') continue;   /* the shard folders: two hex digits */
        char sub[200];
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        DIR *s = opendir(sub);
        struct dirent *f;
        while (s && (f = readdir(s)))
            if (f->d_name[0] != '.' || strncmp(f->d_name, ".tmp-", 5) == 0) n++;
        if (s) closedir(s);
    }
    if (d) closedir(d);
    return n;
}

Test(compress, a_full_disk_while_compressing_leaves_no_partial_file)
{
    uint64_t seed = 13;
    char key[CCKEY_KEY_LEN + 1];
    cckey_test_store_key(key, 6);
    cckey_store *s = open_store(true);
    size_t small = 8192, big = 8u << 20;
    uint8_t *old = compressible(&seed, small), *data = malloc(big);
    cr_assert_eq(cckey_store_put(s, key, old, small), CCKEY_OK);
    /* Half random, half text: about 5 MiB compressed, more than the room. */
    cckey_test_fill(&seed, data, big / 2);
    uint8_t *text = compressible(&seed, big / 2);
    memcpy(data + big / 2, text, big / 2);
    free(text);
    /* No file may grow past 1 MiB in this process (the test's own): what a
     * full disk does to a write, ENOSPC or EFBIG, without filling one. */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {1u << 20, 1u << 20};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0, "%s", strerror(errno));
    cr_assert_eq(cckey_store_put(s, key, data, big), CCKEY_ERR_IO);
    cr_assert(strstr(cckey_last_error(), "writing"), "%s", cckey_last_error());
    size_t left = files_in_shards();
    cr_assert_eq(left, 1, "the old entry alone: no temporary file left (%zu files)", left);
    expect_get(s, key, old, small);   /* the old entry, whole */
    cckey_store_close(s);
    free(old), free(data);
}
