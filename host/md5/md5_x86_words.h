/* load_words for the x86 kernels (md5_simd_body.h): four 4x4 transposes of
 * 32-bit words, one per 16-byte quarter q of the blocks, in each 128-bit
 * lane of V. Included by md5_x4_sse2.c, md5_x8_avx2.c and md5_x16_avx512.c
 * after they have defined, for their instruction set,
 *   V_ROW(blk, l, off)   the 16 bytes at off of block l (and of the blocks
 *                        that share its row in the other 128-bit lanes)
 *   V_INT(op, w)         the intrinsic op on w-bit lanes (_mm_unpacklo_epi32)
 * Deliberately without include guards. */
static inline void load_words(V m[16], const uint8_t *const *blk)
{
    for (int q = 0; q < 4; q++) {
        V r0 = V_ROW(blk, 0, 16 * q), r1 = V_ROW(blk, 1, 16 * q);
        V r2 = V_ROW(blk, 2, 16 * q), r3 = V_ROW(blk, 3, 16 * q);
        V t0 = V_INT(unpacklo, 32)(r0, r1), t1 = V_INT(unpackhi, 32)(r0, r1);
        V t2 = V_INT(unpacklo, 32)(r2, r3), t3 = V_INT(unpackhi, 32)(r2, r3);
        m[4 * q + 0] = V_INT(unpacklo, 64)(t0, t2);
        m[4 * q + 1] = V_INT(unpackhi, 64)(t0, t2);
        m[4 * q + 2] = V_INT(unpacklo, 64)(t1, t3);
        m[4 * q + 3] = V_INT(unpackhi, 64)(t1, t3);
    }
}
