/* Test hooks: compiled only into test builds (-DCCKEY_TESTING, the
 * cckey_testing library and the cckey-testing CLI), never into the release
 * library. See CMakeLists.txt's CCKEY_HOOKED_SOURCES for the files that
 * carry hooks. */
#ifndef CCKEY_TESTING_H
#define CCKEY_TESTING_H

#ifndef CCKEY_TESTING
#error "host/testing/testing.h is for test builds only (-DCCKEY_TESTING)"
#endif

#include "cckey.h"

#include <stdbool.h>

/* Device faults for batches with cfg: fail with CCKEY_ERR_DEVICE just before
 * chunk `chunk` is launched (-1: never), flip a bit of each chunk's first
 * digest (a device that is silently wrong), fail the kernel build through
 * the backend's real build-error path. */
cckey_status cckey_testing_set_faults(cckey_batch_config *cfg, long chunk, bool corrupt, bool build);

/* A device batch in a test build (registry.c): the pipeline over engine,
 * with the faults the job's settings ask for injected around the engine and
 * its driver (device_faults.c); the plain pipeline when they ask for none. */
struct cckey_digest_job;
struct cckey_gpu_ops;
cckey_status cckey_testing_gpu_digest(const struct cckey_digest_job *job, const struct cckey_gpu_ops *engine);

/* The memo (host/core/memo.c): the tag (64-bit material hash) a tuple gets
 * and the set it falls into, so that a test can build a collision or fill a
 * set; and a hook a look-up calls after an entry's material compared equal
 * and before it copies the entry's key (the window the seqlock guards). */
uint64_t cckey_testing_memo_tag(cckey_bytes device, cckey_bytes name, const cckey_option *o, size_t n);
size_t cckey_testing_memo_set(cckey_bytes device, cckey_bytes name, const cckey_option *o, size_t n);
extern void (*cckey_testing_memo_hook)(void);

/* The native test engine (native_engine.c) as a backend kind that only
 * test builds know: cckey_batch_config_set_backend and
 * cckey_backend_ops_for accept it; `auto` never picks it. */
#define CCKEY_BACKEND_NATIVE_TEST ((cckey_backend_kind)100)

/* The native engine's entry points, for cckey_native_fail. */
typedef enum cckey_native_call {
    CCKEY_NATIVE_NONE = -1,
    CCKEY_NATIVE_OPEN = 0,
    CCKEY_NATIVE_ALLOC,
    CCKEY_NATIVE_LAUNCH,
    CCKEY_NATIVE_WAIT,
    CCKEY_NATIVE_CALLS
} cckey_native_call;

/* Make the nth call (1-based, counted from now, in any thread) of `call`
 * fail with CCKEY_ERR_DEVICE, once, as a driver error there would. */
void cckey_native_fail(cckey_native_call call, unsigned nth);

#endif
