/* MD5 compression in AVX2: 8 lanes a vector, as x8 and interleaved x16
 * (compiled with -mavx2; x86-64 only). */
#include "md5_mb.h"

#if defined(__x86_64__)
#ifndef __AVX2__
#error "md5_x8_avx2.c needs -mavx2 (set per file in CMakeLists.txt)"
#endif
#include <immintrin.h>

typedef __m256i V;
#define W 8

static inline V v_add(V x, V y) { return _mm256_add_epi32(x, y); }
#define V_K(k, p) _mm256_set1_epi32((int)*(p))
static inline V v_load_state(const uint32_t *p) { return _mm256_loadu_si256((const __m256i *)p); }
static inline void v_store_state(uint32_t *p, V x) { _mm256_storeu_si256((__m256i *)p, x); }

#define V_F(x, y, z) _mm256_xor_si256(z, _mm256_and_si256(x, _mm256_xor_si256(y, z)))
/* (y & ~z) + (x & z): the halves are disjoint, and y & ~z does not wait
 * for x, the newest word. */
#define V_G(x, y, z) _mm256_add_epi32(_mm256_andnot_si256(z, y), _mm256_and_si256(x, z))
#define V_H(x, y, z) _mm256_xor_si256(_mm256_xor_si256(x, y), z)
#define V_I(x, y, z) _mm256_xor_si256(y, _mm256_or_si256(x, _mm256_xor_si256(z, _mm256_set1_epi32(-1))))
#define V_ROTL(x, s) rotl_avx2(x, s)

static inline V rotl_avx2(V x, int s)
{
    return _mm256_or_si256(_mm256_slli_epi32(x, s), _mm256_srli_epi32(x, 32 - s));
}

/* Lanes l and l+4 share a row (low and high 128 bits), so the 8x8 transpose
 * is four 4x4 transposes within the halves: no cross-half shuffles. */
static inline V load_pair(const uint8_t *lo, const uint8_t *hi)
{
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)lo)),
                                   _mm_loadu_si128((const __m128i *)hi), 1);
}

static inline void load_words(V m[16], const uint8_t *const *blk)
{
    for (int q = 0; q < 4; q++) {
        V r0 = load_pair(blk[0] + 16 * q, blk[4] + 16 * q);
        V r1 = load_pair(blk[1] + 16 * q, blk[5] + 16 * q);
        V r2 = load_pair(blk[2] + 16 * q, blk[6] + 16 * q);
        V r3 = load_pair(blk[3] + 16 * q, blk[7] + 16 * q);
        V t0 = _mm256_unpacklo_epi32(r0, r1), t1 = _mm256_unpackhi_epi32(r0, r1);
        V t2 = _mm256_unpacklo_epi32(r2, r3), t3 = _mm256_unpackhi_epi32(r2, r3);
        m[4 * q + 0] = _mm256_unpacklo_epi64(t0, t2);
        m[4 * q + 1] = _mm256_unpackhi_epi64(t0, t2);
        m[4 * q + 2] = _mm256_unpacklo_epi64(t1, t3);
        m[4 * q + 3] = _mm256_unpackhi_epi64(t1, t3);
    }
}

/* One vector, and two interleaved (see md5_simd_body.h). */
#define GROUPS 1
#define KERNEL cckey_md5_x8_avx2
#include "md5_simd_body.h"
#undef GROUPS
#undef KERNEL
#define GROUPS 2
#define KERNEL cckey_md5_x16_avx2
#include "md5_simd_body.h"
#else
typedef int cckey_md5_x8_avx2_unused;   /* ISO C wants a non-empty file */
#endif
