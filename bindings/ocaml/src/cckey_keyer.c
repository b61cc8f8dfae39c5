/* A helper thread for Cckey.make_keys: it runs cckey_make_keys on one block
 * of a batch while the thread holding the runtime lock copies the next
 * block out of the OCaml heap and turns the previous block's keys into
 * OCaml strings, so that the binding's own work overlaps the library's
 * instead of adding to it. (The Python binding has its own, alike.) */
#include "cckey_keyer.h"

#include <string.h>

static void copy(char *dst, size_t size, const char *src)
{
    size_t len = strlen(src);
    if (len >= size) len = size - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

void cckey_ml_job_run(cckey_ml_job *job)
{
    job->status = cckey_make_keys(job->out, job->tuples, job->n, job->cfg);
    /* cckey_last_error is per thread, and the config's warning is
     * overwritten by the next block: copied for the runtime's thread. */
    const char *w = cckey_batch_config_warning(job->cfg);
    copy(job->detail, sizeof job->detail, job->status != CCKEY_OK ? cckey_last_error() : "");
    copy(job->warning, sizeof job->warning, job->status == CCKEY_OK && w ? w : "");
}

static void *keyer_main(void *arg)
{
    cckey_ml_keyer *k = arg;
    pthread_mutex_lock(&k->mu);
    for (;;) {
        while (!k->pending && !k->quit) pthread_cond_wait(&k->cv, &k->mu);
        if (!k->pending) break;
        pthread_mutex_unlock(&k->mu);
        cckey_ml_job_run(k->job);
        pthread_mutex_lock(&k->mu);
        k->pending = 0;
        pthread_cond_broadcast(&k->cv);
    }
    pthread_mutex_unlock(&k->mu);
    return NULL;
}

int cckey_ml_keyer_start(cckey_ml_keyer *k)
{
    memset(k, 0, sizeof *k);
    if (pthread_mutex_init(&k->mu, NULL) != 0) return -1;
    if (pthread_cond_init(&k->cv, NULL) != 0) {
        pthread_mutex_destroy(&k->mu);
        return -1;
    }
    if (pthread_create(&k->thread, NULL, keyer_main, k) != 0) {
        pthread_cond_destroy(&k->cv);
        pthread_mutex_destroy(&k->mu);
        return -1;
    }
    return 0;
}

void cckey_ml_keyer_submit(cckey_ml_keyer *k, cckey_ml_job *job)
{
    pthread_mutex_lock(&k->mu);
    k->job = job;
    k->pending = 1;
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
}

void cckey_ml_keyer_wait(cckey_ml_keyer *k)
{
    pthread_mutex_lock(&k->mu);
    while (k->pending) pthread_cond_wait(&k->cv, &k->mu);
    pthread_mutex_unlock(&k->mu);
}

void cckey_ml_keyer_stop(cckey_ml_keyer *k)
{
    pthread_mutex_lock(&k->mu);
    k->quit = 1;
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
    pthread_join(k->thread, NULL);
    pthread_cond_destroy(&k->cv);
    pthread_mutex_destroy(&k->mu);
}
