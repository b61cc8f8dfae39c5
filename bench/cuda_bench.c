/* The CUDA backend's benchmark hooks (declared weak in gpu_hooks.h), part
 * of the bench's internal candidates: compiled into cckey_bench alone (not
 * into libcckey) where the CUDA backend is built, over its internal header
 * backends/cuda_backend.h:
 * host-to-device bandwidth from pinned and from pageable memory, and the
 * MD5 kernel's rate on data already on the device. They run on the
 * backend's own device, context and module (cckey_cuda_acquire), so they
 * measure what batches get. Without a driver they return
 * CCKEY_ERR_UNAVAILABLE with the reason. */
#include "backends/cuda_backend.h"
#include "backends/gpu_pipeline.h"
#include "core/internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The weak references of gpu_hooks.h resolve to these. */
cckey_status cckey_cuda_bench_h2d(size_t bytes, unsigned reps, double *gbps);
cckey_status cckey_cuda_bench_h2d_pageable(size_t bytes, unsigned reps, double *gbps);
cckey_status cckey_cuda_bench_kernel(const cckey_msg *msgs, size_t n, double min_s, uint8_t (*out)[CCKEY_MD5_DIGEST],
                                     double *seconds_per_launch);

#define PIECE ((size_t)64 << 20)   /* one copy call: large enough to reach full link speed */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static cckey_status fail(const cckey_cu_api *cu, const char *call, cckey_CUresult r)
{
    char what[384];
    cckey_cu_describe(cu, r, what, sizeof what);
    return cckey_fail(CCKEY_ERR_DEVICE, "CUDA %s failed (benchmark): %s", call, what);
}

/* What a probe allocates, released in one place whatever failed. */
typedef struct probe {
    const cckey_cu_api *cu;
    cckey_CUstream stream;
    cckey_CUdeviceptr d_a, d_b, d_c;
    void *pinned_a, *pinned_b;
    void *plain;
} probe;

static void probe_free(probe *p)
{
    const cckey_cu_api *cu = p->cu;
    if (p->stream) cu->StreamSynchronize(p->stream), cu->StreamDestroy(p->stream);
    if (p->d_a) cu->MemFree(p->d_a);
    if (p->d_b) cu->MemFree(p->d_b);
    if (p->d_c) cu->MemFree(p->d_c);
    if (p->pinned_a) cu->MemFreeHost(p->pinned_a);
    if (p->pinned_b) cu->MemFreeHost(p->pinned_b);
    free(p->plain);
}

/* One stream, bytes of device memory, and bytes of host memory pinned or
 * not, then reps copies of it in PIECE-sized calls, timed after a warm-up
 * copy and a synchronise. */
static cckey_status h2d(size_t bytes, unsigned reps, bool pinned, double *gbps)
{
    *gbps = 0;
    if (bytes == 0 || reps == 0) return cckey_fail(CCKEY_ERR_INVALID_ARG, "bandwidth probe of %zu bytes x %u", bytes, reps);
    probe p = {0};
    cckey_CUfunction fn;
    unsigned block;
    void *engine;
    cckey_status st = cckey_cuda_acquire(&engine, &p.cu, &fn, &block);
    if (st != CCKEY_OK) return st;
    const cckey_cu_api *cu = p.cu;
    cckey_CUresult r;
    void *host = NULL;
    if ((r = cu->StreamCreate(&p.stream, CCKEY_CU_STREAM_NON_BLOCKING)) != CCKEY_CUDA_SUCCESS) {
        p.stream = NULL;
        st = fail(cu, "cuStreamCreate", r);
    } else if ((r = cu->MemAlloc(&p.d_a, bytes)) != CCKEY_CUDA_SUCCESS) {
        st = fail(cu, "cuMemAlloc", r);
    } else if (pinned && (r = cu->MemHostAlloc(&p.pinned_a, bytes, 0)) != CCKEY_CUDA_SUCCESS) {
        st = fail(cu, "cuMemHostAlloc", r);
    } else if (!pinned && !(p.plain = malloc(bytes))) {
        st = cckey_fail(CCKEY_ERR_NO_MEMORY, "%zu bytes of pageable host memory", bytes);
    }
    if (st == CCKEY_OK) {
        host = pinned ? p.pinned_a : p.plain;
        memset(host, 0x5a, bytes);   /* every page present before the clock starts */
        size_t first = bytes < PIECE ? bytes : PIECE;
        if ((r = cu->MemcpyHtoDAsync(p.d_a, host, first, p.stream)) != CCKEY_CUDA_SUCCESS ||
            (r = cu->StreamSynchronize(p.stream)) != CCKEY_CUDA_SUCCESS)
            st = fail(cu, "warm-up copy", r);
    }
    if (st == CCKEY_OK) {
        double t0 = now_s();
        for (unsigned k = 0; k < reps && st == CCKEY_OK; k++)
            for (size_t off = 0; off < bytes && st == CCKEY_OK; off += PIECE) {
                size_t len = bytes - off < PIECE ? bytes - off : PIECE;
                if ((r = cu->MemcpyHtoDAsync(p.d_a + off, (const uint8_t *)host + off, len, p.stream)) !=
                    CCKEY_CUDA_SUCCESS)
                    st = fail(cu, "cuMemcpyHtoDAsync", r);
            }
        if (st == CCKEY_OK && (r = cu->StreamSynchronize(p.stream)) != CCKEY_CUDA_SUCCESS)
            st = fail(cu, "cuStreamSynchronize", r);
        double s = now_s() - t0;
        if (st == CCKEY_OK) *gbps = s > 0 ? (double)bytes * reps / s / 1e9 : 0;
    }
    probe_free(&p);
    cckey_cuda_release(engine, st == CCKEY_ERR_DEVICE);
    return st;
}

cckey_status cckey_cuda_bench_h2d(size_t bytes, unsigned reps, double *gbps) { return h2d(bytes, reps, true, gbps); }

cckey_status cckey_cuda_bench_h2d_pageable(size_t bytes, unsigned reps, double *gbps)
{
    return h2d(bytes, reps, false, gbps);
}

/* Packed as the pipeline packs a chunk: each message at a 16-byte-aligned
 * offset, then (offset, length) per message; 32-bit on the device. */
static cckey_status pack_all(const cckey_msg *msgs, size_t n, size_t *data_bytes)
{
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        off += (msgs[i].len + CCKEY_GPU_ALIGN - 1) & ~(size_t)(CCKEY_GPU_ALIGN - 1);
        if (off > CCKEY_GPU_MAX_CHUNK_BYTES || n > UINT32_MAX)
            return cckey_fail(CCKEY_ERR_INVALID_ARG,
                              "kernel benchmark: %zu messages need more than %zu packed bytes (one launch)", n,
                              (size_t)CCKEY_GPU_MAX_CHUNK_BYTES);
    }
    *data_bytes = off;
    return CCKEY_OK;
}

cckey_status cckey_cuda_bench_kernel(const cckey_msg *msgs, size_t n, double min_s, uint8_t (*out)[CCKEY_MD5_DIGEST],
                                     double *seconds_per_launch)
{
    *seconds_per_launch = 0;
    if (n == 0) return cckey_fail(CCKEY_ERR_INVALID_ARG, "kernel benchmark of no messages");
    size_t data_bytes = 0;
    cckey_status st = pack_all(msgs, n, &data_bytes);
    if (st != CCKEY_OK) return st;
    probe p = {0};
    cckey_CUfunction fn;
    unsigned block;
    void *engine;
    st = cckey_cuda_acquire(&engine, &p.cu, &fn, &block);
    if (st != CCKEY_OK) return st;
    const cckey_cu_api *cu = p.cu;
    cckey_CUresult r;
    size_t data_alloc = data_bytes ? data_bytes : CCKEY_GPU_ALIGN;
    const char *what = "cuStreamCreate";
    if ((r = cu->StreamCreate(&p.stream, CCKEY_CU_STREAM_NON_BLOCKING)) != CCKEY_CUDA_SUCCESS ||
        (what = "cuMemAlloc", r = cu->MemAlloc(&p.d_a, data_alloc)) != CCKEY_CUDA_SUCCESS ||
        (r = cu->MemAlloc(&p.d_b, 8 * n)) != CCKEY_CUDA_SUCCESS ||
        (r = cu->MemAlloc(&p.d_c, 16 * n)) != CCKEY_CUDA_SUCCESS ||
        (what = "cuMemHostAlloc", r = cu->MemHostAlloc(&p.pinned_a, data_alloc + 8 * n, 0)) != CCKEY_CUDA_SUCCESS ||
        (r = cu->MemHostAlloc(&p.pinned_b, 16 * n, 0)) != CCKEY_CUDA_SUCCESS) {
        if (what[2] == 'S') p.stream = NULL;   /* cuStreamCreate itself failed */
        st = fail(cu, what, r);
    }
    if (st == CCKEY_OK) {
        uint8_t *data = p.pinned_a;
        uint32_t *meta = (uint32_t *)(data + data_alloc);
        size_t off = 0;
        for (size_t i = 0; i < n; i++) {
            meta[2 * i] = (uint32_t)off;
            meta[2 * i + 1] = (uint32_t)msgs[i].len;
            if (msgs[i].len) memcpy(data + off, msgs[i].ptr, msgs[i].len);
            off += (msgs[i].len + CCKEY_GPU_ALIGN - 1) & ~(size_t)(CCKEY_GPU_ALIGN - 1);
        }
        if ((r = cu->MemcpyHtoDAsync(p.d_a, data, data_alloc, p.stream)) != CCKEY_CUDA_SUCCESS ||
            (r = cu->MemcpyHtoDAsync(p.d_b, meta, 8 * n, p.stream)) != CCKEY_CUDA_SUCCESS ||
            (r = cu->StreamSynchronize(p.stream)) != CCKEY_CUDA_SUCCESS)
            st = fail(cu, "copying the messages to the device", r);
    }
    if (st == CCKEY_OK) {
        unsigned count = (unsigned)n;
        void *args[] = {&p.d_a, &p.d_b, &p.d_c, &count};
        unsigned grid = (unsigned)((n + block - 1) / block);
        double best = 0, start = now_s();
        /* At least three launches (the first pays for lazy loading), then
         * until min_s has passed. */
        for (unsigned k = 0; st == CCKEY_OK && (k < 3 || now_s() - start < min_s); k++) {
            double t0 = now_s();
            if ((r = cu->LaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, p.stream, args, NULL)) != CCKEY_CUDA_SUCCESS)
                st = fail(cu, "cuLaunchKernel", r);
            else if ((r = cu->StreamSynchronize(p.stream)) != CCKEY_CUDA_SUCCESS)
                st = fail(cu, "cuStreamSynchronize (kernel)", r);
            double s = now_s() - t0;
            if (st == CCKEY_OK && (best == 0 || s < best)) best = s;
        }
        if (st == CCKEY_OK &&
            ((r = cu->MemcpyDtoHAsync(p.pinned_b, p.d_c, 16 * n, p.stream)) != CCKEY_CUDA_SUCCESS ||
             (r = cu->StreamSynchronize(p.stream)) != CCKEY_CUDA_SUCCESS))
            st = fail(cu, "copying the digests back", r);
        if (st == CCKEY_OK) {
            const uint32_t *d = p.pinned_b;
            for (size_t i = 0; i < n; i++) cckey_md5_store(out[i], d + 4 * i);
            *seconds_per_launch = best;
        }
    }
    probe_free(&p);
    cckey_cuda_release(engine, st == CCKEY_ERR_DEVICE);
    return st;
}
