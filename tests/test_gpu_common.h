/* Checks shared by the device backend suites (test_opencl.c, test_cuda.c):
 * the same edge cases, run against whichever backend a suite names. The
 * oracle is OpenSSL's MD5 (through support.h), which shares no code with
 * the library or the kernel. */
#ifndef CCKEY_TEST_GPU_COMMON_H
#define CCKEY_TEST_GPU_COMMON_H

#include "backends/backend.h"

/* The ops of the backend named ("opencl", "cuda", or "native": the testing
 * library's engine), or skip the test with a one-line reason (not compiled
 * in, no driver, no device). */
const cckey_backend_ops *gpu_need(const char *backend);
/* The ops of the kind's backend, or skip the test when it is not compiled
 * in (whether it can run here is the test's own question). */
const cckey_backend_ops *gpu_compiled(cckey_backend_kind kind);

/* Messages with their own storage. */
typedef struct gpu_batch {
    cckey_msg *msgs;
    size_t n, cap;
    void **blocks;
    size_t nblocks;
} gpu_batch;
void gpu_add_random(gpu_batch *b, uint64_t *rng, size_t len);
void gpu_add_same(gpu_batch *b, const cckey_msg *m);   /* the same pointer again */
void gpu_batch_free(gpu_batch *b);

/* Digest the batch on the backend; assert CCKEY_OK, every done[i] set and
 * every digest equal to OpenSSL's. */
void gpu_check(const cckey_backend_ops *b, const gpu_batch *batch, const char *what);

/* The edge cases, one function each, for Test() bodies. */
void gpu_case_lengths_0_300(const char *backend);
void gpu_case_block_boundaries(const char *backend);
void gpu_case_empty_messages(const char *backend);
void gpu_case_empty_job(const char *backend);
void gpu_case_duplicates(const char *backend);
void gpu_case_many_chunks(const char *backend);
void gpu_case_long_threshold_routing(const char *backend);
void gpu_case_long_messages(const char *backend);
void gpu_case_fault_chunk_backend(const char *backend);
void gpu_case_fault_chunk_planner(const char *backend);
void gpu_case_fault_build(const char *backend);
void gpu_case_make_keys(const char *backend);
void gpu_case_concurrent_batches(const char *backend);
void gpu_case_bad_settings(const char *backend);
/* The host's share (cckey_batch_config_set_device_share): the same digests with it on and
 * off; both sides get work; a device fault leaves only right digests. */
void gpu_case_share_identical(const char *backend);
void gpu_case_share_both_sides(const char *backend);
void gpu_case_share_fault(const char *backend);

/* The planner's "used" for a batch on backend b: its name, or name+cpu
 * (host threads shared the work, or finished it after a failure). */
void gpu_assert_used(const cckey_backend_ops *b, const char *used);

/* The edge cases as the Test()s of suite. */
#define GPU_COMMON_TESTS(suite, backend)                                                            \
    Test(suite, lengths_0_to_300) { gpu_case_lengths_0_300(backend); }                              \
    Test(suite, block_boundaries) { gpu_case_block_boundaries(backend); }                           \
    Test(suite, empty_messages) { gpu_case_empty_messages(backend); }                               \
    Test(suite, empty_batch) { gpu_case_empty_job(backend); }                                       \
    Test(suite, duplicates) { gpu_case_duplicates(backend); }                                       \
    Test(suite, batch_larger_than_a_chunk) { gpu_case_many_chunks(backend); }                       \
    Test(suite, long_threshold_routing) { gpu_case_long_threshold_routing(backend); }               \
    Test(suite, long_messages) { gpu_case_long_messages(backend); }                                 \
    Test(suite, fault_at_chunk_k_backend) { gpu_case_fault_chunk_backend(backend); }                \
    Test(suite, fault_at_chunk_k_planner) { gpu_case_fault_chunk_planner(backend); }                \
    Test(suite, fault_in_kernel_build) { gpu_case_fault_build(backend); }                           \
    Test(suite, make_keys_on_the_backend) { gpu_case_make_keys(backend); }                          \
    Test(suite, concurrent_batches) { gpu_case_concurrent_batches(backend); }                       \
    Test(suite, bad_settings) { gpu_case_bad_settings(backend); }                                       \
    Test(suite, share_same_digests_on_and_off) { gpu_case_share_identical(backend); }               \
    Test(suite, share_both_sides_work) { gpu_case_share_both_sides(backend); }                      \
    Test(suite, share_fault_at_chunk_k) { gpu_case_share_fault(backend); }

/* For a backend that cannot run here (its driver made unloadable): it says
 * so with a reason holding reason_part, wherever it is asked (available,
 * make_keys, the device listing), `auto` never picks it, and `auto` still
 * gives the right key on the CPU. */
void gpu_expect_unavailable(cckey_backend_kind kind, const char *reason_part);
/* The same with the backend's driver library set to library first (skipped
 * where the backend is not compiled in). */
void gpu_expect_unloadable(cckey_backend_kind kind, const char *library, const char *reason_part);

#endif
