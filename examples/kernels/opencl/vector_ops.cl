/* Element-wise vector kernels: the bread and butter of any BLAS-1 library.
 * Three entry points share this one source, so each needs its own key. */

__kernel void vec_add(__global const float *a, __global const float *b,
                      __global float *out, const uint n)
{
    size_t i = get_global_id(0);
    if (i < n) out[i] = a[i] + b[i];
}

__kernel void vec_scale(__global float *x, const float alpha, const uint n)
{
    size_t i = get_global_id(0);
    if (i < n) x[i] *= alpha;
}

__kernel void saxpy(const float alpha, __global const float *x,
                    __global float *y, const uint n)
{
    size_t i = get_global_id(0);
#ifdef UNROLL
    /* Each work-item handles UNROLL consecutive elements. */
    for (uint k = 0; k < UNROLL; k++) {
        size_t j = i * UNROLL + k;
        if (j < n) y[j] = alpha * x[j] + y[j];
    }
#else
    if (i < n) y[i] = alpha * x[i] + y[i];
#endif
}
