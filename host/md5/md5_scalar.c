/* Portable MD5 (RFC 1321): the reference every other path is checked against. */
#include "md5.h"
#include "md5_pad.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <string.h>

const cckey_md5_hook_table *cckey_md5_hooks;

const uint32_t cckey_md5_iv[4] = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u};

static inline uint32_t rotl(uint32_t x, unsigned c) { return (x << c) | (x >> (32 - c)); }

static inline uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#define F(x, y, z) ((z) ^ ((x) & ((y) ^ (z))))
/* (x & z) | (y & ~z) with the two disjoint halves added instead: y & ~z
 * does not wait for x, the newest word, which shortens the chain per step. */
#define G(x, y, z) (((y) & ~(z)) + ((x) & (z)))
#define H(x, y, z) ((x) ^ (y) ^ (z))
#define I(x, y, z) ((y) ^ ((x) | ~(z)))
/* a + m + k first: only f waits for b, the word the previous step made. */
#define STEP(f, a, b, c, d, m, k, s)                                                               \
    (a) += (m) + (k);                                                                              \
    (a) += f((b), (c), (d));                                                                       \
    (a) = (b) + rotl((a), (s))

void cckey_md5_compress_scalar(uint32_t state[4], const uint8_t *blocks, size_t nblocks)
{
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    for (; nblocks; nblocks--, blocks += CCKEY_MD5_BLOCK) {
        uint32_t m[16];
        for (int i = 0; i < 16; i++) m[i] = load_le32(blocks + 4 * i);
        uint32_t aa = a, bb = b, cc = c, dd = d;

        STEP(F, a, b, c, d, m[0], 0xd76aa478, 7);   STEP(F, d, a, b, c, m[1], 0xe8c7b756, 12);
        STEP(F, c, d, a, b, m[2], 0x242070db, 17);  STEP(F, b, c, d, a, m[3], 0xc1bdceee, 22);
        STEP(F, a, b, c, d, m[4], 0xf57c0faf, 7);   STEP(F, d, a, b, c, m[5], 0x4787c62a, 12);
        STEP(F, c, d, a, b, m[6], 0xa8304613, 17);  STEP(F, b, c, d, a, m[7], 0xfd469501, 22);
        STEP(F, a, b, c, d, m[8], 0x698098d8, 7);   STEP(F, d, a, b, c, m[9], 0x8b44f7af, 12);
        STEP(F, c, d, a, b, m[10], 0xffff5bb1, 17); STEP(F, b, c, d, a, m[11], 0x895cd7be, 22);
        STEP(F, a, b, c, d, m[12], 0x6b901122, 7);  STEP(F, d, a, b, c, m[13], 0xfd987193, 12);
        STEP(F, c, d, a, b, m[14], 0xa679438e, 17); STEP(F, b, c, d, a, m[15], 0x49b40821, 22);

        STEP(G, a, b, c, d, m[1], 0xf61e2562, 5);   STEP(G, d, a, b, c, m[6], 0xc040b340, 9);
        STEP(G, c, d, a, b, m[11], 0x265e5a51, 14); STEP(G, b, c, d, a, m[0], 0xe9b6c7aa, 20);
        STEP(G, a, b, c, d, m[5], 0xd62f105d, 5);   STEP(G, d, a, b, c, m[10], 0x02441453, 9);
        STEP(G, c, d, a, b, m[15], 0xd8a1e681, 14); STEP(G, b, c, d, a, m[4], 0xe7d3fbc8, 20);
        STEP(G, a, b, c, d, m[9], 0x21e1cde6, 5);   STEP(G, d, a, b, c, m[14], 0xc33707d6, 9);
        STEP(G, c, d, a, b, m[3], 0xf4d50d87, 14);  STEP(G, b, c, d, a, m[8], 0x455a14ed, 20);
        STEP(G, a, b, c, d, m[13], 0xa9e3e905, 5);  STEP(G, d, a, b, c, m[2], 0xfcefa3f8, 9);
        STEP(G, c, d, a, b, m[7], 0x676f02d9, 14);  STEP(G, b, c, d, a, m[12], 0x8d2a4c8a, 20);

        STEP(H, a, b, c, d, m[5], 0xfffa3942, 4);   STEP(H, d, a, b, c, m[8], 0x8771f681, 11);
        STEP(H, c, d, a, b, m[11], 0x6d9d6122, 16); STEP(H, b, c, d, a, m[14], 0xfde5380c, 23);
        STEP(H, a, b, c, d, m[1], 0xa4beea44, 4);   STEP(H, d, a, b, c, m[4], 0x4bdecfa9, 11);
        STEP(H, c, d, a, b, m[7], 0xf6bb4b60, 16);  STEP(H, b, c, d, a, m[10], 0xbebfbc70, 23);
        STEP(H, a, b, c, d, m[13], 0x289b7ec6, 4);  STEP(H, d, a, b, c, m[0], 0xeaa127fa, 11);
        STEP(H, c, d, a, b, m[3], 0xd4ef3085, 16);  STEP(H, b, c, d, a, m[6], 0x04881d05, 23);
        STEP(H, a, b, c, d, m[9], 0xd9d4d039, 4);   STEP(H, d, a, b, c, m[12], 0xe6db99e5, 11);
        STEP(H, c, d, a, b, m[15], 0x1fa27cf8, 16); STEP(H, b, c, d, a, m[2], 0xc4ac5665, 23);

        STEP(I, a, b, c, d, m[0], 0xf4292244, 6);   STEP(I, d, a, b, c, m[7], 0x432aff97, 10);
        STEP(I, c, d, a, b, m[14], 0xab9423a7, 15); STEP(I, b, c, d, a, m[5], 0xfc93a039, 21);
        STEP(I, a, b, c, d, m[12], 0x655b59c3, 6);  STEP(I, d, a, b, c, m[3], 0x8f0ccc92, 10);
        STEP(I, c, d, a, b, m[10], 0xffeff47d, 15); STEP(I, b, c, d, a, m[1], 0x85845dd1, 21);
        STEP(I, a, b, c, d, m[8], 0x6fa87e4f, 6);   STEP(I, d, a, b, c, m[15], 0xfe2ce6e0, 10);
        STEP(I, c, d, a, b, m[6], 0xa3014314, 15);  STEP(I, b, c, d, a, m[13], 0x4e0811a1, 21);
        STEP(I, a, b, c, d, m[4], 0xf7537e82, 6);   STEP(I, d, a, b, c, m[11], 0xbd3af235, 10);
        STEP(I, c, d, a, b, m[2], 0x2ad7d2bb, 15);  STEP(I, b, c, d, a, m[9], 0xeb86d391, 21);

        a += aa; b += bb; c += cc; d += dd;
    }
    state[0] = a; state[1] = b; state[2] = c; state[3] = d;
}

size_t cckey_md5_pad(uint8_t tail[2 * CCKEY_MD5_BLOCK], const uint8_t *partial, size_t rem,
                     uint64_t total)
{
    return cckey_md5_pad_inline(tail, partial, rem, total);
}

size_t cckey_md5_tail_blocks(uint8_t tail[2 * CCKEY_MD5_BLOCK], const uint8_t *msg, size_t len)
{
    size_t rem = len % CCKEY_MD5_BLOCK;
    /* An empty message may be NULL, and NULL + 0 is undefined in C. */
    return cckey_md5_pad(tail, len ? msg + (len - rem) : msg, rem, len);
}

void cckey_md5_init(cckey_md5_ctx *ctx)
{
    memcpy(ctx->state, cckey_md5_iv, sizeof ctx->state);
    ctx->total = 0;
    ctx->buffered = 0;
}

void cckey_md5_update(cckey_md5_ctx *ctx, const void *data, size_t len)
{
    const uint8_t *p = data;
    ctx->total += len;
    if (ctx->buffered) {
        size_t take = CCKEY_MD5_BLOCK - ctx->buffered;
        if (take > len) take = len;
        memcpy(ctx->buf + ctx->buffered, p, take);
        ctx->buffered += take;
        p += take;
        len -= take;
        if (ctx->buffered < CCKEY_MD5_BLOCK) return;
        cckey_md5_compress_scalar(ctx->state, ctx->buf, 1);
        ctx->buffered = 0;
    }
    size_t whole = len / CCKEY_MD5_BLOCK;
    if (whole) cckey_md5_compress_scalar(ctx->state, p, whole);
    p += whole * CCKEY_MD5_BLOCK;
    len -= whole * CCKEY_MD5_BLOCK;
    if (len) memcpy(ctx->buf, p, len);
    ctx->buffered = len;
}

void cckey_md5_store(uint8_t out[CCKEY_MD5_DIGEST], const uint32_t state[4])
{
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) out[4 * i + j] = (uint8_t)(state[i] >> (8 * j));
}

void cckey_md5_final(cckey_md5_ctx *ctx, uint8_t out[CCKEY_MD5_DIGEST])
{
    CCKEY_MD5_COUNT(1);
    uint8_t tail[2 * CCKEY_MD5_BLOCK];
    size_t nblocks = cckey_md5_pad(tail, ctx->buf, ctx->buffered, ctx->total);
    cckey_md5_compress_scalar(ctx->state, tail, nblocks);
    cckey_md5_store(out, ctx->state);
}

void cckey_md5(const void *data, size_t len, uint8_t out[CCKEY_MD5_DIGEST])
{
    CCKEY_MD5_COUNT(1);
    uint32_t state[4];
    memcpy(state, cckey_md5_iv, sizeof state);
    const uint8_t *p = data;
    size_t whole = len / CCKEY_MD5_BLOCK;
    if (whole) cckey_md5_compress_scalar(state, p, whole);
    uint8_t tail[2 * CCKEY_MD5_BLOCK];
    size_t nt = cckey_md5_tail_blocks(tail, p, len);
    cckey_md5_compress_scalar(state, tail, nt);
    cckey_md5_store(out, state);
}

/* The batch formats four of these per key, on every key: SSE2 (every
 * x86-64 has it) does all 32 digits at once. */
void cckey_hex(char out[32], const uint8_t digest[CCKEY_MD5_DIGEST])
{
#if defined(__SSE2__)
    __m128i d = _mm_loadu_si128((const __m128i *)digest), low4 = _mm_set1_epi8(15);
    __m128i hi = _mm_and_si128(_mm_srli_epi16(d, 4), low4), lo = _mm_and_si128(d, low4);
    __m128i a = _mm_unpacklo_epi8(hi, lo), b = _mm_unpackhi_epi8(hi, lo);   /* nibbles in text order */
    /* '0' + v, and 'a' - '0' - 10 more where v > 9. */
    __m128i nine = _mm_set1_epi8(9), zero = _mm_set1_epi8('0'), gap = _mm_set1_epi8('a' - '0' - 10);
    a = _mm_add_epi8(_mm_add_epi8(a, zero), _mm_and_si128(_mm_cmpgt_epi8(a, nine), gap));
    b = _mm_add_epi8(_mm_add_epi8(b, zero), _mm_and_si128(_mm_cmpgt_epi8(b, nine), gap));
    _mm_storeu_si128((__m128i *)out, a);
    _mm_storeu_si128((__m128i *)(out + 16), b);
#else
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < CCKEY_MD5_DIGEST; i++) {
        out[2 * i] = digits[digest[i] >> 4];
        out[2 * i + 1] = digits[digest[i] & 15];
    }
#endif
}
