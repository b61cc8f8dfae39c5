// Shapes only a compiler names right: template instances (explicit
// instantiations), a kernel in a namespace, parameters typedef'd in another
// file. No host code, so NVRTC compiles it as well as nvcc.
#include "exact_types.h"

template <typename T, int N>
__global__ void scale(T *p) { p[0] *= N; }
template __global__ void scale<float, 2>(float *);
template __global__ void scale<double, 4>(double *);

namespace physics {
__global__ void step(Particle *ps, float dt) { ps[0].x += dt; }
}

__global__ void hash_keys(const key_t64 *in, vec_t *out) { out[0].x = (float)in[0]; }
extern "C" __global__ void plain_c(int *p) { p[0] = 1; }
