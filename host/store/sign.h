/* Signing entry files for shared remotes (see sign.c, fingerprint.h). */
#ifndef CCKEY_SIGN_H
#define CCKEY_SIGN_H

#include "cckey.h"

#include <stddef.h>

/* A copy of the entry file (n bytes, for key) with a SIGNATURE record under
 * secret appended last (replacing a trailing one) and its checksum redone;
 * *out is malloc'ed. CCKEY_ERR_CORRUPT when the bytes are not an entry. */
cckey_status cckey_entry_sign(const void *entry, size_t n, const char *key, const void *secret, size_t secret_len,
                              void **out, size_t *out_n);
/* CCKEY_OK when the entry ends in a SIGNATURE record that secret made;
 * CCKEY_ERR_CORRUPT (unsigned, or a wrong signature) otherwise. */
cckey_status cckey_entry_check_signature(const void *entry, size_t n, const char *key, const void *secret,
                                         size_t secret_len);

#endif
