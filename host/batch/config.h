#ifndef CCKEY_BATCH_CONFIG_H
#define CCKEY_BATCH_CONFIG_H

#include "cckey.h"
#include "../backends/backend.h"

#include <pthread.h>

struct cckey_batch_config {
    cckey_backend_kind backend;
    unsigned threads;
    cckey_verify_mode verify;
    cckey_progress_fn progress;
    void *progress_user;
    cckey_device_settings device;   /* how a device backend runs the batch */
    /* Results of the last batch, written through a const config: the
     * config is always heap-allocated by cckey_batch_config_new. Batches
     * build them privately and publish them under report_lock, so
     * concurrent batches may share one config. */
    pthread_mutex_t report_lock;
    char used[32];
    char warning[1024];
};

/* What a batch reports back: kept on the batch's own stack until the end. */
typedef struct cckey_batch_report {
    char used[32];
    char warning[1024];
} cckey_batch_report;

#endif
