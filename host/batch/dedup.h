/* Parallel deduplication: items with equal content get one id, on many
 * threads, with no serial pass over the items.
 *
 * Items are split by the top bits of their hash into DEDUP_PARTS
 * partitions; each partition is deduplicated alone by one thread, in a table
 * small enough to stay in cache at any batch size (a batch of 10^7 distinct
 * names puts about 40k in each). Within a partition, items keep their index
 * order; ids then number the distinct items in order of first appearance,
 * whatever the thread count, so that later passes read per-id tables in
 * item order.
 *
 * Links: callers that already know an item equals an earlier one (the same
 * pointer, found in a per-thread cache) skip the tables. A hash with bit 0
 * set is a real hash; one with bit 0 clear is (root << 1): the item has the
 * id of item root, which must be a real item. */
#ifndef CCKEY_DEDUP_H
#define CCKEY_DEDUP_H

#include "cckey.h"
#include "scratch.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DEDUP_BITS 8
#define DEDUP_PARTS (1u << DEDUP_BITS)

/* Whether items a and b (same hash) have equal content. */
typedef bool (*cckey_same_fn)(const void *ctx, size_t a, size_t b);

typedef struct cckey_dedup {
    size_t n;                /* items */
    const uint64_t *hash;    /* per item (borrowed) */
    uint32_t *local;         /* per real item: its global id if is_rep, else its id within its partition */
    uint8_t *is_rep;         /* per real item: the first with its content */
    uint32_t *remap;         /* at start[partition] + id within it: the global id */
    size_t start[DEDUP_PARTS + 1];
    size_t distinct;
    size_t *rep;             /* per global id: the lowest item index with it */
    bool flat;               /* filled by one pass (intern_block.c): local holds every item's global id */
} cckey_dedup;

/* Fill d for n items (n < UINT32_MAX) with hashes hash[] and equality same().
 * Its tables come from mem and live as long as mem's batch.
 * CCKEY_OK, CCKEY_ERR_NO_MEMORY or CCKEY_ERR_THREAD. */
cckey_status cckey_dedup_run(cckey_dedup *d, size_t n, const uint64_t *hash, cckey_same_fn same, const void *ctx,
                             unsigned threads, cckey_scratch *mem);

static inline uint64_t cckey_dedup_real(uint64_t h) { return h | 1; }
static inline uint64_t cckey_dedup_link(size_t root) { return (uint64_t)root << 1; }

/* The global id of item i. Ids number the distinct items in order of
 * first appearance. */
static inline uint32_t cckey_dedup_id(const cckey_dedup *d, size_t i)
{
    if (d->flat) return d->local[i];
    uint64_t h = d->hash[i];
    if (!(h & 1)) h = d->hash[i = (size_t)(h >> 1)];
    if (d->is_rep[i]) return d->local[i];
    return d->remap[d->start[h >> (64 - DEDUP_BITS)] + d->local[i]];
}

#endif
