/* A small work-sharing loop (see parallel_for.h). */
#include "parallel_for.h"

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
