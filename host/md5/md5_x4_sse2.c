/* MD5 compression in SSE2: 4 lanes a vector, as x4 and interleaved x8
 * (compiled with -msse2; x86-64 only). */
#include "md5_mb.h"

#if defined(__x86_64__)
#include <emmintrin.h>

typedef __m128i V;
#define W 4

static inline V v_add(V x, V y) { return _mm_add_epi32(x, y); }
/* SSE2 has no broadcast load; a 16-byte constant as an operand is better. */
#define V_K(k, p) _mm_set1_epi32((int)(k))
static inline V v_load_state(const uint32_t *p) { return _mm_loadu_si128((const __m128i *)p); }
static inline void v_store_state(uint32_t *p, V x) { _mm_storeu_si128((__m128i *)p, x); }

#define V_F(x, y, z) _mm_xor_si128(z, _mm_and_si128(x, _mm_xor_si128(y, z)))
/* (y & ~z) + (x & z): the halves are disjoint, and y & ~z does not wait
 * for x, the newest word. */
#define V_G(x, y, z) _mm_add_epi32(_mm_andnot_si128(z, y), _mm_and_si128(x, z))
#define V_H(x, y, z) _mm_xor_si128(_mm_xor_si128(x, y), z)
#define V_I(x, y, z) _mm_xor_si128(y, _mm_or_si128(x, _mm_xor_si128(z, _mm_set1_epi32(-1))))
#define V_ROTL(x, s) rotl_sse2(x, s)

static inline V rotl_sse2(V x, int s)
{
    return _mm_or_si128(_mm_slli_epi32(x, s), _mm_srli_epi32(x, 32 - s));
}

/* Four 4x4 transposes: row l of quarter q is words 4q..4q+3 of lane l. */
static inline void load_words(V m[16], const uint8_t *const *blk)
{
    for (int q = 0; q < 4; q++) {
        V r0 = _mm_loadu_si128((const __m128i *)(blk[0] + 16 * q));
        V r1 = _mm_loadu_si128((const __m128i *)(blk[1] + 16 * q));
        V r2 = _mm_loadu_si128((const __m128i *)(blk[2] + 16 * q));
        V r3 = _mm_loadu_si128((const __m128i *)(blk[3] + 16 * q));
        V t0 = _mm_unpacklo_epi32(r0, r1), t1 = _mm_unpackhi_epi32(r0, r1);
        V t2 = _mm_unpacklo_epi32(r2, r3), t3 = _mm_unpackhi_epi32(r2, r3);
        m[4 * q + 0] = _mm_unpacklo_epi64(t0, t2);
        m[4 * q + 1] = _mm_unpackhi_epi64(t0, t2);
        m[4 * q + 2] = _mm_unpacklo_epi64(t1, t3);
        m[4 * q + 3] = _mm_unpackhi_epi64(t1, t3);
    }
}

/* One vector, and two interleaved (see md5_simd_body.h). */
#define GROUPS 1
#define KERNEL cckey_md5_x4_sse2
#include "md5_simd_body.h"
#undef GROUPS
#undef KERNEL
#define GROUPS 2
#define KERNEL cckey_md5_x8_sse2
#include "md5_simd_body.h"
#else
typedef int cckey_md5_x4_sse2_unused;   /* ISO C wants a non-empty file */
#endif
