// Written for cckey's tests: a CUDA unit in the shapes real samples have.
// Every kernel here has a name the text scan must work out exactly as nvcc
// does (test_scan_suite.py compares it with `nvcc -ptx`).
#include <cuda_runtime.h>
#include <curand_kernel.h>
#include <cufft.h>
#include <cuComplex.h>
#include "suite_types.cuh"
#include "suite_kernels.h"

// Types from the included header, and a macro that names a type.
__global__ void to_gray(const Pixel *in, TColor *out, int n) { out[0] = in[0].g + n; }
__global__ void spectrum(fComplex *data, Accum *acc, img::Tile t) { acc->sum = data[0].x * t.w; }
__global__ void scale(SCALAR *v, SCALAR k) { v[threadIdx.x] *= k; }

// The CUDA libraries' types.
__global__ void init_rng(curandState *states, unsigned long long seed)
{
    curand_init(seed, threadIdx.x, 0, &states[threadIdx.x]);
}
__global__ void rng_philox(curandStatePhilox4_32_10_t *s, curandStateMRG32k3a *m) { (void)s, (void)m; }
__global__ void mul_spectrum(cufftComplex *a, const cufftComplex *b, cuDoubleComplex *c) { a[0].x *= b[0].y + c[0].x; }
__global__ void volume(cudaExtent ext, cudaPitchedPtr p, cudaPos at) { (void)ext, (void)p, (void)at; }
__global__ void conditional(cudaGraphConditionalHandle h, int *flag) { (void)h; flag[0] = 1; }

// A conditional inside the parameter list, decided by the header's macro.
__global__ void shade(float *out,
#if USE_ALPHA
                      const float4 *in,
#else
                      const float3 *in,
#endif
                      int n)
{
    out[0] = in[0].x + n;
}

// Template kernels: an explicit instantiation ...
template <typename T, int N>
__global__ void tile_sum(const T *in, T *out) { out[0] = in[N - 1]; }
template __global__ void tile_sum<float, 16>(const float *, float *);

// ... and instances used by launches and by a host function template.
template <class T>
__global__ void fill_k(T *p, T v) { p[threadIdx.x] = v; }
template <int B = kBlock>
__global__ void reduce_k(float *p) { p[0] = B; }
namespace ops {
template <typename T>
__global__ void axpy(T a, const T *x, T *y) { y[0] += a * x[0]; }
}
template <bool Pow2, unsigned Size>
__global__ void reduce2(unsigned *p) { p[0] = Pow2 ? Size : 0; }

template <typename T>
void run_fill(T *p, T v) { fill_k<T><<<1, 32>>>(p, v); }

void launch_all(float *f, double *d, int *i, unsigned *u)
{
    tile_sum<int, 8><<<1, 8>>>(i, i);
    run_fill<float>(f, 1.0f);
    run_fill<double>(d, 2.0);
    reduce_k<><<<1, 32>>>(f);
    reduce_k<256><<<1, 32>>>(f);
    ops::axpy<double><<<1, 32>>>(2.0, d, d);
    constexpr int blocks = 4;
    reduce2<true, blocks * 32><<<1, 1>>>(u);
}
