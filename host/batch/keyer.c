/* cckey_keyer (see cckey.h): cckey_make_keys on a thread of its own, one
 * call at a time, so that a binding whose caller holds a runtime lock (the
 * GIL, OCaml's runtime lock) can convert the next block of tuples while the
 * library keys this one. Both bindings use it rather than a thread each. */
#include "../core/internal.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cckey_keyer {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char (*out)[CCKEY_KEY_LEN + 1];
    const cckey_tuple *tuples;
    size_t n;
    const cckey_batch_config *config;
    cckey_status status;
    char detail[1024];   /* cckey_last_error is per thread: carried to the waiter */
    bool pending, quit;
};

static void *keyer_main(void *arg)
{
    cckey_keyer *k = arg;
    pthread_mutex_lock(&k->mu);
    for (;;) {
        while (!k->pending && !k->quit) pthread_cond_wait(&k->cv, &k->mu);
        if (!k->pending) break;
        pthread_mutex_unlock(&k->mu);
        cckey_status st = cckey_make_keys(k->out, k->tuples, k->n, k->config);
        pthread_mutex_lock(&k->mu);
        k->status = st;
        if (st != CCKEY_OK) snprintf(k->detail, sizeof k->detail, "%s", cckey_last_error());
        k->pending = false;
        pthread_cond_broadcast(&k->cv);
    }
    pthread_mutex_unlock(&k->mu);
    return NULL;
}

cckey_status cckey_keyer_new(cckey_keyer **out)
{
    *out = NULL;
    cckey_keyer *k = calloc(1, sizeof *k);
    if (!k) return cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
    pthread_mutex_init(&k->mu, NULL);
    pthread_cond_init(&k->cv, NULL);
    if (pthread_create(&k->thread, NULL, keyer_main, k) != 0) {
        pthread_cond_destroy(&k->cv);
        pthread_mutex_destroy(&k->mu);
        free(k);
        return cckey_fail(CCKEY_ERR_THREAD, "cannot start the keyer's thread");
    }
    *out = k;
    return CCKEY_OK;
}

void cckey_keyer_submit(cckey_keyer *k, char (*out)[CCKEY_KEY_LEN + 1], const cckey_tuple *tuples, size_t n,
                        const cckey_batch_config *config)
{
    pthread_mutex_lock(&k->mu);
    k->out = out, k->tuples = tuples, k->n = n, k->config = config;
    k->pending = true;
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
}

cckey_status cckey_keyer_wait(cckey_keyer *k)
{
    pthread_mutex_lock(&k->mu);
    while (k->pending) pthread_cond_wait(&k->cv, &k->mu);
    cckey_status st = k->status;
    k->status = CCKEY_OK;   /* a second wait, with nothing submitted, is OK */
    pthread_mutex_unlock(&k->mu);
    return st == CCKEY_OK ? CCKEY_OK : cckey_fail(st, "%s", k->detail);
}

void cckey_keyer_free(cckey_keyer *k)
{
    if (!k) return;
    pthread_mutex_lock(&k->mu);
    k->quit = true;   /* a submitted call still runs first */
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
    pthread_join(k->thread, NULL);
    pthread_cond_destroy(&k->cv);
    pthread_mutex_destroy(&k->mu);
    free(k);
}
