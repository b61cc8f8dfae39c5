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

#define V_BITS(op) _mm_##op##_si128
#define V_INT(op, w) _mm_##op##_epi##w
#include "md5_x86_ops.h"

/* Four 4x4 transposes: row l of quarter q is words 4q..4q+3 of lane l. */
#define V_ROW(blk, l, off) _mm_loadu_si128((const __m128i *)((blk)[l] + (off)))
#include "md5_x86_words.h"

#define KERNEL_ONE cckey_md5_x4_sse2
#define KERNEL_TWO cckey_md5_x8_sse2
#include "md5_simd_kernels.h"
#else
typedef int cckey_md5_x4_sse2_unused;   /* ISO C wants a non-empty file */
#endif
