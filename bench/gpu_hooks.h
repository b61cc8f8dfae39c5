/* Hooks the --gpu bench uses when the CUDA backend provides them.
 *
 * bench/cuda_bench.c defines them (compiled into the bench where the CUDA
 * backend is built, over its internal header), turning on the bandwidth probes
 * and the kernel-only rows of bench/gpu.sh. They are declared weak here, so the
 * bench links and runs without them and reports those rows as skipped with
 * "not in this build". Both run on the device the CUDA backend would use.
 *
 * cckey_cuda_bench_h2d: copy `bytes` from pinned (page-locked) host memory
 *   to device memory `reps` times, one copy after the other on one stream;
 *   set *gbps = bytes * reps / seconds / 1e9, timed with events or a host
 *   clock around a synchronised loop. CCKEY_OK, or an error with detail set
 *   through cckey_fail.
 *
 * cckey_cuda_bench_h2d_pageable: the same from ordinary (pageable) malloc
 *   memory, for the pinned-vs-pageable comparison row.
 *
 * cckey_cuda_bench_kernel: copy msgs[0..n) to the device once (packed as
 *   the backend packs them), then launch the MD5 kernel on them repeatedly,
 *   with no host<->device copy inside the timed loop, until at least min_s
 *   seconds have passed; set *seconds_per_launch to the best launch time,
 *   and copy the digests of the last launch to out[0..n) so the bench can
 *   check them against OpenSSL.
 *
 * The driver table of host/backends/cuda_loader.h already has what both need
 * (MemHostAlloc, MemAlloc, MemcpyHtoDAsync, StreamSynchronize, LaunchKernel);
 * they belong in the backend, next to its context and module handling. */
#ifndef CCKEY_BENCH_GPU_HOOKS_H
#define CCKEY_BENCH_GPU_HOOKS_H

#include "cckey.h"
#include "md5/md5.h"

__attribute__((weak)) cckey_status cckey_cuda_bench_h2d(size_t bytes, unsigned reps, double *gbps);
__attribute__((weak)) cckey_status cckey_cuda_bench_h2d_pageable(size_t bytes, unsigned reps, double *gbps);
__attribute__((weak)) cckey_status cckey_cuda_bench_kernel(const cckey_msg *msgs, size_t n, double min_s,
                                                           uint8_t (*out)[CCKEY_MD5_DIGEST],
                                                           double *seconds_per_launch);

#endif
