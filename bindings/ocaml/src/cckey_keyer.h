/* make_keys' helper thread (cckey_keyer.c). Plain C: no OCaml runtime
 * calls, so its functions run with the runtime lock released. */
#ifndef CCKEY_ML_KEYER_H
#define CCKEY_ML_KEYER_H

#include <pthread.h>

#include "cckey.h"

/* One cckey_make_keys call, and what it returned. */
typedef struct cckey_ml_job {
    char (*out)[CCKEY_KEY_LEN + 1];
    const cckey_tuple *tuples;
    size_t n;
    const cckey_batch_config *cfg;
    cckey_status status;
    char detail[1024];      /* cckey_last_error of a failed call */
    char warning[1024];     /* cckey_batch_config_warning after the call */
} cckey_ml_job;

/* Runs job on this thread. */
void cckey_ml_job_run(cckey_ml_job *job);

/* A thread that runs one submitted job at a time. */
typedef struct cckey_ml_keyer {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    cckey_ml_job *job;
    int pending, quit;
} cckey_ml_keyer;

/* Returns 0, or -1 when no thread could be started. */
int cckey_ml_keyer_start(cckey_ml_keyer *k);
/* Hands job to the thread; the previous job must have been waited for. */
void cckey_ml_keyer_submit(cckey_ml_keyer *k, cckey_ml_job *job);
/* Returns once the submitted job (if any) has run. */
void cckey_ml_keyer_wait(cckey_ml_keyer *k);
/* Waits for the thread to end; a submitted job runs first. */
void cckey_ml_keyer_stop(cckey_ml_keyer *k);

#endif
