// A function-like attribute macro between the return type and the name.
#define LAUNCH(t, b) __launch_bounds__(t, b)
#define NOINLINE_ATTR(x) __attribute__((noinline))
__global__ void LAUNCH(256, 2) bounded(float *p) { p[0] = 1.0f; }
extern "C" __global__ void NOINLINE_ATTR(1) plain_c(float *p) { p[0] = 2.0f; }
__global__ void __launch_bounds__(128) direct(int *p) { p[0] = 3; }
