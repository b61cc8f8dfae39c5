/* The chunk pipeline of cckey batch (see pipeline.h). */
#include "pipeline.h"

#include <pthread.h>
#include <stdlib.h>

struct cli_pipeline {
    void **bufs;
    size_t depth;
    cli_fill_fn fill;
    void *ctx;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t filled;     /* buffers the reader has filled */
    size_t taken;      /* buffers the caller has taken */
    size_t released;   /* buffers the caller has handed back */
    bool done;         /* the reader has filled the last buffer */
    bool stop;         /* the caller wants no more */
    bool threaded;
    bool joined;       /* the reader has ended and been waited for */
    pthread_t thread;
};

static void *reader(void *arg)
{
    cli_pipeline *p = arg;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    pthread_mutex_lock(&p->mu);
    while (!p->done) {
        while (!p->stop && p->filled - p->released == p->depth) pthread_cond_wait(&p->cv, &p->mu);
        if (p->stop) break;
        void *buf = p->bufs[p->filled % p->depth];
        pthread_mutex_unlock(&p->mu);
        bool more = p->fill(p->ctx, buf);   /* the slow part, unlocked */
        pthread_mutex_lock(&p->mu);
        p->filled++;
        p->done = !more;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

cli_pipeline *cli_pipeline_start(void **bufs, size_t depth, bool threaded, cli_fill_fn fill, void *ctx)
{
    cli_pipeline *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    *p = (cli_pipeline){.bufs = bufs, .depth = depth < 2 ? 2 : depth, .fill = fill, .ctx = ctx};
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->threaded = threaded && pthread_create(&p->thread, NULL, reader, p) == 0;
    return p;
}

void *cli_pipeline_take(cli_pipeline *p)
{
    if (!p->threaded) {
        if (p->done) return NULL;
        void *buf = p->bufs[p->taken++ % p->depth];
        p->done = !p->fill(p->ctx, buf);
        return buf;
    }
    pthread_mutex_lock(&p->mu);
    while (p->taken == p->filled && !p->done) pthread_cond_wait(&p->cv, &p->mu);
    void *buf = p->taken < p->filled ? p->bufs[p->taken++ % p->depth] : NULL;
    bool ended = p->done;
    pthread_mutex_unlock(&p->mu);
    /* A reader that has filled the last buffer is ending: wait for it now,
     * so that no finished thread is left unjoined should the process exit
     * from inside the keying stage (the SIGBUS handler of output.c). */
    if (ended && !p->joined) {
        pthread_join(p->thread, NULL);
        p->joined = true;
    }
    return buf;
}

void cli_pipeline_release(cli_pipeline *p)
{
    pthread_mutex_lock(&p->mu);
    if (p->released < p->taken) p->released++;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void cli_pipeline_stop(cli_pipeline *p)
{
    if (!p) return;
    if (p->threaded && !p->joined) {
        pthread_mutex_lock(&p->mu);
        p->stop = true;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        /* A reader blocked on input is cancelled there (the only place its
         * fill enables cancellation); anywhere else it sees stop and ends. */
        pthread_cancel(p->thread);
        pthread_join(p->thread, NULL);
    }
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
