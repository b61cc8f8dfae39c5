/* Fork-join helpers shared by the batch planner and the backends. */
#ifndef CCKEY_PARALLEL_H
#define CCKEY_PARALLEL_H

#include "cckey.h"

/* Online cores, at least 1. */
unsigned cckey_cpu_count(void);

/* Run fn(arg, tid) for tid in [0, threads): tid 0 on the calling thread. */
cckey_status cckey_parallel_run(unsigned threads, void (*fn)(void *arg, unsigned tid), void *arg);

/* body(ctx, begin, end) over [0, n) in claims of `grain` items, on at most
 * `threads` threads (fewer when n is small: each thread gets at least
 * `grain` items). */
cckey_status cckey_parallel_for(unsigned threads, size_t n, size_t grain,
                                void (*body)(void *ctx, size_t begin, size_t end), void *ctx);

#endif
