/* The planner's two ways through a batch (planner.c, blocks.c).
 *
 * A CPU batch of many tuples is cut into blocks of at most
 * CCKEY_PLAN_BLOCK tuples, and each thread plans whole blocks alone, one
 * after another, in tables of its own: the tables of a block stay the same
 * size whatever the batch's length (no cliff from cache, TLB or fresh pages
 * at 10^7 tuples), and threads share nothing but the long strings' digests
 * (digest_cache.h). Deduplication then holds within a block; a string that
 * recurs across blocks is digested again unless it is long. Device batches,
 * batches that report progress, and batches whose fields are long on
 * average (MD5 is their cost: blocks running at the same time would each
 * digest the long strings they share) are planned whole, on all threads. */
#ifndef CCKEY_PLAN_H
#define CCKEY_PLAN_H

#include "cckey.h"
#include "config.h"
#include "digest_cache.h"
#include "scratch.h"

#include <stdbool.h>

/* Tuples per block: their tables (about 200 bytes a tuple of distinct
 * names) stay within a core's L2 cache. */
#ifndef CCKEY_PLAN_BLOCK
#define CCKEY_PLAN_BLOCK ((size_t)1 << 13)
#endif
/* The fewest tuples worth a thread of their own. */
#define CCKEY_PLAN_BLOCK_MIN ((size_t)1 << 12)

/* Where keys go: text or binary, indexed like the batch's tuples. */
typedef struct cckey_key_out {
    char (*text)[CCKEY_KEY_LEN + 1];
    unsigned char (*bin)[CCKEY_KEY_BIN_LEN];
    /* Per tuple, NULL or a handle whose digest is the source field (the
     * tuple's source is then empty): cckey_make_keys_sources. May be NULL. */
    const cckey_source *const *src;
} cckey_key_out;

/* A whole batch: by blocks or on the chosen backend, fallback and
 * verification included; the report goes to the config and, when not
 * NULL, to result. Arguments checked by the caller (make_keys.c). */
cckey_status cckey_plan_make_keys(cckey_key_out out, const cckey_tuple *tuples, size_t n,
                                  const cckey_batch_config *config, cckey_batch_result *result);

/* The keys of tuples[begin, end) on this thread, the CPU backend, tables
 * from mem; long strings' digests through cache. Errors name tuples by
 * their index in the whole batch. */
cckey_status cckey_plan_cpu_block(cckey_key_out out, const cckey_tuple *tuples, size_t begin, size_t end,
                                  cckey_scratch *mem, cckey_digest_cache *cache);

/* Whether a batch of n tuples with cfg (not NULL) goes by blocks: a batch
 * on the CPU backend (or AUTO, where no device would be worth it) with no
 * progress callback, long enough for blocks, and whose fields are short on
 * average (sampled; see blocks.c). */
bool cckey_plan_by_blocks(const cckey_batch_config *cfg, const cckey_tuple *tuples, size_t n, unsigned threads);
/* The whole batch by blocks on up to `threads` threads; thread t's tables
 * come from mem[t] for t < n_mem (kept by the config between batches), else
 * from memory of its own. */
cckey_status cckey_plan_blocks(cckey_key_out out, const cckey_tuple *tuples, size_t n, unsigned threads,
                               cckey_scratch *mem, unsigned n_mem);

#endif
