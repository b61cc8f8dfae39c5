// OpenCL kernels whose names a macro pastes together (the shape of
// type-generic BLAS kernels): no text names them.
#define DEFINE_ADD(T) \
    __kernel void add_##T(__global T *a, __global const T *b) { a[get_global_id(0)] += b[get_global_id(0)]; }
DEFINE_ADD(float)
DEFINE_ADD(int)
DEFINE_ADD(uint)

__kernel void plain_after(__global int *p) { p[0] = 0; }
