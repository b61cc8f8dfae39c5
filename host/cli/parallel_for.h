/* fn(arg, i) for i in [0, n) on up to jobs threads (on this one when no
 * thread starts). Items are taken one at a time: they may be slow and
 * uneven (a remote look-up). */
#ifndef CCKEY_CLI_PARALLEL_FOR_H
#define CCKEY_CLI_PARALLEL_FOR_H

#include <stddef.h>

void cli_parallel_for(size_t n, unsigned jobs, void (*fn)(void *arg, size_t i), void *arg);

/* body(ctx, begin, end) over [0, n) in ranges of grain items, on up to jobs
 * threads (0: every core), for cheap, even items (parsing, hashing). */
void cli_parallel_ranges(size_t n, size_t grain, unsigned jobs, void (*body)(void *ctx, size_t begin, size_t end),
                         void *ctx);

#endif
