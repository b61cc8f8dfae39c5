// CLBlast keeps its kernels in .opencl files.
__kernel void xaxpy(const int n, const float alpha, __global const float *x, __global float *y)
{
    int i = get_global_id(0);
    if (i < n) y[i] += alpha * x[i];
}
