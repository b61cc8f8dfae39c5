/* Sources that never sit in memory whole: a streaming digest in the
 * caller's memory, a source handle from a digest, and one read from a file
 * descriptor piece by piece. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The public struct is opaque bytes; this is what they hold. The magic word
 * tells an initialised digest from stack garbage or a finished one. */
typedef struct digest_state {
    uint64_t magic;
    cckey_md5_ctx md5;
} digest_state;

#define DIGEST_MAGIC 0x63636b6579446967ull   /* "cckeyDig" */

_Static_assert(sizeof(digest_state) <= sizeof(cckey_digest), "cckey_digest too small for its state");
_Static_assert(_Alignof(digest_state) <= _Alignof(cckey_digest), "cckey_digest under-aligned");

static digest_state *state_of(cckey_digest *d)
{
    digest_state *s = (digest_state *)d;
    return s && s->magic == DIGEST_MAGIC ? s : NULL;
}

cckey_status cckey_digest_init(cckey_digest *d)
{
    if (!d) return cckey_fail(CCKEY_ERR_INVALID_ARG, "digest is NULL");
    memset(d, 0, sizeof *d);
    digest_state *s = (digest_state *)d;
    s->magic = DIGEST_MAGIC;
    cckey_md5_init(&s->md5);
    return CCKEY_OK;
}

cckey_status cckey_digest_update(cckey_digest *d, const void *data, size_t len)
{
    digest_state *s = state_of(d);
    if (!s) return cckey_fail(CCKEY_ERR_INVALID_ARG, "digest is NULL, not initialised or already final");
    if (!data && len) return cckey_fail(CCKEY_ERR_INVALID_ARG, "data is NULL with len = %zu", len);
    if (len) cckey_md5_update(&s->md5, data, len);
    return CCKEY_OK;
}

cckey_status cckey_digest_final(cckey_digest *d, char hex[CCKEY_HEX_LEN + 1], unsigned char bin[CCKEY_DIGEST_LEN])
{
    digest_state *s = state_of(d);
    if (!s) return cckey_fail(CCKEY_ERR_INVALID_ARG, "digest is NULL, not initialised or already final");
    if (!hex && !bin) return cckey_fail(CCKEY_ERR_INVALID_ARG, "hex and bin are both NULL");
    uint8_t out[CCKEY_MD5_DIGEST];
    cckey_md5_final(&s->md5, out);
    s->magic = 0;
    if (hex) {
        cckey_hex(hex, out);
        hex[CCKEY_HEX_LEN] = '\0';
    }
    if (bin) memcpy(bin, out, sizeof out);
    return CCKEY_OK;
}

cckey_status cckey_source_new_digest(cckey_source **out, const unsigned char digest[CCKEY_DIGEST_LEN])
{
    if (!out || !digest) return cckey_fail(CCKEY_ERR_INVALID_ARG, "out or digest is NULL");
    char hex[32];
    cckey_hex(hex, digest);
    return cckey_source_new_hex(out, hex);
}

/* Big enough that a large file costs few reads, small enough for any stack
 * of a thread that calls us. */
#define FD_CHUNK (64u * 1024u)

cckey_status cckey_source_new_fd(cckey_source **out, int fd)
{
    if (!out) return cckey_fail(CCKEY_ERR_INVALID_ARG, "out is NULL");
    if (fd < 0) return cckey_fail(CCKEY_ERR_INVALID_ARG, "fd %d is not a file descriptor", fd);
    unsigned char *buf = malloc(FD_CHUNK);
    if (!buf) return cckey_fail(CCKEY_ERR_NO_MEMORY, "read buffer");
    cckey_md5_ctx ctx;
    cckey_md5_init(&ctx);
    for (;;) {
        ssize_t got = read(fd, buf, FD_CHUNK);
        if (got > 0) {
            cckey_md5_update(&ctx, buf, (size_t)got);
            continue;
        }
        if (got == 0) break;
        if (errno == EINTR) continue;
        int e = errno;
        free(buf);
        return cckey_fail(CCKEY_ERR_IO, "reading fd %d after %llu bytes: %s", fd, (unsigned long long)ctx.total,
                          strerror(e));
    }
    free(buf);
    uint8_t d[CCKEY_MD5_DIGEST];
    cckey_md5_final(&ctx, d);
    return cckey_source_new_digest(out, d);
}
