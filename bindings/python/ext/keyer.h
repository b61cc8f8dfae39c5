/* make_keys' helper thread (keyer.c). Plain C: no Python calls, so its
 * functions run with the GIL released. */
#ifndef PYCK_KEYER_H
#define PYCK_KEYER_H

#include <pthread.h>

#include "cckey.h"

/* One cckey_make_keys call, and what it returned. */
typedef struct pyck_job {
    char (*out)[CCKEY_KEY_LEN + 1];
    const cckey_tuple *tuples;
    size_t n;
    const cckey_batch_config *cfg;
    cckey_status status;
    char detail[1024];      /* cckey_last_error of a failed call */
    char warning[1024];     /* cckey_batch_config_warning after the call */
} pyck_job;

/* Runs job on this thread. */
void pyck_job_run(pyck_job *job);

/* A thread that runs one submitted job at a time. */
typedef struct pyck_keyer {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pyck_job *job;
    int pending, quit;
} pyck_keyer;

/* Returns 0, or -1 when no thread could be started. */
int pyck_keyer_start(pyck_keyer *k);
/* Hands job to the thread; the previous job must have been waited for. */
void pyck_keyer_submit(pyck_keyer *k, pyck_job *job);
/* Returns once the submitted job (if any) has run. */
void pyck_keyer_wait(pyck_keyer *k);
/* Waits for the thread to end; a submitted job runs first. */
void pyck_keyer_stop(pyck_keyer *k);

#endif
