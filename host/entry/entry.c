/* Entry files: names, the header, and the checks a read must pass. */
#include "entry.h"
#include "../core/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes a file read takes at a time; its steps of the payload must end on
 * piece boundaries. */
#define READ_STEP (1u << 20)
_Static_assert(READ_STEP % CCKEY_ENTRY_PIECE == 0, "read steps are whole pieces");

static bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

bool cckey_entry_key_ok(const char *key)
{
    if (!key) return false;
    for (size_t i = 0; i < CCKEY_KEY_LEN; i++) {
        bool colon = i % (CCKEY_HEX_LEN + 1) == CCKEY_HEX_LEN;
        if (colon ? key[i] != ':' : !is_hex(key[i])) return false;
    }
    return key[CCKEY_KEY_LEN] == '\0';
}

void cckey_entry_name_of(char name[CCKEY_NAME_LEN + 1], const char *key)
{
    for (size_t i = 0; i < CCKEY_KEY_LEN; i++) name[i] = key[i] == ':' ? '-' : key[i];
    name[CCKEY_NAME_LEN] = '\0';
}

bool cckey_entry_key_of(char key[CCKEY_KEY_LEN + 1], const char *name)
{
    if (strlen(name) != CCKEY_NAME_LEN) return false;
    for (size_t i = 0; i < CCKEY_KEY_LEN; i++) {
        if (name[i] == ':') return false;
        key[i] = name[i] == '-' ? ':' : name[i];
    }
    key[CCKEY_KEY_LEN] = '\0';
    return cckey_entry_key_ok(key);
}

void cckey_entry_shard_of(char shard[3], const char *key)
{
    uint8_t d[CCKEY_MD5_DIGEST];
    char hex[32];
    cckey_md5(key, CCKEY_KEY_LEN, d);
    cckey_hex(hex, d);
    shard[0] = hex[0], shard[1] = hex[1], shard[2] = '\0';
}

/* The fields of a header but its checksum. An encoded payload makes it
 * version 5, with the encoding and the stored length; else version 4. */
static void header_fields(uint8_t hdr[CCKEY_ENTRY_HEADER], const char *key, uint32_t rec_len, uint64_t len,
                          uint32_t variants, uint32_t encoding, uint64_t stored)
{
    memset(hdr, 0, CCKEY_ENTRY_HEADER);
    memcpy(hdr, CCKEY_ENTRY_MAGIC, 8);
    cckey_put_le32(hdr + 8, encoding ? CCKEY_ENTRY_VERSION : CCKEY_ENTRY_VERSION_PLAIN);
    if (encoding) {
        cckey_put_le32(hdr + CCKEY_ENTRY_ENCODING_AT, encoding);
        cckey_put_le64(hdr + CCKEY_ENTRY_STORED_AT, stored);
    }
    cckey_put_le32(hdr + 12, CCKEY_ENTRY_HEADER);
    cckey_put_le64(hdr + 16, len);
    memcpy(hdr + CCKEY_ENTRY_KEY_AT, key, CCKEY_KEY_LEN);
    cckey_put_le32(hdr + CCKEY_ENTRY_RECLEN_AT, rec_len);
    cckey_put_le32(hdr + CCKEY_ENTRY_VARIANTS_AT, variants);
}

/* The payload's part of the checksum (formats 3 and 4): the MD5 of each
 * CCKEY_ENTRY_PIECE-byte piece, in order, added to ctx. One MD5 is a single
 * dependency chain (about 600 MB/s here, slower than loopback Redis moves a
 * 100 KiB entry); independent pieces go through the multi-buffer kernels
 * side by side, 16 or 32 at once with AVX-512. n is a multiple of the piece
 * size except at the payload's end. */
static void sum_payload(cckey_md5_ctx *ctx, const uint8_t *p, size_t n)
{
    enum { BATCH = 64 };
    cckey_msg m[BATCH];
    uint8_t d[BATCH][CCKEY_MD5_DIGEST];
    while (n) {
        size_t k = 0;
        for (; k < BATCH && n; k++) {
            size_t step = n < CCKEY_ENTRY_PIECE ? n : CCKEY_ENTRY_PIECE;
            m[k] = (cckey_msg){p, step};
            p += step, n -= step;
        }
        cckey_md5_many(m, k, d);
        cckey_md5_update(ctx, d, k * CCKEY_MD5_DIGEST);
    }
}

void cckey_entry_header(uint8_t hdr[CCKEY_ENTRY_HEADER], const char *key, const void *records, uint32_t rec_len,
                        const void *payload, uint64_t len)
{
    cckey_entry_header_stored(hdr, key, records, rec_len, payload, len, CCKEY_ENCODING_NONE, len);
}

void cckey_entry_header_stored(uint8_t hdr[CCKEY_ENTRY_HEADER], const char *key, const void *records,
                               uint32_t rec_len, const void *payload, uint64_t len, uint32_t encoding,
                               uint64_t stored)
{
    header_fields(hdr, key, rec_len, len, cckey_variants_count(records, rec_len), encoding, stored);
    cckey_md5_ctx ctx;
    cckey_md5_init(&ctx);
    cckey_md5_update(&ctx, hdr, CCKEY_ENTRY_HEADER);
    cckey_md5_update(&ctx, records, rec_len);
    sum_payload(&ctx, payload, (size_t)len);
    cckey_md5_final(&ctx, hdr + CCKEY_ENTRY_SUM_AT);
}

/* Whether an entry's checksum takes its payload as piece digests (format 3 on)
 * or whole (format 2, still read). */
static bool payload_in_pieces(const uint8_t hdr[CCKEY_ENTRY_HEADER]) { return cckey_get_le32(hdr + 8) >= 3; }

/* Read exactly len bytes at off; false on a short file or an error. */
static bool read_at(int fd, void *buf, size_t len, uint64_t off, int *err)
{
    uint8_t *p = buf;
    while (len) {
        ssize_t n = pread(fd, p, len, (off_t)off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            *err = n < 0 ? errno : 0;
            return false;
        }
        p += n, len -= (size_t)n, off += (uint64_t)n;
    }
    return true;
}

/* A read_at that failed: an I/O error, or a file shorter than its header said. */
static cckey_status read_failed(int err)
{
    if (err) return cckey_fail(CCKEY_ERR_IO, "read: %s", strerror(err));
    return cckey_fail(CCKEY_ERR_CORRUPT, "truncated entry (shrank while read)");
}

/* Read n bytes at off into dst (or scratch, when dst is NULL) and add them
 * to the checksum (pieces: as the payload's piece digests); CCKEY_OK or why
 * not. */
static cckey_status read_summed(int fd, uint8_t *dst, uint64_t n, uint64_t off, cckey_md5_ctx *ctx, bool pieces)
{
    uint8_t *scratch = NULL;
    size_t step = READ_STEP;
    if (!dst && n && !(scratch = malloc(step))) return cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
    int err = 0;
    for (uint64_t at = 0; at < n;) {
        size_t k = n - at < step ? (size_t)(n - at) : step;
        uint8_t *p = dst ? dst + at : scratch;
        if (!read_at(fd, p, k, off + at, &err)) {
            free(scratch);
            return read_failed(err);
        }
        if (pieces) sum_payload(ctx, p, k);   /* k: whole pieces but at the end */
        else cckey_md5_update(ctx, p, k);
        at += k;
    }
    free(scratch);
    return CCKEY_OK;
}

/* A compressed payload: the frame of stored bytes at in decoded into
 * *plain (malloc'ed, plen bytes); CCKEY_ERR_CORRUPT when it does not decode
 * to exactly that. */
static cckey_status decode(const uint8_t *in, uint64_t stored, uint64_t plen, uint8_t **plain)
{
    *plain = malloc(plen ? (size_t)plen : 1);
    if (!*plain) return cckey_fail(CCKEY_ERR_NO_MEMORY, "no memory for a %llu-byte payload", (unsigned long long)plen);
    cckey_status s = cckey_decompress(in, (size_t)stored, *plain, (size_t)plen);
    if (s != CCKEY_OK) free(*plain), *plain = NULL;
    return s;
}

/* A compressed payload in the file: its stored bytes at off read whole,
 * decoded into dst (plen bytes; a scratch buffer when dst is NULL), and
 * added to the checksum as the plain payload's piece digests. */
static cckey_status read_compressed(int fd, uint8_t *dst, uint64_t plen, uint64_t stored, uint64_t off,
                                    cckey_md5_ctx *ctx)
{
    uint8_t *in = malloc(stored ? (size_t)stored : 1), *plain = NULL;
    if (!in) return cckey_fail(CCKEY_ERR_NO_MEMORY, "no memory for a %llu-byte entry", (unsigned long long)stored);
    int err = 0;
    cckey_status s = read_at(fd, in, (size_t)stored, off, &err) ? decode(in, stored, plen, &plain) : read_failed(err);
    free(in);
    if (s != CCKEY_OK) return s;
    sum_payload(ctx, plain, (size_t)plen);
    if (dst && plen) memcpy(dst, plain, (size_t)plen);
    free(plain);
    return CCKEY_OK;
}

/* The fixed header's checks; fills *rec_len, *plen and *stored (the
 * payload's length in the file). */
static cckey_status check_header(const uint8_t hdr[CCKEY_ENTRY_HEADER], const char *key, uint64_t size,
                                 uint32_t *rec_len, uint64_t *plen, uint64_t *stored)
{
    if (memcmp(hdr, CCKEY_ENTRY_MAGIC, 8) != 0) return cckey_fail(CCKEY_ERR_CORRUPT, "not an entry (bad magic)");
    if (!cckey_entry_version_read(cckey_get_le32(hdr + 8)))
        return cckey_fail(CCKEY_ERR_CORRUPT, "entry format version %u, not %u (a miss: rebuilt on the next put)",
                          cckey_get_le32(hdr + 8), CCKEY_ENTRY_VERSION);
    if (cckey_get_le32(hdr + 12) != CCKEY_ENTRY_HEADER) return cckey_fail(CCKEY_ERR_CORRUPT, "bad header size");
    if (memcmp(hdr + CCKEY_ENTRY_KEY_AT, key, CCKEY_KEY_LEN) != 0)
        return cckey_fail(CCKEY_ERR_CORRUPT, "entry holds another key");
    if (cckey_get_le32(hdr + 8) >= 5 && cckey_entry_encoding(hdr) != CCKEY_ENCODING_ZSTD)
        return cckey_fail(CCKEY_ERR_CORRUPT, "unknown payload encoding %u", cckey_entry_encoding(hdr));
    *rec_len = cckey_get_le32(hdr + CCKEY_ENTRY_RECLEN_AT);
    *plen = cckey_get_le64(hdr + 16);
    *stored = cckey_entry_stored_len(hdr);
    if (*rec_len > CCKEY_ENTRY_MAX_RECORDS) return cckey_fail(CCKEY_ERR_CORRUPT, "record section too large");
    uint64_t body = size - CCKEY_ENTRY_HEADER;
    if (*rec_len > body || *stored != body - *rec_len)
        return cckey_fail(CCKEY_ERR_CORRUPT, "entry of %llu bytes, header says %llu (truncated?)",
                          (unsigned long long)size,
                          (unsigned long long)(CCKEY_ENTRY_HEADER + (uint64_t)*rec_len + *stored));
    if (*plen > SIZE_MAX - 1) return cckey_fail(CCKEY_ERR_NO_MEMORY, "entry too large for this process");
    return CCKEY_OK;
}

/* The header's checks, then the checksum started over the header as written
 * (its sum field zeroed): what a file read and an in-memory check share. */
static cckey_status start_checks(const uint8_t hdr[CCKEY_ENTRY_HEADER], const char *key, uint64_t size,
                                 uint32_t *rlen, uint64_t *plen, uint64_t *stored, cckey_md5_ctx *ctx)
{
    cckey_status s = check_header(hdr, key, size, rlen, plen, stored);
    if (s != CCKEY_OK) return s;
    uint8_t want[CCKEY_ENTRY_HEADER];
    uint32_t version = cckey_get_le32(hdr + 8);
    /* Versions 2 and 3 are checked as written: no build count. */
    header_fields(want, key, *rlen, *plen, version >= 4 ? cckey_get_le32(hdr + CCKEY_ENTRY_VARIANTS_AT) : 0,
                  cckey_entry_encoding(hdr), *stored);
    cckey_put_le32(want + 8, version);
    memcpy(want + CCKEY_ENTRY_SUM_AT, hdr + CCKEY_ENTRY_SUM_AT, CCKEY_MD5_DIGEST);
    if (memcmp(want, hdr, CCKEY_ENTRY_HEADER) != 0) return cckey_fail(CCKEY_ERR_CORRUPT, "header padding is not zero");
    memset(want + CCKEY_ENTRY_SUM_AT, 0, CCKEY_MD5_DIGEST);
    cckey_md5_init(ctx);
    cckey_md5_update(ctx, want, CCKEY_ENTRY_HEADER);
    return CCKEY_OK;
}

cckey_status cckey_entry_check_head(const uint8_t hdr[CCKEY_ENTRY_HEADER], const char *key, uint64_t *total)
{
    uint32_t rlen = cckey_get_le32(hdr + CCKEY_ENTRY_RECLEN_AT);
    uint64_t plen, stored = cckey_entry_stored_len(hdr);
    if (rlen > CCKEY_ENTRY_MAX_RECORDS) return cckey_fail(CCKEY_ERR_CORRUPT, "record section too large");
    if (stored > UINT64_MAX - CCKEY_ENTRY_HEADER - rlen) return cckey_fail(CCKEY_ERR_CORRUPT, "entry sizes overflow");
    *total = CCKEY_ENTRY_HEADER + (uint64_t)rlen + stored;
    cckey_md5_ctx unused;
    return start_checks(hdr, key, *total, &rlen, &plen, &stored, &unused);
}

/* The records as the header describes them. */
static cckey_records records_of(const uint8_t hdr[CCKEY_ENTRY_HEADER], uint8_t *records, uint32_t rlen)
{
    return (cckey_records){records, rlen, cckey_get_le32(hdr + 8), cckey_get_le32(hdr + CCKEY_ENTRY_VARIANTS_AT)};
}

/* The checksum finished and compared, then the records' form and the
 * builds they describe. */
static cckey_status finish_checks(const uint8_t hdr[CCKEY_ENTRY_HEADER], cckey_md5_ctx *ctx, const uint8_t *records,
                                  uint32_t rlen)
{
    uint8_t sum[CCKEY_MD5_DIGEST];
    cckey_md5_final(ctx, sum);
    if (memcmp(sum, hdr + CCKEY_ENTRY_SUM_AT, CCKEY_MD5_DIGEST) != 0)
        return cckey_fail(CCKEY_ERR_CORRUPT, "checksum mismatch");
    cckey_status st = cckey_records_check_form(records, rlen);
    if (st != CCKEY_OK) return st;
    cckey_records r = records_of(hdr, (uint8_t *)records, rlen);
    cckey_variant *v;
    uint32_t n;
    st = cckey_variants_split(&r, cckey_get_le64(hdr + 16), &v, &n);
    free(v);
    return st;
}

cckey_status cckey_entry_read(int fd, const char *key, void **payload, size_t *len, cckey_records *rec)
{
    if (payload) *payload = NULL;
    if (rec) *rec = (cckey_records){0};
    struct stat st;
    if (fstat(fd, &st) != 0) return cckey_fail(CCKEY_ERR_IO, "stat: %s", strerror(errno));
    uint64_t size = (uint64_t)st.st_size;
    if (size < CCKEY_ENTRY_HEADER)
        return cckey_fail(CCKEY_ERR_CORRUPT, "truncated entry: %llu bytes, less than its header",
                          (unsigned long long)size);
    uint8_t hdr[CCKEY_ENTRY_HEADER];
    int err = 0;
    if (!read_at(fd, hdr, sizeof hdr, 0, &err)) return read_failed(err);
    uint32_t rlen = 0;
    uint64_t plen = 0, stored = 0;
    cckey_md5_ctx ctx;
    cckey_status s = start_checks(hdr, key, size, &rlen, &plen, &stored, &ctx);
    if (s != CCKEY_OK) return s;

    uint8_t *records = malloc(rlen ? rlen : 1), *out = NULL;
    if (!records) return cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
    if (payload && !(out = malloc(plen ? (size_t)plen : 1))) {
        free(records);
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "no memory for a %llu-byte entry", (unsigned long long)plen);
    }
    s = read_summed(fd, records, rlen, CCKEY_ENTRY_HEADER, &ctx, false);
    uint64_t at = CCKEY_ENTRY_HEADER + (uint64_t)rlen;
    if (s == CCKEY_OK)
        s = cckey_entry_encoding(hdr) ? read_compressed(fd, out, plen, stored, at, &ctx)
                             : read_summed(fd, out, plen, at, &ctx, payload_in_pieces(hdr));
    if (s == CCKEY_OK) s = finish_checks(hdr, &ctx, records, rlen);
    if (s != CCKEY_OK) {
        free(out), free(records);
        return s;
    }
    if (payload) *payload = out;
    if (len) *len = (size_t)plen;
    if (rec) *rec = records_of(hdr, records, rlen);
    else free(records);
    return CCKEY_OK;
}

cckey_status cckey_entry_check_parts(const cckey_entry_got *e, const char *key, cckey_entry_view *out)
{
    size_t n = e->front_len + e->len;
    if (e->front_len < CCKEY_ENTRY_HEADER)
        return cckey_fail(CCKEY_ERR_CORRUPT, "truncated entry: %zu bytes, less than its header", n);
    uint32_t rlen = 0;
    uint64_t plen = 0, stored = 0;
    cckey_md5_ctx ctx;
    cckey_status s = start_checks(e->front, key, n, &rlen, &plen, &stored, &ctx);
    if (s != CCKEY_OK) return s;
    const uint8_t *rec = e->front + CCKEY_ENTRY_HEADER, *payload = e->len ? e->payload : rec + rlen;
    /* The payload is in one place: after the records, or all of e->payload. */
    if (e->len && e->front_len != CCKEY_ENTRY_HEADER + (size_t)rlen)
        return cckey_fail(CCKEY_ERR_CORRUPT, "entry received split at %zu, not after its records", e->front_len);
    uint8_t *owned = NULL;
    if (cckey_entry_encoding(e->front) && (s = decode(payload, stored, plen, &owned)) != CCKEY_OK) return s;
    if (owned) payload = owned;
    cckey_md5_update(&ctx, rec, rlen);
    if (payload_in_pieces(e->front)) sum_payload(&ctx, payload, (size_t)plen);
    else cckey_md5_update(&ctx, payload, (size_t)plen);
    s = finish_checks(e->front, &ctx, rec, rlen);
    if (s == CCKEY_OK && out)
        *out = (cckey_entry_view){rec, rlen, payload, (size_t)plen, cckey_get_le32(e->front + 8),
                                  cckey_get_le32(e->front + CCKEY_ENTRY_VARIANTS_AT), owned};
    else free(owned);
    return s;
}

cckey_status cckey_entry_check(const uint8_t *entry, size_t n, const char *key, size_t *payload_at)
{
    cckey_entry_got e = {(uint8_t *)entry, n, NULL, 0};
    cckey_entry_view v = {0};
    cckey_status s = cckey_entry_check_parts(&e, key, &v);
    if (s == CCKEY_OK && payload_at) *payload_at = CCKEY_ENTRY_HEADER + (size_t)v.rec_len;
    free(v.owned);
    return s;
}

cckey_status cckey_entry_make_plain(uint8_t **entry, size_t *n, const char *key)
{
    cckey_entry_got e = {*entry, *n, NULL, 0};
    cckey_entry_view v = {0};
    cckey_status s = cckey_entry_check_parts(&e, key, &v);
    if (s != CCKEY_OK || !v.owned) return s;
    size_t total = CCKEY_ENTRY_HEADER + (size_t)v.rec_len + v.len;
    uint8_t *plain = malloc(total);
    if (!plain) {
        free(v.owned);
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
    }
    memcpy(plain + CCKEY_ENTRY_HEADER, v.rec, v.rec_len);
    if (v.len) memcpy(plain + CCKEY_ENTRY_HEADER + v.rec_len, v.owned, v.len);
    cckey_entry_header(plain, key, plain + CCKEY_ENTRY_HEADER, v.rec_len, v.owned, v.len);
    free(v.owned), free(*entry);
    *entry = plain, *n = total;
    return CCKEY_OK;
}

size_t cckey_entry_front_len(const uint8_t *head, size_t total)
{
    if (total < CCKEY_ENTRY_HEADER) return total;
    uint32_t rlen = cckey_get_le32(head + CCKEY_ENTRY_RECLEN_AT);
    /* A header that cannot be split after is not split: the whole entry
     * goes in front, and the checks then say what is wrong with it. */
    if (rlen > CCKEY_ENTRY_MAX_RECORDS || rlen > total - CCKEY_ENTRY_HEADER) return total;
    return CCKEY_ENTRY_HEADER + (size_t)rlen;
}

void cckey_entry_got_free(cckey_entry_got *e)
{
    free(e->front), free(e->payload);
    e->front = e->payload = NULL;
}

bool cckey_entry_write_all(int fd, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n == 0) errno = EIO;
            return false;
        }
        p += n, len -= (size_t)n;
    }
    return true;
}
