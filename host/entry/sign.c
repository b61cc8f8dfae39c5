/* Signed entries for shared remotes: a SIGNATURE record, last in the record
 * section, holds the HMAC-SHA-256 of the key, the records before it and the
 * payload under a shared secret (fingerprint.h gives the exact bytes). The
 * entry is otherwise unchanged, so a reader without the secret still checks
 * and serves it as any entry. */
#include "sign.h"
#include "fingerprint.h"
#include "entry.h"
#include "../core/internal.h"

#include <stdlib.h>
#include <string.h>

/* The parts of an entry file, after the checks a reader of the layout
 * needs (the checksum is the reader's job). */
typedef struct parts {
    const uint8_t *rec;
    uint32_t rec_len;
    const uint8_t *payload;   /* uncompressed: what a signature covers */
    uint64_t len;
    uint32_t sig_at;          /* offset of a trailing SIGNATURE record in rec, or rec_len when none */
    const uint8_t *stored;    /* the payload as the file holds it (compressed or not) */
    uint64_t stored_len;
    uint32_t encoding;
    uint8_t *owned;           /* payload, when decoded here: free it (parts_free) */
} parts;

static void parts_free(parts *p) { free(p->owned), p->owned = NULL; }

/* The parts of entry e (n bytes), a compressed payload decoded. */
static cckey_status split(const uint8_t *e, size_t n, const char *key, parts *p)
{
    memset(p, 0, sizeof *p);
    if (n < CCKEY_ENTRY_HEADER || memcmp(e, CCKEY_ENTRY_MAGIC, 8) != 0 ||
        !cckey_entry_version_read(cckey_get_le32(e + 8)))
        return cckey_fail(CCKEY_ERR_CORRUPT, "not an entry of format 2 to %u", CCKEY_ENTRY_VERSION);
    if (memcmp(e + CCKEY_ENTRY_KEY_AT, key, CCKEY_KEY_LEN) != 0)
        return cckey_fail(CCKEY_ERR_CORRUPT, "entry holds another key");
    p->rec_len = cckey_get_le32(e + CCKEY_ENTRY_RECLEN_AT);
    p->len = cckey_get_le64(e + 16);
    p->stored_len = cckey_entry_stored_len(e);
    p->encoding = cckey_entry_encoding(e);
    if (p->rec_len > n - CCKEY_ENTRY_HEADER || p->stored_len != n - CCKEY_ENTRY_HEADER - p->rec_len ||
        p->len > SIZE_MAX - 1)
        return cckey_fail(CCKEY_ERR_CORRUPT, "entry sizes do not add up");
    p->rec = e + CCKEY_ENTRY_HEADER;
    p->payload = p->stored = p->rec + p->rec_len;
    if (cckey_records_check_form(p->rec, p->rec_len) != CCKEY_OK) return CCKEY_ERR_CORRUPT;
    p->sig_at = cckey_records_signature_at(p->rec, p->rec_len);
    if (!p->encoding) return CCKEY_OK;
    if (!(p->owned = malloc(p->len ? (size_t)p->len : 1))) return cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
    cckey_status st = cckey_decompress(p->stored, (size_t)p->stored_len, p->owned, (size_t)p->len);
    if (st != CCKEY_OK) parts_free(p);
    p->payload = p->owned;
    return st;
}

cckey_status cckey_entry_sign(const void *entry, size_t n, const char *key, const void *secret, size_t secret_len,
                              void **out, size_t *out_n)
{
    parts p;
    cckey_status st = split(entry, n, key, &p);
    if (st != CCKEY_OK) return st;
    uint32_t kept = p.sig_at, rec_len = kept + CCKEY_REC_HEAD + CCKEY_MAC_LEN;
    /* The payload stays as stored (a compressed one compressed); the
     * signature, like the checksum, covers it uncompressed. */
    size_t total = CCKEY_ENTRY_HEADER + (size_t)rec_len + (size_t)p.stored_len;
    uint8_t *e = malloc(total);
    if (!e) {
        parts_free(&p);
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
    }
    uint8_t *rec = e + CCKEY_ENTRY_HEADER, *sig = rec + kept;
    memcpy(rec, p.rec, kept);
    cckey_put_le16(sig, CCKEY_REC_SIGNATURE);
    cckey_put_le16(sig + 2, 0);
    cckey_put_le32(sig + 4, CCKEY_MAC_LEN);
    if ((st = cckey_entry_mac(secret, secret_len, key, rec, kept, p.payload, p.len, sig + CCKEY_REC_HEAD)) != CCKEY_OK) {
        free(e), parts_free(&p);
        return st;
    }
    if (p.stored_len) memcpy(rec + rec_len, p.stored, (size_t)p.stored_len);
    cckey_entry_header_stored(e, key, rec, rec_len, p.payload, p.len, p.encoding, p.stored_len);
    parts_free(&p);
    *out = e;
    *out_n = total;
    return CCKEY_OK;
}

cckey_status cckey_records_check_signature(const char *key, const uint8_t *rec, uint32_t rec_len, const void *payload,
                                           uint64_t len, const void *secret, size_t secret_len)
{
    if (cckey_records_check_form(rec, rec_len) != CCKEY_OK) return CCKEY_ERR_CORRUPT;
    uint32_t sig_at = cckey_records_signature_at(rec, rec_len);
    if (sig_at == rec_len) return cckey_fail(CCKEY_ERR_CORRUPT, "unsigned entry (a signature is required)");
    const uint8_t *sig = rec + sig_at;
    if (cckey_get_le32(sig + 4) != CCKEY_MAC_LEN) return cckey_fail(CCKEY_ERR_CORRUPT, "malformed signature record");
    uint8_t want[CCKEY_MAC_LEN];
    cckey_status st = cckey_entry_mac(secret, secret_len, key, rec, sig_at, payload, len, want);
    if (st != CCKEY_OK) return st;
    /* Constant time: the comparison must not tell a forger how far he got. */
    uint8_t diff = 0;
    for (int i = 0; i < CCKEY_MAC_LEN; i++) diff |= (uint8_t)(want[i] ^ sig[CCKEY_REC_HEAD + i]);
    return diff ? cckey_fail(CCKEY_ERR_CORRUPT, "bad signature (tampered, or another secret)") : CCKEY_OK;
}

cckey_status cckey_entry_check_signature(const void *entry, size_t n, const char *key, const void *secret,
                                         size_t secret_len)
{
    parts p;
    cckey_status st = split(entry, n, key, &p);
    if (st != CCKEY_OK) return st;
    st = cckey_records_check_signature(key, p.rec, p.rec_len, p.payload, p.len, secret, secret_len);
    parts_free(&p);
    return st;
}

int cckey_entry_signature_state(const void *entry, size_t n, const char *key, const void *secret, size_t secret_len)
{
    parts p;
    if (split(entry, n, key, &p) != CCKEY_OK) return -1;
    int state = p.sig_at == p.rec_len ? 1
                : cckey_records_check_signature(key, p.rec, p.rec_len, p.payload, p.len, secret, secret_len) ==
                        CCKEY_OK
                    ? 0
                    : -1;
    parts_free(&p);
    return state;
}
