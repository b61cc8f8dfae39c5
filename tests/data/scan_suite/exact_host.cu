// A whole program: host code launching a template kernel, which is
// instantiated only by that launch. nvcc compiles it; NVRTC cannot (no host
// headers), so without nvcc --exact warns about this file.
#include <cstdio>

template <typename T>
__global__ void axpy(T a, const T *x, T *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}

int main()
{
    float *x = nullptr, *y = nullptr;
    axpy<float><<<1, 32>>>(2.0f, x, y, 0);
    axpy<double><<<1, 32>>>(2.0, nullptr, nullptr, 0);
    std::printf("launched\n");
    return 0;
}
