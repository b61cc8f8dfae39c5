// Rodinia shape: a kernel header written once per #ifdef group. The scanner
// must see one kernel here, and still find the kernels after it.
#ifdef USE_DOUBLE
__kernel void scale(__global double *a, int n)
{
#else
__kernel void scale(__global float *a, int n)
{
#endif
    int i = get_global_id(0);
    if (i < n) a[i] *= 2;
}

#ifdef FAST
__kernel void add(__global float *a, __global const float *b)
#else
__kernel void add(__global float *a, __global const float *restrict b)
#endif
{
    a[get_global_id(0)] += b[get_global_id(0)];
}

__kernel void after_both(__global int *p) { p[0] = 1; }
