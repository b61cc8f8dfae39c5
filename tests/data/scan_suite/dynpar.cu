// Written for cckey's tests: a kernel launched from device code (dynamic
// parallelism), which nvcc compiles only with -rdc=true.
__global__ void child(int *p) { p[threadIdx.x] = 1; }
__global__ void parent(int *p) { child<<<1, 32>>>(p); }
