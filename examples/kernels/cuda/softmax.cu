// Row-wise softmax over a [rows x cols] matrix, one block per row.
// Block size must be a power of two (the launch uses 256 unless BLOCK is set).

// NVRTC compiles without the host's <math.h>, where INFINITY lives; nvcc
// brings it in. This keeps the file buildable by both.
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif

#ifndef BLOCK
#define BLOCK 256
#endif

__device__ float block_reduce_max(float v, float *smem)
{
    smem[threadIdx.x] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) smem[threadIdx.x] = fmaxf(smem[threadIdx.x], smem[threadIdx.x + s]);
        __syncthreads();
    }
    float r = smem[0];
    __syncthreads();
    return r;
}

__device__ float block_reduce_sum(float v, float *smem)
{
    smem[threadIdx.x] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) smem[threadIdx.x] += smem[threadIdx.x + s];
        __syncthreads();
    }
    float r = smem[0];
    __syncthreads();
    return r;
}

/* A row's maximum m (returned) and the sum over the row of exp(x - m) (in
 * *sum), which both softmax forms start from; subtracting m keeps exp finite. */
__device__ float row_max_expsum(const float *x, int cols, float *smem, float *sum)
{
    float m = -INFINITY;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) m = fmaxf(m, x[i]);
    m = block_reduce_max(m, smem);
    float s = 0.0f;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) s += __expf(x[i] - m);
    *sum = block_reduce_sum(s, smem);
    return m;
}

extern "C" __global__ void softmax_rows(const float *in, float *out, int cols)
{
    __shared__ float smem[BLOCK];
    const float *x = in + (size_t)blockIdx.x * cols;
    float *y = out + (size_t)blockIdx.x * cols;
    float s, m = row_max_expsum(x, cols, smem, &s);
    for (int i = threadIdx.x; i < cols; i += blockDim.x) y[i] = __expf(x[i] - m) / s;
}

extern "C" __global__ void log_softmax_rows(const float *in, float *out, int cols)
{
    __shared__ float smem[BLOCK];
    const float *x = in + (size_t)blockIdx.x * cols;
    float *y = out + (size_t)blockIdx.x * cols;
    float s, m = row_max_expsum(x, cols, smem, &s);
    s = logf(s);
    for (int i = threadIdx.x; i < cols; i += blockDim.x) y[i] = x[i] - m - s;
}
