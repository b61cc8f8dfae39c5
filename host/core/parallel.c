/* A fork-join helper. Threads live for one call: batches are long enough
 * that a pool's complexity would buy nothing measurable. */
#include "parallel.h"
#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

unsigned cckey_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

unsigned cckey_cpu_threads(void) { return cckey_cpu_count(); }

typedef struct worker {
    pthread_t thread;
    void (*fn)(void *, unsigned);
    void *arg;
    unsigned tid;
} worker;

static void *trampoline(void *p)
{
    worker *w = p;
    w->fn(w->arg, w->tid);
    return NULL;
}

cckey_status cckey_parallel_run(unsigned threads, void (*fn)(void *arg, unsigned tid), void *arg)
{
    if (threads <= 1) {
        fn(arg, 0);
        return CCKEY_OK;
    }
    worker *w = calloc(threads, sizeof *w);
    if (!w) return cckey_fail(CCKEY_ERR_NO_MEMORY, "thread table");
    unsigned started = 1;
    for (unsigned t = 1; t < threads; t++) {
        w[t] = (worker){.fn = fn, .arg = arg, .tid = t};
        if (pthread_create(&w[t].thread, NULL, trampoline, &w[t]) != 0) break;
        started++;
    }
    /* Work is claimed dynamically, so fewer threads still finish the job. */
    fn(arg, 0);
    for (unsigned t = 1; t < started; t++) pthread_join(w[t].thread, NULL);
    free(w);
    return CCKEY_OK;
}

typedef struct range_work {
    size_t n, grain;
    void (*body)(void *, size_t, size_t);
    void *ctx;
    _Atomic size_t next;
} range_work;

static void range_worker(void *arg, unsigned tid)
{
    (void)tid;
    range_work *w = arg;
    for (;;) {
        size_t begin = atomic_fetch_add_explicit(&w->next, w->grain, memory_order_relaxed);
        if (begin >= w->n) return;
        w->body(w->ctx, begin, w->n - begin > w->grain ? begin + w->grain : w->n);
    }
}

cckey_status cckey_parallel_for(unsigned threads, size_t n, size_t grain,
                                void (*body)(void *ctx, size_t begin, size_t end), void *ctx)
{
    if (n == 0) return CCKEY_OK;
    if (grain == 0) grain = 1;
    size_t enough = (n + grain - 1) / grain;
    if (threads == 0) threads = cckey_cpu_count();
    if (enough < threads) threads = (unsigned)enough;
    range_work w = {.n = n, .grain = grain, .body = body, .ctx = ctx};
    atomic_init(&w.next, 0);
    return cckey_parallel_run(threads, range_worker, &w);
}
