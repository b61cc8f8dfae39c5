/* One kernel source, three languages.
 *
 * kernels/md5.kern is compiled as OpenCL C 1.2 (by the OpenCL runtime, at
 * run time, from a copy embedded in the library), as CUDA C++ (by nvcc, at
 * build time, into the embedded fatbin) and, for the tests only, as host C
 * (CCKEY_KERNEL_HOST: the native test engine, host/testing/, runs it on
 * threads standing in for work-items, so the kernel's code runs under the
 * sanitizers). The differences it needs fit in a handful of macros; none of
 * them redefines a language keyword. */
#ifndef CCKEY_KERNEL_COMPAT_H
#define CCKEY_KERNEL_COMPAT_H

#if defined(__OPENCL_VERSION__)

#define CCKEY_KERNEL __kernel
#define CCKEY_GLOBAL __global
#define CCKEY_FN static inline
#define CCKEY_GID ((cckey_u32)get_global_id(0))
#define CCKEY_ROTL(x, n) rotate((cckey_u32)(x), (cckey_u32)(n))
typedef uint cckey_u32;
typedef uchar cckey_u8;
typedef uint4 cckey_u32x4;
/* vload4 needs only 4-byte alignment; the host aligns each message to 16. */
#define CCKEY_LOAD4(p) vload4(0, (p))
#define CCKEY_STORE4(p, v) vstore4((v), 0, (p))
#define CCKEY_MAKE4(a, b, c, d) ((cckey_u32x4)((a), (b), (c), (d)))

#elif defined(__CUDACC__)

#define CCKEY_KERNEL extern "C" __global__
#define CCKEY_GLOBAL
#define CCKEY_FN static __device__ __forceinline__
#define CCKEY_GID ((cckey_u32)(blockIdx.x * blockDim.x + threadIdx.x))
#define CCKEY_ROTL(x, n) __funnelshift_l((x), (x), (n))
typedef unsigned int cckey_u32;
typedef unsigned char cckey_u8;
typedef uint4 cckey_u32x4;
/* 16-byte vector loads: the host aligns every message start to 16 bytes. */
#define CCKEY_LOAD4(p) (*(const uint4 *)(p))
#define CCKEY_STORE4(p, v) (*(uint4 *)(p) = (v))
#define CCKEY_MAKE4(a, b, c, d) make_uint4((a), (b), (c), (d))

#elif defined(CCKEY_KERNEL_HOST)

#include <stdint.h>
#include <string.h>

#define CCKEY_KERNEL
#define CCKEY_GLOBAL
#define CCKEY_FN static inline
/* The work-item a host thread stands in for, set before each call. */
extern _Thread_local uint32_t cckey_host_gid;
#define CCKEY_GID cckey_host_gid
#define CCKEY_ROTL(x, n) (((cckey_u32)(x) << (n)) | ((cckey_u32)(x) >> (32u - (n))))
typedef uint32_t cckey_u32;
typedef uint8_t cckey_u8;
typedef struct cckey_u32x4 {
    cckey_u32 x, y, z, w;
} cckey_u32x4;
/* memcpy: the host compiler may not assume the vector alignment a GPU load
 * has, and byte copies never break aliasing rules. */
static inline cckey_u32x4 cckey_host_load4(const void *p)
{
    cckey_u32x4 v;
    memcpy(&v, p, sizeof v);
    return v;
}
#define CCKEY_LOAD4(p) cckey_host_load4(p)
#define CCKEY_STORE4(p, v) memcpy((p), &(v), sizeof(cckey_u32x4))
#define CCKEY_MAKE4(a, b, c, d) ((cckey_u32x4){(a), (b), (c), (d)})

#else
#error "kernels/compat.h: compile as OpenCL C, with nvcc, or as host C with CCKEY_KERNEL_HOST"
#endif

#endif
