/* The deduplication hash of a byte string. Long strings are hashed on a
 * sample (both ends and strided windows); the tables that use it
 * (intern_block.c, and the planner through it) tell strings apart by a full memcmp when length
 * and hash agree, so deduplication stays much cheaper than MD5 and is still
 * exact. (Many distinct strings of one length that differ only between the
 * windows would make long memcmp chains: slower, never wrong.) */
#include "hash.h"

#include <stdlib.h>
#include <string.h>

static inline uint64_t mix(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0x9e3779b97f4a7c15u;
    return h ^ (h >> 31);
}

/* Four independent multiply chains: one chain waits on its multiply for
 * every word, four keep the multiplier busy (about four times the bytes per
 * cycle). Quality only matters for speed: equality is always memcmp. */
static uint64_t hash_span(uint64_t h, const uint8_t *p, size_t len)
{
    uint64_t a = h, b = h ^ 0x13198a2e03707344u, c = h ^ 0xa4093822299f31d0u, d = h ^ 0x082efa98ec4e6c89u;
    while (len >= 32) {
        uint64_t w[4];
        memcpy(w, p, 32);
        a = mix(a, w[0]);
        b = mix(b, w[1]);
        c = mix(c, w[2]);
        d = mix(d, w[3]);
        p += 32;
        len -= 32;
    }
    h = mix(mix(mix(mix(h, a), b), c), d);
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = mix(h, w);
        p += 8;
        len -= 8;
    }
    uint64_t w = 0;
    if (len) memcpy(&w, p, len);
    return mix(h, w ^ ((uint64_t)len << 56));
}

#ifdef __SIZEOF_INT128__
/* Short strings (most names, devices, options, and each option set's id
 * list): a few independent 64x64->128 multiplies, folded, instead of
 * hash_span's chain of dependent ones. */
static inline uint64_t mum(uint64_t a, uint64_t b)
{
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t load8(const uint8_t *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

static inline uint64_t load4(const uint8_t *p)
{
    uint32_t w;
    memcpy(&w, p, 4);
    return w;
}

#define SHORT_MAX 64

static uint64_t hash_short(const uint8_t *p, size_t len)
{
    static const uint64_t k[9] = {0xa0761d6478bd642fu, 0xe7037ed1a0b428dbu, 0x8ebc6af09c88c6e3u,
                                  0x589965cc75374cc3u, 0x1d8e4e27c47d124fu, 0x9e3779b97f4a7c15u,
                                  0xbf58476d1ce4e5b9u, 0x94d049bb133111ebu, 0x452821e638d01377u};
    uint64_t a = 0, b = 0, acc = k[8] ^ len;
    if (len > 16) {
        /* 16-byte chunks from the front; the last one ends at the end (it
         * may overlap the one before). Each is one multiply of its own. */
        size_t chunks = (len + 15) / 16;
        for (size_t c = 0; c + 1 < chunks; c++)
            acc ^= mum(load8(p + 16 * c) ^ k[2 * c], load8(p + 16 * c + 8) ^ k[2 * c + 1]);
        a = load8(p + len - 16);
        b = load8(p + len - 8);
    } else if (len >= 8) {
        a = load8(p);
        b = load8(p + len - 8);
    } else if (len >= 4) {
        a = load4(p);
        b = load4(p + len - 4);
    } else if (len) {
        a = (uint64_t)p[0] << 16 | (uint64_t)p[len / 2] << 8 | p[len - 1];
    }
    acc ^= mum(a ^ k[6], b ^ k[7]);
    return mum(acc ^ k[5], len ^ k[4]);
}
#endif

/* Long strings: both ends and 16 windows between them, about 2 KiB in all,
 * so deduplication costs a small fraction of the MD5 it saves. */
#define HASH_EDGE 512
#define HASH_WINDOWS 16
#define HASH_WINDOW 64

uint64_t cckey_hash_bytes(const void *ptr, size_t len)
{
    const uint8_t *p = ptr;
#ifdef SHORT_MAX
    if (len <= SHORT_MAX) return hash_short(p, len);
#endif
    uint64_t h = mix(0x452821e638d01377u, len);
    if (len <= 2 * HASH_EDGE + HASH_WINDOWS * HASH_WINDOW) return hash_span(h, p, len);
    h = hash_span(h, p, HASH_EDGE);
    h = hash_span(h, p + len - HASH_EDGE, HASH_EDGE);
    size_t middle = len - 2 * HASH_EDGE, step = (middle - HASH_WINDOW) / (HASH_WINDOWS - 1);
    for (size_t i = 0; i < HASH_WINDOWS; i++) h = hash_span(h, p + HASH_EDGE + step * i, HASH_WINDOW);
    return h;
}
