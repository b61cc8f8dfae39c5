/* The testing library's calls (host/testing/, -DCCKEY_TESTING): linked into
 * the tests and the cckey-testing CLI beside the release objects, never into
 * the release library. It adds code and changes none: the release sources
 * carry hook tables as data (NULL slots: cckey_md5_hooks, cckey_memo_hooks,
 * cckey_backend_hooks, cckey_store_hooks, a config's ops), which the files here fill in before
 * main. */
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

/* Digests finished on this thread by cckey_md5, cckey_md5_final and the
 * multi-message paths (md5_count.c): proves that a memo hit computes no MD5. */
extern _Thread_local uint64_t cckey_md5_count;

/* The store's put calls at(stage) at each stage of a write
 * (CCKEY_STORE_STAGE_* in store/store_internal.h), so a test can kill the
 * writer at a chosen point; NULL: no more calls (store_stages.c, through
 * cckey_store_hooks). */
void cckey_testing_store_stages(void (*at)(int stage));

/* The memo (host/core/memo.c, memo_probe.c): the tag (64-bit material hash) a tuple gets
 * and the set it falls into, so that a test can build a collision or fill a
 * set; and a hook a look-up calls after an entry's material compared equal
 * and before it copies the entry's key (the window the seqlock guards). */
uint64_t cckey_testing_memo_tag(cckey_bytes device, cckey_bytes name, const cckey_option *o, size_t n);
size_t cckey_testing_memo_set(cckey_bytes device, cckey_bytes name, const cckey_option *o, size_t n);
extern void (*cckey_testing_memo_hook)(void);

/* The native test engine (native_engine.c) as a backend that no kind
 * names: its ops, for the backend calls; and a config whose batches run on
 * it (until cckey_batch_config_set_backend names a kind). `auto` never
 * picks it. */
struct cckey_backend_ops;
const struct cckey_backend_ops *cckey_testing_native(void);
cckey_status cckey_testing_use_native(cckey_batch_config *cfg);

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
