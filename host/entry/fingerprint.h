/* The tuple fingerprint and the entry signature (libcrypto).
 *
 * Fingerprint: SHA-256 over
 *   "cckey-fingerprint-1" and its NUL,
 *   device, name, source: each as u64le length + bytes,
 *   u64le number of options, then each option in canonical order (stable by
 *   key, unsigned bytes, as in the key): key and value as u64le length + bytes,
 *   the dependency records: u64le length + the DEPENDENCY record values, in
 *   entry order, each as its 8-byte record head + value.
 * MD5 keys name the tuple; this binds an entry to the tuple itself, so two
 * tuples crafted to share an MD5 key still have different fingerprints.
 *
 * Signature: HMAC-SHA-256 under the shared secret over
 *   "cckey-entry-mac-1" and its NUL, the key (131 bytes), u64le length of
 *   the records before the signature record, u64le payload length, those
 *   records, the payload.
 * Whoever lacks the secret can neither forge nor alter a signed entry. */
#ifndef CCKEY_FINGERPRINT_H
#define CCKEY_FINGERPRINT_H

#include "cckey.h"

#include <stddef.h>
#include <stdint.h>

#define CCKEY_FINGERPRINT_LEN 32
#define CCKEY_MAC_LEN 32
#define CCKEY_FINGERPRINT_TAG "cckey-fingerprint-1"
#define CCKEY_MAC_TAG "cckey-entry-mac-1"

cckey_status cckey_fingerprint(const cckey_tuple *t, const void *deps, size_t deps_len,
                               uint8_t out[CCKEY_FINGERPRINT_LEN]);
cckey_status cckey_entry_mac(const void *secret, size_t secret_len, const char *key, const void *records,
                             size_t rec_len, const void *payload, uint64_t len, uint8_t out[CCKEY_MAC_LEN]);

#endif
