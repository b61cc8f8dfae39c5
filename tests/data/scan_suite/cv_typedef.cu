// cv-qualifiers inside typedefs are part of the pointee: _Z1wPVi.
typedef volatile int vint;
typedef const float cfloat;
typedef int *const int_cptr;
__global__ void w(vint *p) { *p = 1; }
__global__ void r(cfloat *p, float *q) { *q = *p; }
__global__ void pp(int_cptr *p) { **p = 2; }
__global__ void byval(vint v, int *out) { *out = v; }
