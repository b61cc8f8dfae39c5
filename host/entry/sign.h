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

/* The same on an entry held in parts (the records and the payload, as a
 * look-up has them once the entry's checksum has been checked). */
cckey_status cckey_records_check_signature(const char *key, const uint8_t *rec, uint32_t rec_len, const void *payload,
                                           uint64_t len, const void *secret, size_t secret_len);
/* 0: the entry ends in a signature secret made; 1: it has no signature;
 * -1: another signature (a foreign secret, or tampered), or not an entry. */
int cckey_entry_signature_state(const void *entry, size_t n, const char *key, const void *secret, size_t secret_len);

#endif
