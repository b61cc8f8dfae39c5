// CUDA fixture for the scanner: extern "C" names, C++ (mangled) names,
// namespaces, attributes, templates (skipped with a warning), and things
// that must not count. Expected entries, in order:
//   plain_c block_c1 block_c2 _Z7cxx_onePfPKfi _ZN2nn3two12in_namespaceEPNS_1TES2_
//   _Z7boundedP6float4j anon_kernel weird
struct S { int x; };
namespace nn { struct T { float y; }; }

extern "C" __global__ void plain_c(float *a) { a[0] = 0.f; }

extern "C" {
__global__ void block_c1(int *a) { a[0] = 1; }
/* __global__ void fake_commented(int *a) {} */
__global__ void block_c2(int *a) { a[0] = 2; }
}

__global__ void cxx_one(float *out, const float *in, int n) { out[0] = in[0] + n; }

namespace nn { namespace two {
__global__ void in_namespace(T *a, T *b) { a->y = b->y; }
} }

__global__ void __launch_bounds__(256, 2) bounded(float4 *v, unsigned n) { v[0].x = n; }

template <typename X>
__global__ void templated(X *p) { p[0] = X(); }

#if 0
__global__ void fake_if0(int *p) {}
#endif

__device__ int kernel(int x) { return x + 1; }   // "kernel" is not a CUDA marker
__global__ void fake_prototype(int *p);
__device__ const char src[] = R"raw(__global__ void fake_raw(int *p) {})raw";

namespace {
__global__ void anon_kernel(int *p) { p[0] = kernel(1) + src[0]; }
}

__global__ void weird(nn::T *qualified) { qualified->y = 0; }
