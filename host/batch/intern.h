/* Distinct byte strings of a batch: each gets an id, equal content the
 * same id, so each is digested once. */
#ifndef CCKEY_INTERN_H
#define CCKEY_INTERN_H

#include "../md5/md5.h"

#include <stdint.h>

typedef struct cckey_intern {
    uint32_t *slots;     /* id + 1; 0 is empty: a compact array to probe */
    uint64_t *slot_hash;
    size_t cap;          /* power of two */
    cckey_msg *msgs;     /* by id */
    size_t n, msgs_cap;
} cckey_intern;

#define CCKEY_INTERN_NOMEM UINT32_MAX

void cckey_intern_free(cckey_intern *t);
/* The id of these bytes, adding them if new; CCKEY_INTERN_NOMEM on failure.
 * The bytes are borrowed: they must outlive the table. */
uint32_t cckey_intern_add(cckey_intern *t, const void *ptr, size_t len);
/* The same with hash = cckey_hash_bytes(ptr, len) computed beforehand (on
 * many threads: hashing is the costly part of deduplication). */
uint32_t cckey_intern_add_hashed(cckey_intern *t, const void *ptr, size_t len, uint64_t hash);
/* The table's hash of a byte string; also used for option sets' id lists. */
uint64_t cckey_hash_bytes(const void *ptr, size_t len);

#endif
