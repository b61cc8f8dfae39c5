/* Partitioned deduplication (see dedup.h). Parallel passes: count the
 * items of each partition per block of items, scatter item indices into
 * partition order, deduplicate each partition in its own table (counting
 * the distinct items per block as it goes), then number the distinct items
 * in item order. Only the per-block counts are summed serially. */
#include "dedup.h"
#include "scratch.h"
#include "../backends/backend.h"
#include "../core/internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK ((size_t)1 << 16)   /* items per counting block */
#define DEDUP_THREAD_MIN ((size_t)1 << 15)   /* items below which partitions run on one thread */

static inline unsigned part_of(uint64_t h) { return (unsigned)(h >> (64 - DEDUP_BITS)); }

typedef struct dedup_work {
    cckey_dedup *d;
    cckey_same_fn same;
    const void *ctx;
    size_t blocks;
    size_t (*count)[DEDUP_PARTS];   /* per block: items per partition, then scatter cursors, then distinct ones */
    uint32_t *order;                /* item indices, partition after partition */
    size_t start[DEDUP_PARTS + 1];  /* each partition's range in order */
    size_t found[DEDUP_PARTS];      /* distinct items per partition */
    uint32_t *first;                /* per partition: the item of each local id (laid out like order) */
    size_t *block_reps;             /* per block: distinct items first seen in it, then their first id */
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
        for (size_t b = 0; b < w->blocks; b++) w->count[b][p] = 0;
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
        size_t found = 0, block = w->order[lo] / BLOCK, block_found = 0;
        for (size_t k = lo; k < hi; k++) {
            uint32_t item = w->order[k];
            if (item / BLOCK != block) {   /* items come in index order */
                w->count[block][p] = found - block_found;
                block = item / BLOCK;
                block_found = found;
            }
            uint64_t h = d->hash[item];
            uint32_t h32 = (uint32_t)h;
            size_t j = (h32 ^ (uint32_t)(h >> 32)) & (cap - 1);
            for (;; j = (j + 1) & (cap - 1)) {
                if (!table[j].id1) {
                    table[j] = (slot){(uint32_t)found + 1, h32};
                    first[found] = item;
                    d->is_rep[item] = 1;
                    d->local[item] = (uint32_t)found++;
                    break;
                }
                if (table[j].h32 == h32) {
                    size_t other = first[table[j].id1 - 1];
                    if (d->hash[other] == h && w->same(w->ctx, other, item)) {
                        d->is_rep[item] = 0;
                        d->local[item] = table[j].id1 - 1;
                        break;
                    }
                }
            }
        }
        w->count[block][p] = found - block_found;
        w->found[p] = found;
    }
    free(table);
}

/* Ids in order of first appearance: a batch's tables are then read in
 * item order, not scattered by hash. A distinct item's id goes into its own
 * local slot; the partition's remap gives it to the item's duplicates. */
static void assign_ids(void *ctx, size_t begin, size_t end)
{
    dedup_work *w = ctx;
    cckey_dedup *d = w->d;
    for (size_t b = begin; b < end; b++) {
        size_t lo = b * BLOCK, hi = lo + BLOCK < d->n ? lo + BLOCK : d->n;
        uint32_t g = (uint32_t)w->block_reps[b];
        for (size_t i = lo; i < hi; i++) {
            uint64_t h = d->hash[i];
            if (!(h & 1) || !d->is_rep[i]) continue;
            d->remap[d->start[part_of(h)] + d->local[i]] = g;
            d->rep[g] = i;
            d->local[i] = g++;
        }
    }
}

cckey_status cckey_dedup_run(cckey_dedup *d, size_t n, const uint64_t *hash, cckey_same_fn same, const void *ctx,
                             unsigned threads, cckey_scratch *mem)
{
    memset(d, 0, sizeof *d);
    d->n = n;
    d->hash = hash;
    if (n >= UINT32_MAX) return cckey_fail(CCKEY_ERR_NO_MEMORY, "%zu items to deduplicate, more than 2^32", n);
    dedup_work w = {.d = d, .same = same, .ctx = ctx, .blocks = (n + BLOCK - 1) / BLOCK};
    d->local = cckey_scratch_alloc(mem, n * sizeof *d->local);
    d->is_rep = cckey_scratch_alloc(mem, n);
    w.count = cckey_scratch_alloc(mem, w.blocks * sizeof *w.count);
    w.block_reps = cckey_scratch_alloc(mem, w.blocks * sizeof *w.block_reps);
    w.order = cckey_scratch_alloc(mem, n * sizeof *w.order);
    w.first = cckey_scratch_alloc(mem, n * sizeof *w.first);
    cckey_status st = CCKEY_OK;
    if (!d->local || !d->is_rep || !w.count || !w.block_reps || !w.order || !w.first) {
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "deduplication tables for %zu items", n);
    }
    st = cckey_parallel_for(threads, w.blocks, 1, count_blocks, &w);
    if (st != CCKEY_OK) return st;
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
    memcpy(d->start, w.start, sizeof d->start);
    st = cckey_parallel_for(threads, w.blocks, 1, scatter_blocks, &w);
    /* A few partitions a claim: each claim allocates its own table. A
     * small batch's partitions take less time than starting a thread. */
    if (n < DEDUP_THREAD_MIN) threads = 1;
    size_t grain = DEDUP_PARTS / (4 * (threads ? threads : cckey_cpu_count()));
    if (st == CCKEY_OK) st = cckey_parallel_for(threads, DEDUP_PARTS, grain ? grain : 1, dedup_parts, &w);
    if (st == CCKEY_OK && w.failed) st = cckey_fail(CCKEY_ERR_NO_MEMORY, "deduplication table");
    if (st != CCKEY_OK) return st;
    for (size_t b = 0; b < w.blocks; b++) {
        size_t c = 0;
        for (unsigned p = 0; p < DEDUP_PARTS; p++) c += w.count[b][p];
        w.block_reps[b] = d->distinct;
        d->distinct += c;
    }
    d->rep = cckey_scratch_alloc(mem, d->distinct * sizeof *d->rep);
    if (!d->rep) return cckey_fail(CCKEY_ERR_NO_MEMORY, "deduplication results");
    d->remap = w.order;   /* done with: remap is laid out as order was */
    return cckey_parallel_for(threads, w.blocks, 1, assign_ids, &w);
}
