// Signatures whose Itanium names the scanner must get right; the test
// compiles this with NVRTC and compares against the PTX's .entry names.
struct S { int x; };
enum E { E0, E1 };
typedef float real;
using index_t = unsigned long long;
typedef struct { int q; } Anon;
namespace ns { struct Inner { int z; }; typedef Inner Alias; }

__global__ void m_void() {}
__global__ void m_void2(void) {}
__global__ void m_builtins(bool b, char c, signed char sc, unsigned char uc, short s, unsigned short us, int i,
                           unsigned u, long l, unsigned long ul, long long ll, unsigned long long ull, float f,
                           double d, long int li, short int si, unsigned int ui, long long int lli) {}
__global__ void m_pointers(float *a, float *b, const float *c, const float *d, float **e, const float *const *g) {}
__global__ void m_qualifiers(float *__restrict__ a, const float *__restrict__ b, volatile int *v,
                             const volatile int *cv, const int n, int *const p) {}
__global__ void m_classes(S s, S *ps, const S *cps, const S &rs, E e, E *pe) {}
__global__ void m_vectors(float4 *a, float4 b, int2 c, uchar4 *d, dim3 g, double2 *e) {}
__global__ void m_typedefs(size_t n, real r, real *pr, index_t ix, Anon an, cudaTextureObject_t tex) {}
__global__ void m_arrays(int a[], float b[16], const S c[]) {}
namespace ns {
__global__ void m_in_ns(Inner *a, Inner *b, Alias c, S d) {}
namespace deeper { __global__ void m_deeper(Inner *a, float *b, float *c) {} }
}
__global__ void m_ref(int &a, const float &b, S &c) {}
