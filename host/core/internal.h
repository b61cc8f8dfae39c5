/* Shared internals of the library: error detail, argument checks, key assembly. */
#ifndef CCKEY_INTERNAL_H
#define CCKEY_INTERNAL_H

#include "cckey.h"
#include "cckey_advanced.h"
#include "../md5/md5.h"

#include <stdbool.h>

#if defined(__GNUC__)
#define CCKEY_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CCKEY_PRINTF(a, b)
#endif

/* Record the detail behind a failure for cckey_last_error(); returns status
 * so a caller can write `return cckey_fail(CCKEY_ERR_IO, "...", ...);`. */
cckey_status cckey_fail(cckey_status status, const char *fmt, ...) CCKEY_PRINTF(2, 3);
void cckey_clear_error(void);

/* {NULL, n > 0} is the one malformed byte string. */
static inline bool cckey_bytes_ok(cckey_bytes b) { return b.ptr != NULL || b.len == 0; }
bool cckey_options_ok(const cckey_option *options, size_t n);

/* A source handle that knows only its source's hex digest (no bytes). */
cckey_status cckey_source_new_hex(cckey_source **out, const char hex[32]);
/* The handle's 32 hex digits (no NUL): what a key's source field holds. */
const char *cckey_source_hex_of(const cckey_source *src);

/* out = a ":" b ":" c ":" d, each 32 hex characters, plus the NUL. */
void cckey_join_key(char out[CCKEY_KEY_LEN + 1], const char *a, const char *b, const char *c,
                    const char *d);

/* cckey_option_order is public (cckey.h). */

/* Unsigned-byte comparison, a proper prefix first. */
int cckey_bytes_cmp(cckey_bytes a, cckey_bytes b);

/* canon() written from per-option hex digests given in sorted order. buf
 * must hold cckey_canon_len(n) bytes. */
static inline size_t cckey_canon_len(size_t n) { return n ? n * 65 + (n - 1) : 0; }
void cckey_canon_write(char *buf, const char *const *key_hex, const char *const *val_hex, size_t n);

/* hex(md5(canon(options))) computed directly on this thread. */
cckey_status cckey_options_hex(char out[32], const cckey_option *options, size_t n);

#endif
