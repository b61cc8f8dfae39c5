/* A small work-sharing loop (see parallel_for.h). */
#include "parallel_for.h"
#include "cckey.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef struct loop {
    size_t n;
    atomic_size_t next;
    void (*fn)(void *, size_t);
    void *arg;
} loop;

static void *run(void *p)
{
    loop *l = p;
    for (size_t i; (i = atomic_fetch_add(&l->next, 1)) < l->n;) l->fn(l->arg, i);
    return NULL;
}

void cli_parallel_for(size_t n, unsigned jobs, void (*fn)(void *arg, size_t i), void *arg)
{
    loop l = {.n = n, .fn = fn, .arg = arg};
    atomic_init(&l.next, 0);
    if (jobs > n) jobs = (unsigned)n;
    pthread_t *th = jobs > 1 ? calloc(jobs, sizeof *th) : NULL;
    unsigned started = 0;
    for (unsigned i = 0; th && i + 1 < jobs; i++)
        if (pthread_create(&th[i], NULL, run, &l) == 0) started++;
    run(&l);   /* this thread works too, and finishes alone when none started */
    for (unsigned i = 0; i < started; i++) pthread_join(th[i], NULL);
    free(th);
}

typedef struct ranges {
    size_t n, grain;
    void (*body)(void *, size_t, size_t);
    void *ctx;
} ranges;

static void one_range(void *p, size_t i)
{
    const ranges *r = p;
    size_t begin = i * r->grain, end = begin + r->grain < r->n ? begin + r->grain : r->n;
    r->body(r->ctx, begin, end);
}

void cli_parallel_ranges(size_t n, size_t grain, unsigned jobs, void (*body)(void *ctx, size_t begin, size_t end),
                         void *ctx)
{
    if (!grain) grain = 1;
    ranges r = {n, grain, body, ctx};
    cli_parallel_for((n + grain - 1) / grain, jobs ? jobs : cckey_cpu_threads(), one_range, &r);
}
