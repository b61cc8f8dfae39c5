/* Entry payloads compressed with zstd (libzstd): one frame per payload,
 * holding its size, so that a read allocates once and checks the length. */
#include "entry.h"
#include "../core/internal.h"

#include <stdlib.h>

#ifdef CCKEY_WITH_ZSTD
#include <zstd.h>

bool cckey_compress(int level, const void *data, size_t len, uint8_t **out, size_t *out_len)
{
    *out = NULL;
    /* Below a piece there is little to gain and a header to pay for. */
    if (len < 64) return false;
    size_t cap = ZSTD_compressBound(len);
    uint8_t *buf = malloc(cap);
    if (!buf) return false;
    size_t n = ZSTD_compress(buf, cap, data, len, level);
    if (ZSTD_isError(n) || n >= len) {
        free(buf);
        return false;
    }
    uint8_t *shrunk = realloc(buf, n);
    *out = shrunk ? shrunk : buf;
    *out_len = n;
    return true;
}

cckey_status cckey_decompress(const uint8_t *in, size_t n, uint8_t *out, size_t len)
{
    unsigned long long size = ZSTD_getFrameContentSize(in, n);
    if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN)
        return cckey_fail(CCKEY_ERR_CORRUPT, "compressed payload is no zstd frame with its size (damaged)");
    if (size != len)
        return cckey_fail(CCKEY_ERR_CORRUPT, "compressed payload holds %llu bytes, the header says %zu", size, len);
    size_t got = ZSTD_decompress(out, len, in, n);
    if (ZSTD_isError(got))
        return cckey_fail(CCKEY_ERR_CORRUPT, "compressed payload does not decode: %s", ZSTD_getErrorName(got));
    if (got != len) return cckey_fail(CCKEY_ERR_CORRUPT, "compressed payload decodes to %zu bytes, not %zu", got, len);
    return CCKEY_OK;
}

bool cckey_compress_level_ok(int level) { return level >= ZSTD_minCLevel() && level <= ZSTD_maxCLevel(); }

#else

bool cckey_compress(int level, const void *data, size_t len, uint8_t **out, size_t *out_len)
{
    (void)level, (void)data, (void)len, (void)out_len;
    *out = NULL;
    return false;
}

cckey_status cckey_decompress(const uint8_t *in, size_t n, uint8_t *out, size_t len)
{
    (void)in, (void)n, (void)out, (void)len;
    return cckey_fail(CCKEY_ERR_UNAVAILABLE, "a compressed entry, and this library was built without libzstd");
}

bool cckey_compress_level_ok(int level)
{
    (void)level;
    return false;
}

#endif
