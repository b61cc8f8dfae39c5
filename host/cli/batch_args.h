/* cckey batch's command line (batch_args.c). */
#ifndef CCKEY_CLI_BATCH_ARGS_H
#define CCKEY_CLI_BATCH_ARGS_H

#include "cli.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct batch_opts {
    const char *input, *output;
    bool jsonl, json, keep_going, quiet;
    unsigned long chunk;
    bool chunk_set;   /* --chunk given: every chunk that size */
    size_t max_line;
    unsigned threads;
    cckey_batch_config *cfg;
} batch_opts;

/* batch_args' "go on": the options are taken and the run may start. */
#define BATCH_RUN (-1)

/* The whole command line into o (whose cfg exists): BATCH_RUN, or the
 * exit code with the error printed (CLI_OK after --help). */
int batch_args(int argc, char **argv, batch_opts *o);

#endif
