// hashcat shape: every kernel is declared through macros defined elsewhere
// (here, for the compiler, at the top). Found with --kernel-macro KERNEL_FQ.
#define KERNEL_FQ __kernel
#define KERNEL_FA __attribute__((reqd_work_group_size(64, 1, 1)))
#define FIXED(x) __attribute__((vec_type_hint(x)))

KERNEL_FQ KERNEL_FA void m00000_m04 (__global int *p) { p[0] = 0; }
KERNEL_FQ void m00000_s04 (__global int *p) { p[0] = 1; }
KERNEL_FQ void FIXED(float4) m00000_sxx (__global int *p) { p[0] = 2; }
__kernel void plain(__global int *p) { p[0] = 3; }
