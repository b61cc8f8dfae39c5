// 256-bin byte histogram: per-block privatised bins in shared memory, merged
// with global atomics. A C++ (not extern "C") entry point: the runtime looks
// it up by its mangled name.

__global__ void histogram256(const unsigned char *data, size_t n, unsigned int *bins)
{
    __shared__ unsigned int local[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) local[i] = 0;
    __syncthreads();
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int i = threadIdx.x; i < 256; i += blockDim.x) atomicAdd(&bins[i], local[i]);
}
