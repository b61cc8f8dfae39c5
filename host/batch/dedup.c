/* Partitioned deduplication (see dedup.h). Three parallel passes: count
 * the items of each partition per block of items, scatter item indices into
 * partition order, then deduplicate each partition in its own table. Only
 * the per-block counts (blocks x partitions) are summed serially. */
#include "dedup.h"
#include "../backends/backend.h"
#include "../core/internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK ((size_t)1 << 16)   /* items per counting block */

static inline unsigned part_of(uint64_t h) { return (unsigned)(h >> (64 - DEDUP_BITS)); }

typedef struct dedup_work {
    cckey_dedup *d;
    cckey_same_fn same;
    const void *ctx;
    size_t blocks;
    size_t (*count)[DEDUP_PARTS];   /* per block: items per partition, then scatter cursors */
    uint32_t *order;                /* item indices, partition after partition */
    size_t start[DEDUP_PARTS + 1];  /* each partition's range in order */
    size_t found[DEDUP_PARTS];      /* distinct items per partition */
    uint32_t *first;                /* per partition: the item of each local id (laid out like order) */
    _Atomic int failed;
} dedup_work;

static void count_blocks(void *ctx, size_t begin, size_t end)
{
    dedup_work *w = ctx;
    for (size_t b = begin; b < end; b++) {
        size_t *c = w->count[b];
        memset(c, 0, DEDUP_PARTS * sizeof *c);
        size_t lo = b * BLOCK, hi = lo + BLOCK < w->d->n ? lo + BLOCK : w->d->n;
        for (size_t i = lo; i < hi; i++) {
            uint64_t h = w->d->hash[i];
            if (h & 1) c[part_of(h)]++;
        }
    }
}

static void scatter_blocks(void *ctx, size_t begin, size_t end)
{
    dedup_work *w = ctx;
    for (size_t b = begin; b < end; b++) {
        size_t *cur = w->count[b];
        size_t lo = b * BLOCK, hi = lo + BLOCK < w->d->n ? lo + BLOCK : w->d->n;
        for (size_t i = lo; i < hi; i++) {
            uint64_t h = w->d->hash[i];
            if (h & 1) w->order[cur[part_of(h)]++] = (uint32_t)i;
        }
    }
}

/* One partition: open addressing on the hash's low bits; a slot holds the
 * local id + 1 and the hash's low 32 bits, so most probes never touch the
 * items themselves. */
typedef struct slot {
    uint32_t id1, h32;
} slot;

static void dedup_parts(void *ctx, size_t begin, size_t end)
{
    dedup_work *w = ctx;
    cckey_dedup *d = w->d;
    slot *table = NULL;
    size_t table_cap = 0;
    for (size_t p = begin; p < end; p++) {
        size_t lo = w->start[p], hi = w->start[p + 1], m = hi - lo;
        if (m == 0) continue;
        size_t cap = 16;
        while (cap < 2 * m) cap *= 2;
        if (cap > table_cap) {
            free(table);
            table = malloc(cap * sizeof *table);
            table_cap = table ? cap : 0;
            if (!table) {
                w->failed = 1;
                return;
            }
        }
        memset(table, 0, cap * sizeof *table);
        uint32_t *first = w->first + lo;
        size_t found = 0;
        for (size_t k = lo; k < hi; k++) {
            uint32_t item = w->order[k];
            uint64_t h = d->hash[item];
            uint32_t h32 = (uint32_t)h;
            size_t j = (h32 ^ (uint32_t)(h >> 32)) & (cap - 1);
            for (;; j = (j + 1) & (cap - 1)) {
                if (!table[j].id1) {
                    table[j] = (slot){(uint32_t)found + 1, h32};
                    first[found] = item;
                    d->local[item] = (uint32_t)found++;
                    break;
                }
                if (table[j].h32 == h32) {
                    size_t other = first[table[j].id1 - 1];
                    if (d->hash[other] == h && w->same(w->ctx, other, item)) {
                        d->local[item] = table[j].id1 - 1;
                        break;
                    }
                }
            }
        }
        w->found[p] = found;
    }
    free(table);
}

static void gather_reps(void *ctx, size_t begin, size_t end)
{
    dedup_work *w = ctx;
    for (size_t p = begin; p < end; p++)
        for (size_t k = 0; k < w->found[p]; k++) w->d->rep[w->d->base[p] + k] = w->first[w->start[p] + k];
}

void cckey_dedup_free(cckey_dedup *d)
{
    free(d->local);
    free(d->rep);
    memset(d, 0, sizeof *d);
}

cckey_status cckey_dedup_run(cckey_dedup *d, size_t n, const uint64_t *hash, cckey_same_fn same, const void *ctx,
                             unsigned threads)
{
    memset(d, 0, sizeof *d);
    d->n = n;
    d->hash = hash;
    if (n >= UINT32_MAX) return cckey_fail(CCKEY_ERR_NO_MEMORY, "%zu items to deduplicate, more than 2^32", n);
    dedup_work w = {.d = d, .same = same, .ctx = ctx, .blocks = (n + BLOCK - 1) / BLOCK};
    d->local = malloc((n ? n : 1) * sizeof *d->local);
    w.count = malloc((w.blocks ? w.blocks : 1) * sizeof *w.count);
    w.order = malloc((n ? n : 1) * sizeof *w.order);
    w.first = malloc((n ? n : 1) * sizeof *w.first);
    cckey_status st = CCKEY_OK;
    if (!d->local || !w.count || !w.order || !w.first) {
        st = cckey_fail(CCKEY_ERR_NO_MEMORY, "deduplication tables for %zu items", n);
        goto out;
    }
    st = cckey_parallel_for(threads, w.blocks, 1, count_blocks, &w);
    if (st != CCKEY_OK) goto out;
    /* Partition-major prefix sums: block b's items of partition p go after
     * every earlier block's, so each partition stays in index order. */
    size_t at = 0;
    for (unsigned p = 0; p < DEDUP_PARTS; p++) {
        w.start[p] = at;
        for (size_t b = 0; b < w.blocks; b++) {
            size_t c = w.count[b][p];
            w.count[b][p] = at;
            at += c;
        }
    }
    w.start[DEDUP_PARTS] = at;
    st = cckey_parallel_for(threads, w.blocks, 1, scatter_blocks, &w);
    if (st == CCKEY_OK) st = cckey_parallel_for(threads, DEDUP_PARTS, 1, dedup_parts, &w);
    if (st == CCKEY_OK && w.failed) st = cckey_fail(CCKEY_ERR_NO_MEMORY, "deduplication table");
    if (st != CCKEY_OK) goto out;
    for (unsigned p = 0; p < DEDUP_PARTS; p++) {
        d->base[p] = d->distinct;
        d->distinct += w.found[p];
    }
    d->rep = malloc((d->distinct ? d->distinct : 1) * sizeof *d->rep);
    if (!d->rep) {
        st = cckey_fail(CCKEY_ERR_NO_MEMORY, "deduplication results");
        goto out;
    }
    st = cckey_parallel_for(threads, DEDUP_PARTS, 8, gather_reps, &w);
out:
    free(w.count);
    free(w.order);
    free(w.first);
    if (st != CCKEY_OK) cckey_dedup_free(d);
    return st;
}
