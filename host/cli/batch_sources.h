/* The source files of one batch run: each distinct source_file path is
 * opened, digested and closed once per run, whatever the chunking, and no
 * file stays open or mapped after its digest (so vm.max_map_count and the
 * open-file limit are never in play). Each file's digest is a source
 * handle (cckey_source_new_digest) that the library's
 * cckey_make_keys_sources puts into the keys of the tuples naming it.
 *
 * Memory: one entry (the path as written, its digest, about 80 bytes more)
 * per distinct path, for the whole run. */
#ifndef CCKEY_BATCH_SOURCES_H
#define CCKEY_BATCH_SOURCES_H

#include "cckey.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Files up to this size are read() into a per-thread buffer; larger ones
 * are mapped for the digest and unmapped at once. read() was 1.1-2.7x
 * faster than mmap from 1 KiB to 256 KiB, mmap 1.1-1.2x faster at 1 MiB
 * (bench/cli/sources_io.c, bench/RESULTS.md). */
#define BATCH_SOURCES_READ_MAX ((size_t)256 << 10)

typedef struct batch_source {
    char *rel;             /* the path as the manifest wrote it */
    size_t rel_len;
    uint64_t hash;
    cckey_source *src;     /* its digest, as the key's source field takes it */
    char *why;             /* why it could not be read; NULL when src is set */
} batch_source;

typedef struct batch_sources {
    const char *base_dir;
    batch_source *e;
    size_t n, cap;
    uint32_t *index;       /* entry + 1; 0 empty */
    size_t index_cap;
    size_t digested;       /* entries [0, digested) have hex or why */
} batch_sources;

/* The entry of path rel, added when new; SIZE_MAX without memory. */
size_t batch_sources_add(batch_sources *t, cckey_bytes rel);
/* Digest the entries added since the last call, on up to threads threads.
 * A file that cannot be read gets its reason in why (not an error here). */
void batch_sources_digest(batch_sources *t, unsigned threads);
void batch_sources_free(batch_sources *t);

#endif
