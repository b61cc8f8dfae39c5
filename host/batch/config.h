#ifndef CCKEY_BATCH_CONFIG_H
#define CCKEY_BATCH_CONFIG_H

#include "cckey.h"

struct cckey_batch_config {
    cckey_backend_kind backend;
    unsigned threads;
    cckey_verify_mode verify;
    cckey_progress_fn progress;
    void *progress_user;
    /* Results of the last batch, written through a const config: the
     * config is always heap-allocated by cckey_batch_config_new. */
    char used[32];
    char warning[1024];
};

#endif
