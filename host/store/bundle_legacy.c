/* Bundles of the first releases (CCKEYBND), still imported; new bundles
 * are tar archives (bundle_tar.c).
 *
 * Layout, little-endian:
 *   "CCKEYBND" | u32 version (1) | u32 0
 *   per entry:  'E' | the key (131 bytes) | u64 length | the entry file's bytes
 *   trailer:    'Z' | u64 entries | MD5 of every byte before the trailer
 * Entries are whole entry files, so each is checked on import exactly as a
 * local get checks it; the trailer catches a cut or damaged stream. */
#include "store_internal.h"
#include "../core/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUNDLE_VERSION 1u

typedef struct in_stream {
    int fd;
    cckey_md5_ctx md5;
} in_stream;

/* Exactly n bytes, or false (end of stream or an error: errno, 0 at the end). */
static bool take(in_stream *in, void *p, size_t n, bool hash)
{
    uint8_t *b = p;
    for (size_t got = 0; got < n;) {
        ssize_t r = read(in->fd, b + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            if (r == 0) errno = 0;
            return false;
        }
        got += (size_t)r;
    }
    if (hash) cckey_md5_update(&in->md5, p, n);
    return true;
}

static cckey_status cut(void)
{
    if (errno) return cckey_fail(CCKEY_ERR_IO, "reading the bundle: %s", strerror(errno));
    return cckey_fail(CCKEY_ERR_CORRUPT, "the bundle ends early (cut short?)");
}

/* One entry after its tag: installed, or counted as refused. */
static cckey_status import_entry(cckey_store *s, in_stream *in, unsigned flags, cckey_import_report *r)
{
    char key[CCKEY_KEY_LEN + 1] = "";
    uint8_t len[8];
    if (!take(in, key, CCKEY_KEY_LEN, true) || !take(in, len, 8, true)) return cut();
    uint64_t n = cckey_get_le64(len);
    if (n > ((uint64_t)1 << 40)) return cckey_fail(CCKEY_ERR_CORRUPT, "the bundle names a %llu-byte entry",
                                                    (unsigned long long)n);
    void *entry = malloc(n ? (size_t)n : 1);
    if (!entry) return cckey_fail(CCKEY_ERR_NO_MEMORY, "no memory for a %llu-byte entry", (unsigned long long)n);
    cckey_status st = take(in, entry, (size_t)n, true) ? cckey_bundle_keep(s, key, entry, (size_t)n, flags, r) : cut();
    free(entry);
    return st;
}

cckey_status cckey_bundle_read_legacy(cckey_store *s, int fd, const uint8_t head[16], unsigned flags,
                                      cckey_import_report *r)
{
    in_stream in = {.fd = fd};
    cckey_md5_init(&in.md5);
    cckey_md5_update(&in.md5, head, 16);
    if (cckey_get_le32(head + 8) != BUNDLE_VERSION)
        return cckey_fail(CCKEY_ERR_CORRUPT, "bundle format version %u, not %u", cckey_get_le32(head + 8),
                          BUNDLE_VERSION);
    cckey_status st = CCKEY_OK;
    for (;;) {
        uint8_t tag;
        if (!take(&in, &tag, 1, true)) {
            st = cut();
            break;
        }
        if (tag == 'E') {
            if ((st = import_entry(s, &in, flags, r)) != CCKEY_OK) break;
            continue;
        }
        uint8_t tail[8 + CCKEY_MD5_DIGEST], sum[CCKEY_MD5_DIGEST];
        if (tag != 'Z') {
            st = cckey_fail(CCKEY_ERR_CORRUPT, "damaged bundle (unknown record)");
        } else if (!take(&in, tail, 8, true) || !take(&in, tail + 8, CCKEY_MD5_DIGEST, false)) {
            st = cut();
        } else {
            cckey_md5_final(&in.md5, sum);
            if (memcmp(sum, tail + 8, CCKEY_MD5_DIGEST) != 0)
                st = cckey_fail(CCKEY_ERR_CORRUPT, "damaged bundle (checksum mismatch)");
            else if (cckey_get_le64(tail) != r->imported + r->refused + r->foreign)
                st = cckey_fail(CCKEY_ERR_CORRUPT, "damaged bundle (entry count)");
        }
        break;
    }
    return st;
}
