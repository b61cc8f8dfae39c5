/* Checks shared by the device backend suites (test_opencl.c, test_cuda.c):
 * the same edge cases, run against whichever backend a suite names. The
 * oracle is OpenSSL's MD5 (through support.h), which shares no code with
 * the library or the kernel. */
#ifndef CCKEY_TEST_GPU_COMMON_H
#define CCKEY_TEST_GPU_COMMON_H

#include "backends/backend.h"

/* The backend's ops, or skip the test with a one-line reason (not compiled
 * in, no driver, no device). */
const cckey_backend_ops *gpu_need(cckey_backend_kind kind);
/* The backend's ops, or skip the test when it is not compiled in (whether
 * it can run here is the test's own question). */
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
void gpu_case_lengths_0_300(cckey_backend_kind kind);
void gpu_case_block_boundaries(cckey_backend_kind kind);
void gpu_case_empty_messages(cckey_backend_kind kind);
void gpu_case_empty_job(cckey_backend_kind kind);
void gpu_case_duplicates(cckey_backend_kind kind);
void gpu_case_many_chunks(cckey_backend_kind kind);
void gpu_case_long_threshold_routing(cckey_backend_kind kind);
void gpu_case_long_messages(cckey_backend_kind kind);
void gpu_case_fault_chunk_backend(cckey_backend_kind kind);
void gpu_case_fault_chunk_planner(cckey_backend_kind kind);
void gpu_case_fault_build(cckey_backend_kind kind);
void gpu_case_make_keys(cckey_backend_kind kind);
void gpu_case_concurrent_batches(cckey_backend_kind kind);
void gpu_case_bad_settings(cckey_backend_kind kind);
/* The host's share (cckey_batch_config_set_device_share): the same digests with it on and
 * off; both sides get work; a device fault leaves only right digests. */
void gpu_case_share_identical(cckey_backend_kind kind);
void gpu_case_share_both_sides(cckey_backend_kind kind);
void gpu_case_share_fault(cckey_backend_kind kind);

/* The planner's "used" for a batch on backend b: its name, or name+cpu
 * (host threads shared the work, or finished it after a failure). */
void gpu_assert_used(const cckey_backend_ops *b, const char *used);

/* The edge cases as the Test()s of suite. */
#define GPU_COMMON_TESTS(suite, kind)                                                            \
    Test(suite, lengths_0_to_300) { gpu_case_lengths_0_300(kind); }                              \
    Test(suite, block_boundaries) { gpu_case_block_boundaries(kind); }                           \
    Test(suite, empty_messages) { gpu_case_empty_messages(kind); }                               \
    Test(suite, empty_batch) { gpu_case_empty_job(kind); }                                       \
    Test(suite, duplicates) { gpu_case_duplicates(kind); }                                       \
    Test(suite, batch_larger_than_a_chunk) { gpu_case_many_chunks(kind); }                       \
    Test(suite, long_threshold_routing) { gpu_case_long_threshold_routing(kind); }               \
    Test(suite, long_messages) { gpu_case_long_messages(kind); }                                 \
    Test(suite, fault_at_chunk_k_backend) { gpu_case_fault_chunk_backend(kind); }                \
    Test(suite, fault_at_chunk_k_planner) { gpu_case_fault_chunk_planner(kind); }                \
    Test(suite, fault_in_kernel_build) { gpu_case_fault_build(kind); }                           \
    Test(suite, make_keys_on_the_backend) { gpu_case_make_keys(kind); }                          \
    Test(suite, concurrent_batches) { gpu_case_concurrent_batches(kind); }                       \
    Test(suite, bad_settings) { gpu_case_bad_settings(kind); }                                       \
    Test(suite, share_same_digests_on_and_off) { gpu_case_share_identical(kind); }               \
    Test(suite, share_both_sides_work) { gpu_case_share_both_sides(kind); }                      \
    Test(suite, share_fault_at_chunk_k) { gpu_case_share_fault(kind); }

/* For a backend that cannot run here (its driver made unloadable): it says
 * so with a reason holding reason_part, wherever it is asked (available,
 * make_keys, the device listing), `auto` never picks it, and `auto` still
 * gives the right key on the CPU. */
void gpu_expect_unavailable(cckey_backend_kind kind, const char *reason_part);
/* The same with the backend's driver library set to library first (skipped
 * where the backend is not compiled in). */
void gpu_expect_unloadable(cckey_backend_kind kind, const char *library, const char *reason_part);

#endif
