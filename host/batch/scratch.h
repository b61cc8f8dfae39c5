/* Scratch memory of one batch: its per-tuple tables carved from one buffer
 * by a bump pointer, with no frees in between.
 *
 * The buffer outlives the call: the batch config keeps it for the next
 * batch, so a repeated batch of similar size touches no fresh pages. Fresh
 * pages were the largest single cost of a 200k-tuple batch (page faults,
 * the kernel zeroing them, unmapping them again: about a fifth of its CPU
 * time). What does not fit goes to malloc, and the buffer kept for the next
 * call is sized to what this call needed, up to CCKEY_SCRATCH_KEEP bytes. */
#ifndef CCKEY_SCRATCH_H
#define CCKEY_SCRATCH_H

#include <stddef.h>

/* At most this much stays allocated between batches (per config). */
#define CCKEY_SCRATCH_KEEP ((size_t)256 << 20)

typedef struct cckey_scratch {
    unsigned char *buf;
    size_t cap, used;
    size_t need;          /* bytes this batch asked for, kept buffer or not */
    void **extra;         /* allocations that did not fit */
    size_t n_extra, extra_cap;
} cckey_scratch;

/* bytes (64-byte aligned; bytes = 0 gives a valid pointer), or NULL when
 * out of memory. Valid until cckey_scratch_reset or _free. */
void *cckey_scratch_alloc(cckey_scratch *s, size_t bytes);
/* The same, zeroed. */
void *cckey_scratch_calloc(cckey_scratch *s, size_t bytes);
/* End of a batch: everything handed out is released, and the buffer is
 * resized for a batch like this one (within CCKEY_SCRATCH_KEEP). */
void cckey_scratch_reset(cckey_scratch *s);
void cckey_scratch_free(cckey_scratch *s);

#endif
