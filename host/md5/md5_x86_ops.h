/* The round functions and the rotate of the x86 kernels without AVX-512's
 * ternary logic (md5_x4_sse2.c, md5_x8_avx2.c), over the intrinsics each
 * names for its vector width: V_BITS(op) the bitwise ones (_mm_and_si128,
 * ...), V_INT(op, w) those on w-bit lanes (_mm_add_epi32, ...).
 * Deliberately without include guards. */
#define V_F(x, y, z) V_BITS(xor)(z, V_BITS(and)(x, V_BITS(xor)(y, z)))
/* (y & ~z) + (x & z): the halves are disjoint, and y & ~z does not wait
 * for x, the newest word. */
#define V_G(x, y, z) V_INT(add, 32)(V_BITS(andnot)(z, y), V_BITS(and)(x, z))
#define V_H(x, y, z) V_BITS(xor)(V_BITS(xor)(x, y), z)
#define V_I(x, y, z) V_BITS(xor)(y, V_BITS(or)(x, V_BITS(xor)(z, V_INT(set1, 32)(-1))))
#define V_ROTL(x, s) v_rotl(x, s)

static inline V v_rotl(V x, int s) { return V_BITS(or)(V_INT(slli, 32)(x, s), V_INT(srli, 32)(x, 32 - s)); }
