/* The independent reference: OpenSSL's MD5 and a key assembled from it
 * without any of the library's code (sorting and canon written afresh), so a
 * shared bug cannot agree with itself. Also the OpenSSL baselines.
 *
 * MD5() is OpenSSL's fastest one-shot entry point (EVP_Digest allocates a
 * context per call); it is deprecated in 3.x, so the deprecation attribute is
 * switched off for this file only. The baseline is then the strongest one. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "bench.h"

#include <openssl/md5.h>
#include <stdlib.h>
#include <string.h>

void bench_ossl_md5(const void *data, size_t len, uint8_t out[CCKEY_MD5_DIGEST])
{
    static const unsigned char empty = 0;
    MD5(len ? data : &empty, len, out);
}

static void to_hex(char *out, const uint8_t d[CCKEY_MD5_DIGEST])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < CCKEY_MD5_DIGEST; i++) {
        out[2 * i] = digits[d[i] >> 4];
        out[2 * i + 1] = digits[d[i] & 15];
    }
}

static void hex_of(char out[32], cckey_bytes b)
{
    uint8_t d[CCKEY_MD5_DIGEST];
    bench_ossl_md5(b.ptr, b.len, d);
    to_hex(out, d);
}

/* Unsigned bytes, and a proper prefix sorts first. */
static int key_before(cckey_bytes a, cckey_bytes b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int c = n ? memcmp(a.ptr, b.ptr, n) : 0;
    return c < 0 || (c == 0 && a.len < b.len);
}

void bench_ossl_key(char out[CCKEY_KEY_LEN + 1], const cckey_tuple *t)
{
    enum { SMALL = 16 };
    size_t small_order[SMALL];
    size_t n = t->n_options;
    size_t *order = n <= SMALL ? small_order : bench_alloc(n * sizeof *order);
    /* Insertion sort: stable, and option lists are short. */
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        while (j > 0 && key_before(t->options[i].key, t->options[order[j - 1]].key)) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    size_t canon_len = n ? 65 * n + (n - 1) : 0;
    char small_canon[SMALL * 66];
    char *canon = canon_len <= sizeof small_canon ? small_canon : bench_alloc(canon_len);
    char *w = canon;
    for (size_t i = 0; i < n; i++) {
        if (i) *w++ = ',';
        hex_of(w, t->options[order[i]].key);
        w[32] = '=';
        hex_of(w + 33, t->options[order[i]].value);
        w += 65;
    }
    hex_of(out, t->device);
    out[32] = ':';
    hex_of(out + 33, t->name);
    out[65] = ':';
    hex_of(out + 66, t->source);
    out[98] = ':';
    hex_of(out + 99, (cckey_bytes){canon, canon_len});
    out[CCKEY_KEY_LEN] = '\0';
    if (order != small_order) free(order);
    if (canon != small_canon) free(canon);
}

typedef struct dig_ctx {
    const cckey_msg *m;
    uint8_t (*out)[CCKEY_MD5_DIGEST];
} dig_ctx;

static void dig_body(void *arg, size_t b, size_t e)
{
    dig_ctx *c = arg;
    for (size_t i = b; i < e; i++) bench_ossl_md5(c->m[i].ptr, c->m[i].len, c->out[i]);
}

void bench_ossl_digests(const cckey_msg *m, size_t n, uint8_t (*out)[CCKEY_MD5_DIGEST], unsigned threads)
{
    dig_ctx c = {m, out};
    bench_parallel_for(n, bench_grain(n, threads), threads, dig_body, &c);
}

typedef struct key_ctx {
    const cckey_tuple *t;
    char (*out)[CCKEY_KEY_LEN + 1];
} key_ctx;

static void key_body(void *arg, size_t b, size_t e)
{
    key_ctx *c = arg;
    for (size_t i = b; i < e; i++) bench_ossl_key(c->out[i], &c->t[i]);
}

void bench_ossl_keys(const cckey_tuple *t, size_t n, char (*out)[CCKEY_KEY_LEN + 1], unsigned threads)
{
    key_ctx c = {t, out};
    bench_parallel_for(n, bench_grain(n, threads), threads, key_body, &c);
}
