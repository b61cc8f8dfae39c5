/* The key recipe: per-field digests joined by ':', options canonicalised. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

bool cckey_options_ok(const cckey_option *options, size_t n)
{
    if (n && !options) return false;
    for (size_t i = 0; i < n; i++)
        if (!cckey_bytes_ok(options[i].key) || !cckey_bytes_ok(options[i].value)) return false;
    return true;
}

int cckey_bytes_cmp(cckey_bytes a, cckey_bytes b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int c = n ? memcmp(a.ptr, b.ptr, n) : 0;   /* memcmp compares as unsigned char */
    if (c) return c;
    return (a.len > b.len) - (a.len < b.len);
}

/* Insertion sort is stable and fastest for the handful of options a kernel
 * build has; merge sort keeps large option lists O(n log n). */
static void merge_sort(size_t *idx, size_t *tmp, size_t n, const cckey_option *o)
{
    if (n <= 16) {
        for (size_t i = 1; i < n; i++) {
            size_t v = idx[i], j = i;
            while (j && cckey_bytes_cmp(o[idx[j - 1]].key, o[v].key) > 0) {
                idx[j] = idx[j - 1];
                j--;
            }
            idx[j] = v;
        }
        return;
    }
    size_t h = n / 2;
    merge_sort(idx, tmp, h, o);
    merge_sort(idx + h, tmp, n - h, o);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = cckey_bytes_cmp(o[idx[j]].key, o[idx[i]].key) < 0 ? idx[j++] : idx[i++];
    while (i < h) tmp[k++] = idx[i++];
    while (j < n) tmp[k++] = idx[j++];
    memcpy(idx, tmp, n * sizeof *idx);
}

cckey_status cckey_option_order(const cckey_option *options, size_t n, size_t *order)
{
    if (n && (!options || !order)) return cckey_fail(CCKEY_ERR_INVALID_ARG, "options or order is NULL with n > 0");
    for (size_t i = 0; i < n; i++) order[i] = i;
    if (n <= 16) {
        merge_sort(order, NULL, n, options);
        return CCKEY_OK;
    }
    size_t *tmp = malloc(n * sizeof *tmp);
    if (!tmp) return cckey_fail(CCKEY_ERR_NO_MEMORY, "sorting %zu options", n);
    merge_sort(order, tmp, n, options);
    free(tmp);
    return CCKEY_OK;
}

void cckey_canon_write(char *buf, const char *const *key_hex, const char *const *val_hex, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i) *buf++ = ',';
        memcpy(buf, key_hex[i], 32);
        buf[32] = '=';
        memcpy(buf + 33, val_hex[i], 32);
        buf += 65;
    }
}

cckey_status cckey_options_hex(char out[32], const cckey_option *options, size_t n)
{
    uint8_t d[CCKEY_MD5_DIGEST];
    if (n == 0) {
        cckey_md5(NULL, 0, d);
        cckey_hex(out, d);
        return CCKEY_OK;
    }
    /* Stream the canonical string: it never has to exist whole in memory. */
    size_t small[16];
    size_t *order = n <= 16 ? small : malloc(n * sizeof *order);
    if (!order) return cckey_fail(CCKEY_ERR_NO_MEMORY, "sorting %zu options", n);
    cckey_status st = cckey_option_order(options, n, order);
    if (st == CCKEY_OK) {
        cckey_md5_ctx ctx;
        cckey_md5_init(&ctx);
        for (size_t i = 0; i < n; i++) {
            const cckey_option *o = &options[order[i]];
            char pair[66];
            cckey_md5(o->key.ptr, o->key.len, d);
            cckey_hex(pair + 1, d);
            pair[33] = '=';
            cckey_md5(o->value.ptr, o->value.len, d);
            cckey_hex(pair + 34, d);
            pair[0] = ',';
            cckey_md5_update(&ctx, i ? pair : pair + 1, i ? 66 : 65);
        }
        cckey_md5_final(&ctx, d);
        cckey_hex(out, d);
    }
    if (order != small) free(order);
    return st;
}

void cckey_join_key(char out[CCKEY_KEY_LEN + 1], const char *a, const char *b, const char *c,
                    const char *d)
{
    memcpy(out, a, 32);
    out[32] = ':';
    memcpy(out + 33, b, 32);
    out[65] = ':';
    memcpy(out + 66, c, 32);
    out[98] = ':';
    memcpy(out + 99, d, 32);
    out[CCKEY_KEY_LEN] = '\0';
}

static void hex_of(char out[32], cckey_bytes b)
{
    uint8_t d[CCKEY_MD5_DIGEST];
    cckey_md5(b.ptr, b.len, d);
    cckey_hex(out, d);
}

cckey_status cckey_make_key(char out[CCKEY_KEY_LEN + 1], cckey_bytes device, cckey_bytes name,
                            cckey_bytes source, const cckey_option *options, size_t n_options)
{
    if (!out) return cckey_fail(CCKEY_ERR_INVALID_ARG, "out is NULL");
    if (!cckey_bytes_ok(device) || !cckey_bytes_ok(name) || !cckey_bytes_ok(source))
        return cckey_fail(CCKEY_ERR_INVALID_ARG, "a field is {NULL, len > 0}");
    if (!cckey_options_ok(options, n_options))
        return cckey_fail(CCKEY_ERR_INVALID_ARG, "options are NULL or hold {NULL, len > 0}");
    char h[4][32];
    cckey_status st = cckey_options_hex(h[3], options, n_options);
    if (st != CCKEY_OK) return st;
    hex_of(h[0], device);
    hex_of(h[1], name);
    hex_of(h[2], source);
    cckey_join_key(out, h[0], h[1], h[2], h[3]);
    return CCKEY_OK;
}
