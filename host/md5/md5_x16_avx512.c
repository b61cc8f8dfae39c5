/* MD5 compression in AVX-512F: 16 lanes a vector, as x16 and interleaved x32
 * (compiled with -mavx512f; x86-64 only). vpternlogd computes each round
 * function in one instruction and vprold rotates in one, which shortens the
 * dependency chain per step. */
#include "md5_mb.h"

#if defined(__x86_64__)
#ifndef __AVX512F__
#error "md5_x16_avx512.c needs -mavx512f (set per file in CMakeLists.txt)"
#endif
#include <immintrin.h>

typedef __m512i V;
#define W 16

static inline V v_add(V x, V y) { return _mm512_add_epi32(x, y); }
#define V_K(k, p) _mm512_set1_epi32((int)*(p))
static inline V v_load_state(const uint32_t *p) { return _mm512_loadu_si512(p); }
static inline void v_store_state(uint32_t *p, V x) { _mm512_storeu_si512(p, x); }

/* Truth tables for vpternlogd (bit i = fn(x, y, z) with i = x<<2|y<<1|z). */
#define V_F(x, y, z) _mm512_ternarylogic_epi32(x, y, z, 0xca)   /* x ? y : z */
#define V_G(x, y, z) _mm512_ternarylogic_epi32(x, y, z, 0xe4)   /* z ? x : y */
#define V_H(x, y, z) _mm512_ternarylogic_epi32(x, y, z, 0x96)   /* x ^ y ^ z */
#define V_I(x, y, z) _mm512_ternarylogic_epi32(x, y, z, 0x39)   /* y ^ (x | ~z) */
#define V_ROTL(x, s) _mm512_rol_epi32(x, s)

/* Lanes l, l+4, l+8, l+12 share a row (one per 128-bit quarter), so the
 * 16x16 transpose is 4x4 transposes within quarters: no cross-quarter
 * shuffles, and the inserts can take a load operand. */
static inline V load_quad(const uint8_t *const *blk, int l, int off)
{
    V r = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(blk[l] + off)));
    r = _mm512_inserti32x4(r, _mm_loadu_si128((const __m128i *)(blk[l + 4] + off)), 1);
    r = _mm512_inserti32x4(r, _mm_loadu_si128((const __m128i *)(blk[l + 8] + off)), 2);
    return _mm512_inserti32x4(r, _mm_loadu_si128((const __m128i *)(blk[l + 12] + off)), 3);
}

#define V_ROW(blk, l, off) load_quad(blk, l, off)
#define V_INT(op, w) _mm512_##op##_epi##w
#include "md5_x86_words.h"

#define KERNEL_ONE cckey_md5_x16_avx512
#define KERNEL_TWO cckey_md5_x32_avx512
#include "md5_simd_kernels.h"
#else
typedef int cckey_md5_x16_avx512_unused;   /* ISO C wants a non-empty file */
#endif
