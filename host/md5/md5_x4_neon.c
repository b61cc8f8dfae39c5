/* MD5 compression in NEON: 4 lanes a vector, as x4 and interleaved x8
 * (AArch64, little-endian only: the words of a block are read with plain
 * vector loads). */
#include "md5_mb.h"

#if defined(__aarch64__)
#if !defined(__ARM_NEON) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "md5_x4_neon.c needs little-endian AArch64 with NEON"
#endif
#include <arm_neon.h>

typedef uint32x4_t V;
#define W 4

static inline V v_add(V x, V y) { return vaddq_u32(x, y); }
#define V_K(k, p) vld1q_dup_u32(p)
static inline V v_load_state(const uint32_t *p) { return vld1q_u32(p); }
static inline void v_store_state(uint32_t *p, V x) { vst1q_u32(p, x); }

/* F and G are bit selects; I is an or-not: one instruction each. */
#define V_F(x, y, z) vbslq_u32(x, y, z)
#define V_G(x, y, z) vbslq_u32(z, x, y)
#define V_H(x, y, z) veorq_u32(veorq_u32(x, y), z)
#define V_I(x, y, z) veorq_u32(y, vornq_u32(x, z))
/* Shift-left-and-insert keeps the right shift's low bits: a rotate in two. */
#define V_ROTL(x, s) vsliq_n_u32(vshrq_n_u32(x, 32 - (s)), x, s)

static inline V load_row(const uint8_t *p) { return vreinterpretq_u32_u8(vld1q_u8(p)); }

static inline void load_words(V m[16], const uint8_t *const *blk)
{
    for (int q = 0; q < 4; q++) {
        V r0 = load_row(blk[0] + 16 * q), r1 = load_row(blk[1] + 16 * q);
        V r2 = load_row(blk[2] + 16 * q), r3 = load_row(blk[3] + 16 * q);
        uint64x2_t t0 = vreinterpretq_u64_u32(vtrn1q_u32(r0, r1));
        uint64x2_t t1 = vreinterpretq_u64_u32(vtrn2q_u32(r0, r1));
        uint64x2_t t2 = vreinterpretq_u64_u32(vtrn1q_u32(r2, r3));
        uint64x2_t t3 = vreinterpretq_u64_u32(vtrn2q_u32(r2, r3));
        m[4 * q + 0] = vreinterpretq_u32_u64(vtrn1q_u64(t0, t2));
        m[4 * q + 1] = vreinterpretq_u32_u64(vtrn1q_u64(t1, t3));
        m[4 * q + 2] = vreinterpretq_u32_u64(vtrn2q_u64(t0, t2));
        m[4 * q + 3] = vreinterpretq_u32_u64(vtrn2q_u64(t1, t3));
    }
}

#define KERNEL_ONE cckey_md5_x4_neon
#define KERNEL_TWO cckey_md5_x8_neon
#include "md5_simd_kernels.h"
#else
typedef int cckey_md5_x4_neon_unused;   /* ISO C wants a non-empty file */
#endif
