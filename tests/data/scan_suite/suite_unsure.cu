// Written for cckey's tests: kernels the text scan cannot name exactly. It
// must list none of them under a name nvcc would not give, and warn about
// each ("use --exact"); test_scan_suite.py checks both against `nvcc -ptx`.
#include "suite_types.cuh"

namespace {
__global__ void hidden(int *p) { p[0] = 1; }   // nvcc names the namespace per file
}

template <typename T>
__global__ void deduced(T *p) { p[0] = T(); }  // instantiated by deduction below

#define PASTE_T(x) x##_t
__global__ void pasted(PASTE_T(size) n, int *p) { p[0] = (int)n; }

__global__ void runtime_version(float *a,
#if CUDART_VERSION >= 11000
                                int b
#else
                                long b
#endif
)
{
    a[0] = b;
}

// Listed: the scan is sure of this one.
__global__ void plain(int *p) { p[0] = 2; }

void launch(float *f, int *i) { deduced<<<1, 1>>>(f); hidden<<<1, 1>>>(i); }
