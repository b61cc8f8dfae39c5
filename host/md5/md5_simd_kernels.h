/* Both kernels of an instruction set, over md5_simd_body.h: KERNEL_ONE on
 * one vector, KERNEL_TWO on two interleaved. Included once by each
 * md5_x*_*.c after its definitions (see md5_simd_body.h) and the two names. */
#define GROUPS 1
#define KERNEL KERNEL_ONE
#include "md5_simd_body.h"
#undef GROUPS
#undef KERNEL
#define GROUPS 2
#define KERNEL KERNEL_TWO
#include "md5_simd_body.h"
#undef GROUPS
#undef KERNEL
