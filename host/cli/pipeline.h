/* A two-stage pipeline over a ring of chunk buffers: a reader thread fills
 * the buffers in order while the calling thread consumes them in the same
 * order, so reading and parsing chunk k+1 overlaps whatever the caller does
 * with chunk k. At most `depth` buffers exist, whatever the input's length:
 * that is the memory bound. */
#ifndef CCKEY_CLI_PIPELINE_H
#define CCKEY_CLI_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>

/* Fill one buffer; false when it is the last one (end of input or an
 * error the buffer itself records). The reader runs with thread
 * cancellation disabled: a fill that may block on input (a terminal, a
 * pipe) enables it around the blocking read only, so that
 * cli_pipeline_stop never waits on input nobody will send. */
typedef bool (*cli_fill_fn)(void *ctx, void *buf);

typedef struct cli_pipeline cli_pipeline;

/* Start the reader over bufs[0..depth) (depth >= 2). With threaded false,
 * or when no thread can start, buffers are filled on the caller's thread
 * inside cli_pipeline_take: the same order, no overlap. NULL without memory. */
cli_pipeline *cli_pipeline_start(void **bufs, size_t depth, bool threaded, cli_fill_fn fill, void *ctx);

/* The next filled buffer, in order; NULL after the last one. */
void *cli_pipeline_take(cli_pipeline *p);

/* Hand back the buffer last taken: the reader may fill it again. */
void cli_pipeline_release(cli_pipeline *p);

/* Stop the reader (at once, even if it waits on input), wait for it and
 * free p. The buffers stay the caller's. */
void cli_pipeline_stop(cli_pipeline *p);

#endif
