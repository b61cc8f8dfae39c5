/* Strong digests that an MD5 collision cannot fool (OpenSSL's libcrypto):
 * the SHA-256 fingerprint of a whole tuple, and the HMAC-SHA-256 that signs
 * an entry for a shared remote. See fingerprint.h for the exact bytes. */
#include "fingerprint.h"
#include "../core/internal.h"

#include <openssl/evp.h>
#include <openssl/params.h>
#include <stdlib.h>
#include <string.h>

static void put_len(EVP_MD_CTX *c, uint64_t n)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(n >> (8 * i));
    EVP_DigestUpdate(c, b, 8);
}

static void put_bytes(EVP_MD_CTX *c, cckey_bytes b)
{
    put_len(c, b.len);
    if (b.len) EVP_DigestUpdate(c, b.ptr, b.len);
}

cckey_status cckey_fingerprint(const cckey_tuple *t, const void *deps, size_t deps_len,
                               uint8_t out[CCKEY_FINGERPRINT_LEN])
{
    if (!t || !cckey_bytes_ok(t->device) || !cckey_bytes_ok(t->name) || !cckey_bytes_ok(t->source) ||
        !cckey_options_ok(t->options, t->n_options))
        return cckey_fail(CCKEY_ERR_INVALID_ARG, "bad tuple for a fingerprint");
    size_t *order = malloc((t->n_options ? t->n_options : 1) * sizeof *order);
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    cckey_status st = CCKEY_OK;
    if (!order || !c) {
        st = cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
        goto out;
    }
    if ((st = cckey_option_order(t->options, t->n_options, order)) != CCKEY_OK) goto out;
    if (EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1) {
        st = cckey_fail(CCKEY_ERR_INTERNAL, "SHA-256 is not available from libcrypto");
        goto out;
    }
    EVP_DigestUpdate(c, CCKEY_FINGERPRINT_TAG, sizeof CCKEY_FINGERPRINT_TAG);   /* with its NUL */
    put_bytes(c, t->device);
    put_bytes(c, t->name);
    put_bytes(c, t->source);
    put_len(c, t->n_options);
    for (size_t i = 0; i < t->n_options; i++) {
        put_bytes(c, t->options[order[i]].key);
        put_bytes(c, t->options[order[i]].value);
    }
    put_bytes(c, (cckey_bytes){deps, deps_len});
    unsigned n = 0;
    if (EVP_DigestFinal_ex(c, out, &n) != 1 || n != CCKEY_FINGERPRINT_LEN)
        st = cckey_fail(CCKEY_ERR_INTERNAL, "SHA-256 failed");
out:
    EVP_MD_CTX_free(c);
    free(order);
    return st;
}

cckey_status cckey_entry_mac(const void *secret, size_t secret_len, const char *key, const void *records,
                             size_t rec_len, const void *payload, uint64_t len, uint8_t out[CCKEY_MAC_LEN])
{
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MAC_CTX *c = mac ? EVP_MAC_CTX_new(mac) : NULL;
    cckey_status st = CCKEY_OK;
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0), OSSL_PARAM_construct_end()};
    if (!c || EVP_MAC_init(c, secret, secret_len, params) != 1) {
        st = cckey_fail(CCKEY_ERR_INTERNAL, "HMAC-SHA-256 is not available from libcrypto");
        goto out;
    }
    uint8_t lens[16];
    for (int i = 0; i < 8; i++) lens[i] = (uint8_t)((uint64_t)rec_len >> (8 * i)), lens[8 + i] = (uint8_t)(len >> (8 * i));
    EVP_MAC_update(c, (const uint8_t *)CCKEY_MAC_TAG, sizeof CCKEY_MAC_TAG);
    EVP_MAC_update(c, (const uint8_t *)key, CCKEY_KEY_LEN);
    EVP_MAC_update(c, lens, sizeof lens);
    if (rec_len) EVP_MAC_update(c, records, rec_len);
    if (len) EVP_MAC_update(c, payload, (size_t)len);
    size_t n = 0;
    if (EVP_MAC_final(c, out, &n, CCKEY_MAC_LEN) != 1 || n != CCKEY_MAC_LEN)
        st = cckey_fail(CCKEY_ERR_INTERNAL, "HMAC-SHA-256 failed");
out:
    EVP_MAC_CTX_free(c);
    EVP_MAC_free(mac);
    return st;
}
