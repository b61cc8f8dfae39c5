// Written for cckey's tests, in the shape an OpenCL BLAS library gives its
// kernel files: the whole file is one C++11 raw string literal, which the
// host program includes between "const char *src =" and ";".
R"(

#ifndef WGS
  #define WGS 64
#endif

typedef float real;

__kernel __attribute__((reqd_work_group_size(WGS, 1, 1)))
void xscal(const int n, const real alpha, __global real* x) {
  const int i = get_global_id(0);
  if (i < n) { x[i] *= alpha; }
}

// A quote " and a backslash-n \n stay as they are inside a raw string.
__kernel void xcopy(const int n, __global const real* x, __global real* y) {
  const int i = get_global_id(0);
  if (i < n) { y[i] = x[i]; }
}

)"
// End of the C++11 raw string literal
