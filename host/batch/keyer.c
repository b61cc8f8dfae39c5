/* cckey_keyer (see cckey.h): cckey_make_keys on a thread of its own, so that
 * a binding whose caller holds a runtime lock (the GIL, OCaml's runtime
 * lock) can convert the next blocks of tuples while the library keys this
 * one. Calls queue, up to CCKEY_KEYER_DEPTH: a caller whose own work comes
 * in bursts (a garbage collector's slice) still leaves the thread a block
 * to key meanwhile. */
#include "../core/internal.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct keyer_job {
    char (*out)[CCKEY_KEY_LEN + 1];
    const cckey_tuple *tuples;
    size_t n;
    const cckey_batch_config *config;
    cckey_status status;
    char detail[1024];    /* cckey_last_error is per thread: carried to the waiter */
    char warning[1024];   /* this call's own (cckey_batch_result) */
} keyer_job;

struct cckey_keyer {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    keyer_job jobs[CCKEY_KEYER_DEPTH];   /* a ring: job c is jobs[c % DEPTH] */
    size_t submitted, finished, waited;  /* counts of calls: waited <= finished <= submitted */
    bool quit;
    char last_warning[1024];   /* the call the last wait returned: the caller's thread only */
};

static void run_job(keyer_job *j)
{
    cckey_batch_result r;
    cckey_status st = cckey_make_keys_ex(j->out, j->tuples, j->n, j->config, &r);
    j->status = st;
    snprintf(j->detail, sizeof j->detail, "%s", st != CCKEY_OK ? cckey_last_error() : "");
    snprintf(j->warning, sizeof j->warning, "%s", st == CCKEY_OK ? r.warning : "");
}

static void *keyer_main(void *arg)
{
    cckey_keyer *k = arg;
    pthread_mutex_lock(&k->mu);
    for (;;) {
        while (k->finished == k->submitted && !k->quit) pthread_cond_wait(&k->cv, &k->mu);
        if (k->finished == k->submitted) break;
        keyer_job *j = &k->jobs[k->finished % CCKEY_KEYER_DEPTH];
        pthread_mutex_unlock(&k->mu);
        run_job(j);   /* the caller touches this slot again only after finished passes it */
        pthread_mutex_lock(&k->mu);
        k->finished++;
        pthread_cond_broadcast(&k->cv);
    }
    pthread_mutex_unlock(&k->mu);
    return NULL;
}

/* A keyer whose thread is not running (never started, or joined). */
static void keyer_destroy(cckey_keyer *k)
{
    pthread_cond_destroy(&k->cv);
    pthread_mutex_destroy(&k->mu);
    free(k);
}

cckey_status cckey_keyer_new(cckey_keyer **out)
{
    if (!out) return cckey_fail(CCKEY_ERR_INVALID_ARG, "cckey_keyer_new: out is NULL");
    *out = NULL;
    cckey_keyer *k = calloc(1, sizeof *k);
    if (!k) return cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
    pthread_mutex_init(&k->mu, NULL);
    pthread_cond_init(&k->cv, NULL);
    if (pthread_create(&k->thread, NULL, keyer_main, k) != 0) {
        keyer_destroy(k);
        return cckey_fail(CCKEY_ERR_THREAD, "cannot start the keyer's thread");
    }
    *out = k;
    return CCKEY_OK;
}

cckey_status cckey_keyer_submit(cckey_keyer *k, char (*out)[CCKEY_KEY_LEN + 1], const cckey_tuple *tuples,
                                size_t n, const cckey_batch_config *config)
{
    /* Refused here, not at the wait: nothing is queued for a call that
     * cannot run. */
    if (!k) return cckey_fail(CCKEY_ERR_INVALID_ARG, "cckey_keyer_submit: the keyer is NULL");
    if (n && (!out || !tuples))
        return cckey_fail(CCKEY_ERR_INVALID_ARG, "cckey_keyer_submit: %s is NULL with n = %zu", out ? "tuples" : "out", n);
    pthread_mutex_lock(&k->mu);
    if (k->submitted - k->waited == CCKEY_KEYER_DEPTH) {
        pthread_mutex_unlock(&k->mu);
        return cckey_fail(CCKEY_ERR_INVALID_ARG, "%d calls already submitted and not waited for",
                          CCKEY_KEYER_DEPTH);
    }
    k->jobs[k->submitted % CCKEY_KEYER_DEPTH] = (keyer_job){.out = out, .tuples = tuples, .n = n, .config = config};
    k->submitted++;
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
    return CCKEY_OK;
}

cckey_status cckey_keyer_wait(cckey_keyer *k)
{
    if (!k) return cckey_fail(CCKEY_ERR_INVALID_ARG, "cckey_keyer_wait: the keyer is NULL");
    pthread_mutex_lock(&k->mu);
    if (k->waited == k->submitted) {   /* nothing submitted: OK */
        pthread_mutex_unlock(&k->mu);
        k->last_warning[0] = '\0';
        return CCKEY_OK;
    }
    while (k->finished == k->waited) pthread_cond_wait(&k->cv, &k->mu);
    keyer_job *j = &k->jobs[k->waited % CCKEY_KEYER_DEPTH];
    k->waited++;
    pthread_mutex_unlock(&k->mu);
    /* The slot is the caller's until it submits again. */
    memcpy(k->last_warning, j->warning, sizeof j->warning);
    return j->status == CCKEY_OK ? CCKEY_OK : cckey_fail(j->status, "%s", j->detail);
}

const char *cckey_keyer_warning(const cckey_keyer *k) { return k ? k->last_warning : ""; }

void cckey_keyer_free(cckey_keyer *k)
{
    if (!k) return;
    pthread_mutex_lock(&k->mu);
    k->quit = true;   /* submitted calls still run first */
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
    pthread_join(k->thread, NULL);
    keyer_destroy(k);
}
