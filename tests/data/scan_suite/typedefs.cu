// Parameters of common CUDA and system typedefs, as cuda-samples use them.
#include <stdint.h>
#include <time.h>
#include <sys/types.h>
#include <cuda_fp16.h>
__global__ void t_uint(uint *p, ushort s, ulong l) { p[0] = s + l; }
__global__ void t_clock(clock_t *times) { times[0] = clock(); }
__global__ void t_tex(cudaTextureObject_t tex, float *out) { out[0] = tex1Dfetch<float>(tex, 0); }
__global__ void t_sizes(size_t n, int64_t a, uint8_t *b) { b[0] = n + a; }
struct cData { float x, y; };
__global__ void t_local(cData *d, float2 f, __half h) { d->x = f.x; }
