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

/* The same for clearing n < 64 bytes. */
static inline void cckey_md5_zero_small(uint8_t *dst, size_t n)
{
    if (n >= 32) {
        memset(dst, 0, 32);
        memset(dst + n - 32, 0, 32);
    } else if (n >= 16) {
        memset(dst, 0, 16);
        memset(dst + n - 16, 0, 16);
    } else if (n >= 8) {
        memset(dst, 0, 8);
        memset(dst + n - 8, 0, 8);
    } else if (n >= 4) {
        memset(dst, 0, 4);
        memset(dst + n - 4, 0, 4);
    } else if (n) {
        dst[0] = 0;
        dst[n / 2] = 0;
        dst[n - 1] = 0;
    }
}

/* The padding rule, written once. tail may hold an earlier tail: bytes
 * 64..119 must be zero, and so must bytes *dirty..55; everything else is
 * overwritten or cleared here. Sets *dirty for the next call, so a lane that
 * pads message after message clears only what the last one left behind. */
static inline size_t cckey_md5_pad_into(uint8_t tail[2 * CCKEY_MD5_BLOCK], const uint8_t *partial,
                                        size_t rem, uint64_t total, size_t *dirty)
{
    size_t nblocks = 1;
    if (rem >= CCKEY_MD5_BLOCK - 8) {
        memset(tail + CCKEY_MD5_BLOCK - 8, 0, 8);   /* a one-block tail's length */
        nblocks = 2;
    }
    size_t d = *dirty < CCKEY_MD5_BLOCK - 8 ? *dirty : CCKEY_MD5_BLOCK - 8;
    if (d > rem + 1) cckey_md5_zero_small(tail + rem + 1, d - rem - 1);
    cckey_md5_copy_small(tail, partial, rem);
    tail[rem] = 0x80;
    *dirty = rem + 1;
    uint64_t bits = total << 3;   /* RFC 1321: the length modulo 2^64 bits */
    uint8_t *lenp = tail + nblocks * CCKEY_MD5_BLOCK - 8;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(lenp, &bits, 8);   /* one store; GCC does not merge the bytes here */
#else
    for (int i = 0; i < 8; i++) lenp[i] = (uint8_t)(bits >> (8 * i));
#endif
    return nblocks;
}

/* See cckey_md5_pad in md5.h: a fresh tail. One constant-size clear: with a
 * size that depends on rem, GCC picked rep stosb, slow to start. */
static inline size_t cckey_md5_pad_inline(uint8_t tail[2 * CCKEY_MD5_BLOCK], const uint8_t *partial,
                                          size_t rem, uint64_t total)
{
    size_t dirty = 0;
    memset(tail, 0, 2 * CCKEY_MD5_BLOCK);
    return cckey_md5_pad_into(tail, partial, rem, total, &dirty);
}

#endif
