MSTRINGIFY(
// Written for cckey's tests, in the shape a benchmark suite gives its
// kernel files: the host includes the file inside MSTRINGIFY(...), which
// makes it one line; "\n" before a directive starts its line, and one
// after it ends it.

\n#if defined(cl_khr_fp64)
\n  #pragma OPENCL EXTENSION cl_khr_fp64 : enable
\n  #define HAVE_DOUBLE
\n#endif
\n
__kernel void peak_float(__global float *out, float a) { out[get_global_id(0)] = a * a; }

\n#ifdef HAVE_DOUBLE
\n
__kernel void peak_double(__global double *out, double a) { out[get_global_id(0)] = a * a; }
\n#endif
\n
// A directive at the start of a line is the host's: it decides here.
#ifdef NOT_DEFINED_ON_THE_HOST
__kernel void host_dropped(__global int *p) { p[0] = 0; }
#else
__kernel void host_kept(__global int *p) { p[0] = 1; }
#endif
)
