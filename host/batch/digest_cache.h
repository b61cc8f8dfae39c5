/* Digests of long strings, shared by the blocks of one batch (blocks.c).
 *
 * A batch planned block by block deduplicates within each block only; a
 * long source used all over a large batch would otherwise be digested once
 * per block. Strings of at least CCKEY_DIGEST_CACHE_MIN bytes are looked up
 * here before a block digests them, and stored after. A hit needs equal
 * length and equal bytes (memcmp, or the same address), so a key never
 * depends on what the cache holds, only the time does. Direct-mapped and
 * bounded: a newer string evicts an older one of the same slot.
 *
 * The strings are the caller's tuples, borrowed: a cache lives for one
 * cckey_make_keys call, never longer. */
#ifndef CCKEY_DIGEST_CACHE_H
#define CCKEY_DIGEST_CACHE_H

#include "../md5/md5.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Below this, one MD5 costs about what a look-up costs (a hash of the
 * string, a likely cache miss, a memcmp on a hit). */
#define CCKEY_DIGEST_CACHE_MIN ((size_t)1024)
/* Slots: 40 bytes each, allocated by the first store. */
#define CCKEY_DIGEST_CACHE_SLOTS ((size_t)1 << 14)

typedef struct cckey_digest_slot {
    const uint8_t *ptr;   /* NULL: empty */
    size_t len;
    uint64_t hash;
    uint8_t dig[CCKEY_MD5_DIGEST];
} cckey_digest_slot;

typedef struct cckey_digest_cache {
    pthread_mutex_t lock;
    cckey_digest_slot *slots;
} cckey_digest_cache;

/* 0, or -1 when the lock cannot be made. */
int cckey_digest_cache_init(cckey_digest_cache *c);
void cckey_digest_cache_free(cckey_digest_cache *c);

/* The long messages msgs[miss[k]] (k < count) with their hashes hash[k]
 * (the deduplication's: any hash of the bytes will do, one per batch): each
 * the cache has gets its digest into out[] and done[] = 1; the others stay
 * in miss[] and hash[], in order. Returns how many stay. */
size_t cckey_digest_cache_find(cckey_digest_cache *c, const cckey_msg *msgs, uint8_t (*out)[CCKEY_MD5_DIGEST],
                               uint8_t *done, size_t *miss, uint64_t *hash, size_t count);
/* Store the digests out[miss[k]] of the k < count misses (best effort: no
 * memory for the slots leaves the cache empty). */
void cckey_digest_cache_put(cckey_digest_cache *c, const cckey_msg *msgs, const size_t *miss, const uint64_t *hash,
                            size_t count, const uint8_t (*out)[CCKEY_MD5_DIGEST]);

#endif
