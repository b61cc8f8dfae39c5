/* The order every backend hashes in: messages longer than a threshold
 * first (in input order), then by MD5 block count, longest first. Lanes,
 * work-items of a group and the threads' last claims then hold messages of
 * similar length. A counting sort: O(n), no comparisons. */
#include "backend.h"
#include "../core/internal.h"

#include <stdlib.h>

#define BUCKETS 4096u   /* beyond this many blocks, messages share a bucket */

static size_t rank_of(size_t len, size_t long_bytes)
{
    if (len > long_bytes) return 0;
    size_t blocks = (len + 8) / CCKEY_MD5_BLOCK + 1;
    return BUCKETS - (blocks < BUCKETS ? blocks : BUCKETS - 1);
}

cckey_status cckey_order_by_blocks(const cckey_msg *msgs, const size_t *in, size_t n, size_t long_bytes,
                                   size_t *out)
{
    size_t *start = calloc(BUCKETS + 2, sizeof *start);
    if (!start) return cckey_fail(CCKEY_ERR_NO_MEMORY, "sort buckets");
    for (size_t i = 0; i < n; i++) start[rank_of(msgs[in[i]].len, long_bytes) + 1]++;
    for (size_t b = 1; b <= BUCKETS + 1; b++) start[b] += start[b - 1];
    for (size_t i = 0; i < n; i++) out[start[rank_of(msgs[in[i]].len, long_bytes)]++] = in[i];
    free(start);
    return CCKEY_OK;
}
