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

#define V_BITS(op) _mm256_##op##_si256
#define V_INT(op, w) _mm256_##op##_epi##w
#include "md5_x86_ops.h"

/* Lanes l and l+4 share a row (low and high 128 bits), so the 8x8 transpose
 * is four 4x4 transposes within the halves: no cross-half shuffles. */
static inline V load_pair(const uint8_t *lo, const uint8_t *hi)
{
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)lo)),
                                   _mm_loadu_si128((const __m128i *)hi), 1);
}

#define V_ROW(blk, l, off) load_pair((blk)[l] + (off), (blk)[(l) + 4] + (off))
#include "md5_x86_words.h"

#define KERNEL_ONE cckey_md5_x8_avx2
#define KERNEL_TWO cckey_md5_x16_avx2
#include "md5_simd_kernels.h"
#else
typedef int cckey_md5_x8_avx2_unused;   /* ISO C wants a non-empty file */
#endif
