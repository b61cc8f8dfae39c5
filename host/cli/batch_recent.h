/* Repeats within a run of manifest lines, given one address. Each line's
 * strings decode to their own place in the chunk, so equal devices, names,
 * sources and option sets arrive at distinct addresses, and the library
 * would hash and compare every one of them. A small direct-mapped memory of
 * recent values lets the parser point a repeat at the first copy instead:
 * the planner's equal-address fast path then takes it (host/batch/planner.c).
 * Only equal bytes are ever shared, so keys cannot change. */
#ifndef CCKEY_CLI_BATCH_RECENT_H
#define CCKEY_CLI_BATCH_RECENT_H

#include "cckey.h"

#include <stdbool.h>
#include <stddef.h>

#define RECENT_STRINGS 256
#define RECENT_SETS 32

typedef struct batch_recent {
    cckey_bytes strings[RECENT_STRINGS];
    struct {
        cckey_bytes raw;
        size_t off;      /* an options block offset: the block may move */
    } sets[RECENT_SETS];
} batch_recent;

/* b, or an earlier string with the same bytes. */
cckey_bytes batch_recent_string(batch_recent *r, cckey_bytes b);

/* The block offset of an earlier option set written exactly as raw (the
 * "options" value's bytes in its line, which stays in place while the
 * table is used: equal bytes parse to equal sets), or SIZE_MAX after
 * remembering off as the place of this one. */
size_t batch_recent_set(batch_recent *r, cckey_bytes raw, size_t off);

#endif
