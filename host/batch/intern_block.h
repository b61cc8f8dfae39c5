/* Interning a block of tuples on one thread, in one pass (planner.c's
 * blocks, and batches small enough for one thread).
 *
 * The whole-batch interner (planner.c's intern_all) splits its work into
 * passes that threads share: argument checks, hashing, a partitioned
 * deduplication, then ids. A block is planned by one thread alone, and
 * there each pass re-reads what the one before wrote: for short fields the
 * passes cost more than MD5 does. Here each field is checked, hashed, and
 * given its id as the tuple is read, and each tuple's option set likewise.
 *
 * Ids number the distinct strings (and option sets) in order of first
 * appearance, as the whole-batch interner's do, so both give the same
 * plans. */
#ifndef CCKEY_INTERN_BLOCK_H
#define CCKEY_INTERN_BLOCK_H

#include "cckey.h"
#include "scratch.h"
#include "../md5/md5.h"

#include <stddef.h>
#include <stdint.h>

typedef struct cckey_block_ids {
    uint32_t *ids;          /* per tuple: device, name, source string ids */
    uint32_t *opt_ids;      /* option key/value ids; a tuple's run starts at opt_base */
    size_t *opt_base;       /* per tuple */
    cckey_msg *msgs;        /* per string id: its bytes (the first occurrence's) */
    uint64_t *str_hash;     /* per string id: cckey_hash_bytes(bytes) | 1 */
    size_t n_strings;
    uint32_t *set_of;       /* per tuple: its option set's id */
    size_t *set_rep;        /* per option set id: the first tuple with it */
    size_t n_sets;
} cckey_block_ids;

/* Shared by both interners (this one and planner.c's passes). */

/* A direct-mapped cache slot for an address. */
static inline size_t cckey_ptr_slot(const void *p, size_t mod)
{
    uintptr_t a = (uintptr_t)p;
    return (a >> 3 ^ a >> 13 ^ a >> 23) % mod;
}

/* The earlier tuple with the same options array (address and count) as
 * tuple i, or SIZE_MAX. A shared options array (the usual caller keeps a
 * few) then costs no option strings, hashes or ids: the tuple takes that
 * tuple's. Whoever asks more than once (several passes, or a count before
 * the pass) asks in tuple order from a cache reset at the block's start,
 * so that every time gets the same answers. */
#define CCKEY_SHARED_SETS 256

static inline void cckey_shared_reset(size_t cache[CCKEY_SHARED_SETS])
{
    for (int k = 0; k < CCKEY_SHARED_SETS; k++) cache[k] = SIZE_MAX;
}

static inline size_t cckey_shared_options(size_t cache[CCKEY_SHARED_SETS], const cckey_tuple *tuples, size_t i)
{
    const cckey_tuple *t = &tuples[i];
    if (!t->n_options) return SIZE_MAX;
    size_t *c = &cache[cckey_ptr_slot(t->options, CCKEY_SHARED_SETS)];
    if (*c != SIZE_MAX && tuples[*c].options == t->options && tuples[*c].n_options == t->n_options) return *c;
    *c = i;
    return SIZE_MAX;
}

/* Fill out for tuples[0, n), tables from mem. base: tuples[0]'s index in the
 * caller's batch, for the message naming a bad tuple. CCKEY_OK,
 * CCKEY_ERR_INVALID_ARG (the first bad tuple) or CCKEY_ERR_NO_MEMORY. */
cckey_status cckey_intern_block(cckey_block_ids *out, const cckey_tuple *tuples, size_t n, size_t base,
                                cckey_scratch *mem);

#endif
