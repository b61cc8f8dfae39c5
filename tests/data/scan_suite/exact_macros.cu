// Kernels whose names a macro pastes together: no text names them.
#define DEFINE_FILL(T) \
    extern "C" __global__ void fill_##T(T *p, T v) { p[threadIdx.x] = v; }
DEFINE_FILL(float)
DEFINE_FILL(int)

#define DEFINE_COPY(name, T) __global__ void name##_copy(const T *a, T *b) { b[0] = a[0]; }
DEFINE_COPY(f32, float)
DEFINE_COPY(u8, unsigned char)
