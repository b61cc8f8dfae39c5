/* The body shared by every SIMD kernel: included twice by md5_simd_kernels.h
 * (GROUPS 1 and 2) for each md5_x*_*.c, which defines, for its instruction set,
 *   V                  the vector type, W lanes of uint32_t
 *   W, GROUPS          lanes per vector; independent vectors interleaved
 *                      (MD5 is one long dependency chain, so a second chain
 *                      fills execution ports the first leaves idle)
 *   KERNEL             the function's name
 *   v_add, v_load_state, v_store_state
 *   V_F, V_G, V_H, V_I the round functions; V_ROTL(x, s), s a constant
 *   load_words(m, blk) m[i] = little-endian word i of each of W blocks
 *   V_K(k, p)          the constant k in every lane; p points at a copy of
 *                      it in memory, for a broadcast load (GCC otherwise
 *                      rebuilds each constant in registers, on the same
 *                      ports the rounds need)
 * Deliberately without include guards. */
#include "md5_steps.h"

#ifndef CCKEY_MD5_K_TABLE
#define CCKEY_MD5_K_TABLE
#define CCKEY_MD5_K_OF(fn, a, b, c, d, i, k, s) k,
static const uint32_t cckey_md5_k_table[64] = {CCKEY_MD5_STEPS(CCKEY_MD5_K_OF)};
#undef CCKEY_MD5_K_OF
#endif

void KERNEL(uint32_t state[4][CCKEY_MD5_MAX_LANES], const uint8_t *const block[CCKEY_MD5_MAX_LANES])
{
    V m[GROUPS][16], a[GROUPS], b[GROUPS], c[GROUPS], d[GROUPS];
    V a0[GROUPS], b0[GROUPS], c0[GROUPS], d0[GROUPS];
    for (int g = 0; g < GROUPS; g++) {
        load_words(m[g], block + g * W);
        a0[g] = a[g] = v_load_state(&state[0][g * W]);
        b0[g] = b[g] = v_load_state(&state[1][g * W]);
        c0[g] = c[g] = v_load_state(&state[2][g * W]);
        d0[g] = d[g] = v_load_state(&state[3][g * W]);
    }
    /* Hidden from the optimiser, so the constants stay loads from the table. */
    const uint32_t *kp = cckey_md5_k_table;
    __asm__("" : "+r"(kp));
    /* a + (m + k) does not wait for the newest word; only fn() does. */
#define CCKEY_SIMD_STEP(fn, A, B, C, D, i, k, s)                                                     \
    {                                                                                              \
        V kk = V_K(k, kp);                                                                         \
        kp++;                                                                                      \
        for (int g = 0; g < GROUPS; g++)                                                           \
            A[g] = v_add(B[g], V_ROTL(v_add(v_add(A[g], v_add(m[g][i], kk)),                       \
                                            V_##fn(B[g], C[g], D[g])),                             \
                                      s));                                                         \
    }
    CCKEY_MD5_STEPS(CCKEY_SIMD_STEP)
#undef CCKEY_SIMD_STEP
    for (int g = 0; g < GROUPS; g++) {
        v_store_state(&state[0][g * W], v_add(a[g], a0[g]));
        v_store_state(&state[1][g * W], v_add(b[g], b0[g]));
        v_store_state(&state[2][g * W], v_add(c[g], c0[g]));
        v_store_state(&state[3][g * W], v_add(d[g], d0[g]));
    }
}
