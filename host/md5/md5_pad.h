/* MD5 padding, inline: the scalar code (cckey_md5_pad) and the lane manager
 * both build tails with it. Inline because the lane manager builds one per
 * message, and for short messages that is as much work as their block. */
#ifndef CCKEY_MD5_PAD_H
#define CCKEY_MD5_PAD_H

#include "md5.h"

#include <string.h>

/* n < 64 bytes as at most two overlapping fixed-size copies: no call into
 * memcpy for a variable size, and no byte outside [src, src + n) is read. */
static inline void cckey_md5_copy_small(uint8_t *dst, const uint8_t *src, size_t n)
{
    if (n >= 32) {
        memcpy(dst, src, 32);
        memcpy(dst + n - 32, src + n - 32, 32);
    } else if (n >= 16) {
        memcpy(dst, src, 16);
        memcpy(dst + n - 16, src + n - 16, 16);
    } else if (n >= 8) {
        memcpy(dst, src, 8);
        memcpy(dst + n - 8, src + n - 8, 8);
    } else if (n >= 4) {
        memcpy(dst, src, 4);
        memcpy(dst + n - 4, src + n - 4, 4);
    } else if (n) {
        dst[0] = src[0];
        dst[n / 2] = src[n / 2];
        dst[n - 1] = src[n - 1];
    }
}

/* See cckey_md5_pad in md5.h. */
static inline size_t cckey_md5_pad_inline(uint8_t tail[2 * CCKEY_MD5_BLOCK], const uint8_t *partial,
                                          size_t rem, uint64_t total)
{
    size_t nblocks = 1;
    memset(tail, 0, CCKEY_MD5_BLOCK);
    if (rem >= CCKEY_MD5_BLOCK - 8) {
        memset(tail + CCKEY_MD5_BLOCK, 0, CCKEY_MD5_BLOCK);
        nblocks = 2;
    }
    cckey_md5_copy_small(tail, partial, rem);
    tail[rem] = 0x80;
    uint64_t bits = total << 3;   /* RFC 1321: the length modulo 2^64 bits */
    uint8_t *lenp = tail + nblocks * CCKEY_MD5_BLOCK - 8;
    for (int i = 0; i < 8; i++) lenp[i] = (uint8_t)(bits >> (8 * i));
    return nblocks;
}

#endif
