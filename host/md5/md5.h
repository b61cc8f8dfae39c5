/* Internal MD5 (RFC 1321). Hidden from the library's users. */
#ifndef CCKEY_MD5_H
#define CCKEY_MD5_H

#include <stddef.h>
#include <stdint.h>

#define CCKEY_MD5_BLOCK 64
#define CCKEY_MD5_DIGEST 16

/* Streaming context: 64-bit length, so sources over 4 GiB digest correctly. */
typedef struct cckey_md5_ctx {
    uint32_t state[4];
    uint64_t total;          /* bytes consumed so far */
    uint8_t buf[CCKEY_MD5_BLOCK];
    size_t buffered;
} cckey_md5_ctx;

/* One message for the multi-message entry points. */
typedef struct cckey_msg {
    const uint8_t *ptr;
    size_t len;
} cckey_msg;

extern const uint32_t cckey_md5_iv[4];

/* Test seams, as data: NULL in a release process, pointed before main at
 * the testing library's table (host/testing/md5_count.c), which counts the
 * digests finished on each thread, to prove that a memo hit computes no
 * MD5. A release digest pays one load and a branch that is never taken. */
typedef struct cckey_md5_hook_table {
    void (*digested)(uint64_t n);   /* n digests finished on this thread */
} cckey_md5_hook_table;
extern const cckey_md5_hook_table *cckey_md5_hooks;
#define CCKEY_MD5_COUNT(n)                                                                         \
    do {                                                                                           \
        const cckey_md5_hook_table *hooks_ = cckey_md5_hooks;                                      \
        if (__builtin_expect(hooks_ != NULL, 0)) hooks_->digested(n);                              \
    } while (0)

void cckey_md5_init(cckey_md5_ctx *ctx);
void cckey_md5_update(cckey_md5_ctx *ctx, const void *data, size_t len);
void cckey_md5_final(cckey_md5_ctx *ctx, uint8_t out[CCKEY_MD5_DIGEST]);
void cckey_md5(const void *data, size_t len, uint8_t out[CCKEY_MD5_DIGEST]);

/* The portable compression step: nblocks consecutive 64-byte blocks. */
void cckey_md5_compress_scalar(uint32_t state[4], const uint8_t *blocks, size_t nblocks);

/* Padding: the rem (< 64) trailing bytes of a message of total bytes, then
 * 0x80, zeros and the bit length, as one or two blocks. Returns the count. */
size_t cckey_md5_pad(uint8_t tail[2 * CCKEY_MD5_BLOCK], const uint8_t *partial, size_t rem,
                     uint64_t total);
/* The same for a whole message whose first (len / 64) blocks are compressed
 * straight from msg. */
size_t cckey_md5_tail_blocks(uint8_t tail[2 * CCKEY_MD5_BLOCK], const uint8_t *msg, size_t len);

/* Serialise a state as the 16-byte digest (little-endian words). */
void cckey_md5_store(uint8_t out[CCKEY_MD5_DIGEST], const uint32_t state[4]);

/* Digest n independent messages on the calling thread, with the fastest
 * multi-buffer path this CPU has (scalar when none). */
void cckey_md5_many(const cckey_msg *msgs, size_t n, uint8_t (*out)[CCKEY_MD5_DIGEST]);

/* Lowercase hex of a digest: 32 characters, no terminator. */
void cckey_hex(char out[32], const uint8_t digest[CCKEY_MD5_DIGEST]);

#endif
