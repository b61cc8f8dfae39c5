/* Keys as text: made from C strings, and checked and split back into
 * their four binary digests. */
#include "internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

cckey_status cckey_make_key_str(char out[CCKEY_KEY_LEN + 1], const char *device, const char *name,
                                const char *source, const char *const *options, size_t n_options)
{
    if (!device || !name || !source) return cckey_fail(CCKEY_ERR_INVALID_ARG, "device, name or source is NULL");
    if (n_options && !options) return cckey_fail(CCKEY_ERR_INVALID_ARG, "options is NULL with n_options = %zu", n_options);
    for (size_t i = 0; i < 2 * n_options; i++)
        if (!options[i])
            return cckey_fail(CCKEY_ERR_INVALID_ARG, "option %zu: its %s is NULL", i / 2, i % 2 ? "value" : "key");
    /* Small sets on the stack; the rare long one on the heap. */
    cckey_option local[16], *opts = local;
    if (n_options > sizeof local / sizeof *local) {
        if (n_options > SIZE_MAX / sizeof *opts) return cckey_fail(CCKEY_ERR_NO_MEMORY, "%zu options", n_options);
        opts = malloc(n_options * sizeof *opts);
        if (!opts) return cckey_fail(CCKEY_ERR_NO_MEMORY, "%zu options", n_options);
    }
    for (size_t i = 0; i < n_options; i++)
        opts[i] = (cckey_option){{options[2 * i], strlen(options[2 * i])}, {options[2 * i + 1], strlen(options[2 * i + 1])}};
    cckey_status st = cckey_make_key(out, (cckey_bytes){device, strlen(device)}, (cckey_bytes){name, strlen(name)},
                                     (cckey_bytes){source, strlen(source)}, n_options ? opts : NULL, n_options);
    if (opts != local) free(opts);
    return st;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

cckey_status cckey_key_parse(const char *key, size_t len, unsigned char out[4][CCKEY_DIGEST_LEN])
{
    if (!key && len) return cckey_fail(CCKEY_ERR_INVALID_ARG, "key is NULL with len = %zu", len);
    if (len != CCKEY_KEY_LEN)
        return cckey_fail(CCKEY_ERR_INVALID_ARG, "a key is %d bytes, this one %zu", CCKEY_KEY_LEN, len);
    unsigned char d[4][CCKEY_DIGEST_LEN];
    for (size_t f = 0; f < 4; f++) {
        const char *p = key + f * (CCKEY_HEX_LEN + 1);
        if (f < 3 && p[CCKEY_HEX_LEN] != ':')
            return cckey_fail(CCKEY_ERR_INVALID_ARG, "key byte %zu: expected ':'", f * (CCKEY_HEX_LEN + 1) + CCKEY_HEX_LEN);
        for (size_t i = 0; i < CCKEY_DIGEST_LEN; i++) {
            int hi = hex_value(p[2 * i]), lo = hex_value(p[2 * i + 1]);
            if (hi < 0 || lo < 0) {
                size_t at = (size_t)(p - key) + 2 * i + (hi < 0 ? 0 : 1);
                return cckey_fail(CCKEY_ERR_INVALID_ARG, "key byte %zu: expected a lowercase hex digit", at);
            }
            d[f][i] = (unsigned char)(hi << 4 | lo);
        }
    }
    if (out) memcpy(out, d, sizeof d);
    return CCKEY_OK;
}
