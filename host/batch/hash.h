/* The hash the batch's deduplication tables share (hash.c). */
#ifndef CCKEY_BATCH_HASH_H
#define CCKEY_BATCH_HASH_H

#include <stddef.h>
#include <stdint.h>

/* The tables' hash of a byte string; also used for option sets' id lists. */
uint64_t cckey_hash_bytes(const void *ptr, size_t len);

#endif
