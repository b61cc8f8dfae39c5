// Single-precision matrix multiply, C = alpha * A * B + beta * C, row-major.
// Two entry points from one source: a naive one and a shared-memory tiled one.

#ifndef TILE
#define TILE 16
#endif

extern "C" __global__ void sgemm_naive(int m, int n, int k, float alpha, const float *a,
                                       const float *b, float beta, float *c)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (int i = 0; i < k; i++) acc += a[row * k + i] * b[i * n + col];
    c[row * n + col] = alpha * acc + beta * c[row * n + col];
}

extern "C" __global__ void sgemm_tiled(int m, int n, int k, float alpha, const float *a,
                                       const float *b, float beta, float *c)
{
    __shared__ float ta[TILE][TILE];
    __shared__ float tb[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < (k + TILE - 1) / TILE; t++) {
        int ka = t * TILE + threadIdx.x, kb = t * TILE + threadIdx.y;
        ta[threadIdx.y][threadIdx.x] = (row < m && ka < k) ? a[row * k + ka] : 0.0f;
        tb[threadIdx.y][threadIdx.x] = (kb < k && col < n) ? b[kb * n + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE; i++) acc += ta[threadIdx.y][i] * tb[i][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = alpha * acc + beta * c[row * n + col];
}
