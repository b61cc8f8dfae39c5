#ifndef CCKEY_BATCH_CONFIG_H
#define CCKEY_BATCH_CONFIG_H

#include "cckey.h"
#include "../backends/backend.h"
#include "scratch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

/* Threads of a batch whose tables a config keeps between batches. */
#define CCKEY_KEPT_SCRATCH 16

struct cckey_batch_config {
    cckey_backend_kind backend;
    /* A backend to run in backend's place, or NULL: the testing library's
     * seam for its native engine (cckey_testing_use_native), which no kind
     * names. Release code never sets it. */
    const cckey_backend_ops *ops;
    unsigned threads;
    cckey_verify_mode verify;
    bool verify_seed_set;   /* else each sample draws a fresh seed */
    uint64_t verify_seed;
    cckey_progress_fn progress;
    cckey_progress_cancel_fn progress_cancel;   /* set instead of progress */
    void *progress_user;
    cckey_device_settings device;   /* how a device backend runs the batch */
    struct cckey_config_state *state;   /* NULL for the defaults of a NULL config */
};

/* What a config's batches leave for later: the last batch's report
 * (cckey_batch_config_used, _warning) and its scratch tables. Kept apart
 * from the settings, behind the config's pointer, so that a batch given a
 * const config changes none of the config's own bytes: it writes here, under
 * the lock, and concurrent batches may share one config. A batch's own
 * report goes to its cckey_batch_result (cckey_make_keys_ex). */
typedef struct cckey_config_state {
    pthread_mutex_t lock;
    char used[32];
    char warning[1024];
    /* The last batch's scratch memory, for the next (scratch.h), one per
     * thread of a batch planned by blocks (plan.h). Concurrent batches each
     * take it in turn or start empty. */
    cckey_scratch scratch[CCKEY_KEPT_SCRATCH];
} cckey_config_state;

/* The config's kept scratch memory (empty when cfg is NULL or another batch
 * holds it), and giving it back at the end of a batch: reset for the next
 * one, or freed when cfg is NULL or already keeps one. */
void cckey_batch_config_take_scratch(const cckey_batch_config *cfg, cckey_scratch s[CCKEY_KEPT_SCRATCH]);
void cckey_batch_config_keep_scratch(const cckey_batch_config *cfg, cckey_scratch s[CCKEY_KEPT_SCRATCH]);

/* Digests --verify=sample recomputes (see verify() in planner.c). */
#define CCKEY_VERIFY_SAMPLE_SIZE 46052u

/* What a batch reports back: kept on the batch's own stack until the end,
 * then copied to the caller's cckey_batch_result and the config's state. */
typedef struct cckey_batch_report {
    char used[32];
    char warning[1024];
} cckey_batch_report;

/* The report as the config's last batch (cckey_batch_config_used, _warning). */
void cckey_batch_config_publish(const cckey_batch_config *cfg, const cckey_batch_report *rep);

/* The one progress callback the backends see (progress.c): it calls the
 * config's callback and turns a cancel into the flag backends watch. */
typedef struct cckey_progress_relay {
    const cckey_batch_config *cfg;
    atomic_bool cancelled;
} cckey_progress_relay;
void cckey_progress_relay_call(void *relay, uint64_t done, uint64_t total);

#endif
