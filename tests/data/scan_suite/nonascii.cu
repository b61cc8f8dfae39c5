// A kernel name with non-ASCII letters: refused with a warning.
extern "C" __global__ void café(int *p) { p[0] = 1; }
__global__ void ascii_after(int *p) { p[0] = 2; }
