/* libFuzzer target: every key entry point against a deliberately slow
 * reference written here from RFC 1321 and the key recipe. It shares no
 * code with the library: MD5 a byte at a time, constants derived from sin()
 * as the RFC defines them, options sorted by a plain stable insertion sort.
 *
 * Input layout (all lengths clamped to what is left):
 *   byte 0: option count (mod 40); byte 1: flags for the handle
 *   then device, name: 1-byte length + bytes; source: 2-byte length + bytes
 *   then per option: key and value, 1-byte length + bytes each. */
#include "cckey.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the slow reference ---------------------------------------------------- */

typedef struct slow_md5 {
    uint32_t h[4];
    uint8_t block[64];
    size_t fill;
    uint64_t bytes;
} slow_md5;

static uint32_t K[64];
static const unsigned S[4][4] = {{7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}};

static void slow_block(slow_md5 *m)
{
    uint32_t w[16], a = m->h[0], b = m->h[1], c = m->h[2], d = m->h[3];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)m->block[4 * i] | (uint32_t)m->block[4 * i + 1] << 8 | (uint32_t)m->block[4 * i + 2] << 16 |
               (uint32_t)m->block[4 * i + 3] << 24;
    for (int i = 0; i < 64; i++) {
        uint32_t f;
        int g, round = i / 16;
        if (round == 0) f = (b & c) | (~b & d), g = i;
        else if (round == 1) f = (d & b) | (~d & c), g = (5 * i + 1) % 16;
        else if (round == 2) f = b ^ c ^ d, g = (3 * i + 5) % 16;
        else f = c ^ (b | ~d), g = (7 * i) % 16;
        uint32_t x = a + f + K[i] + w[g];
        unsigned s = S[round][i % 4];
        a = d, d = c, c = b;
        b = b + ((x << s) | (x >> (32 - s)));
    }
    m->h[0] += a, m->h[1] += b, m->h[2] += c, m->h[3] += d;
}

static void slow_byte(slow_md5 *m, uint8_t byte)
{
    m->block[m->fill++] = byte;
    if (m->fill == 64) {
        slow_block(m);
        m->fill = 0;
    }
}

static void slow_hex(const void *data, size_t len, char out[33])
{
    slow_md5 m = {{0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u}, {0}, 0, 0};
    const uint8_t *p = data;
    for (size_t i = 0; i < len; i++) slow_byte(&m, p[i]);
    uint64_t bits = (uint64_t)len * 8;
    slow_byte(&m, 0x80);
    while (m.fill != 56) slow_byte(&m, 0);
    for (int i = 0; i < 8; i++) slow_byte(&m, (uint8_t)(bits >> (8 * i)));
    for (int i = 0; i < 16; i++) sprintf(out + 2 * i, "%02x", (m.h[i / 4] >> (8 * (i % 4))) & 0xff);
}

static int slow_less(cckey_bytes a, cckey_bytes b)   /* a < b: unsigned bytes, prefix first */
{
    const uint8_t *x = a.ptr, *y = b.ptr;
    for (size_t i = 0; i < a.len && i < b.len; i++)
        if (x[i] != y[i]) return x[i] < y[i];
    return a.len < b.len;
}

static void slow_key(char out[CCKEY_KEY_LEN + 1], cckey_bytes dev, cckey_bytes name, cckey_bytes src,
                     const cckey_option *o, size_t n)
{
    size_t order[64];
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        while (j && slow_less(o[i].key, o[order[j - 1]].key)) order[j] = order[j - 1], j--;
        order[j] = i;
    }
    char canon[64 * 66 + 1];
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        if (i) canon[len++] = ',';
        slow_hex(o[order[i]].key.ptr, o[order[i]].key.len, canon + len);
        canon[len + 32] = '=';
        slow_hex(o[order[i]].value.ptr, o[order[i]].value.len, canon + len + 33);
        len += 65;
    }
    const cckey_bytes field[4] = {dev, name, src, {canon, len}};
    char h[4][33];
    for (int i = 0; i < 4; i++) slow_hex(field[i].ptr, field[i].len, h[i]);
    snprintf(out, CCKEY_KEY_LEN + 1, "%s:%s:%s:%s", h[0], h[1], h[2], h[3]);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    for (int i = 0; i < 64; i++) K[i] = (uint32_t)(uint64_t)floor(fabs(sin(i + 1.0)) * 4294967296.0);
    /* The reference checks itself before it judges anything. */
    char h[33];
    slow_hex("message digest", 14, h);
    if (strcmp(h, "f96b697d7cb7938d525a2f31aaf161d0") != 0) abort();
    slow_hex("", 0, h);
    if (strcmp(h, "d41d8cd98f00b204e9800998ecf8427e") != 0) abort();
    return 0;
}

/* ---- the target -------------------------------------------------------------- */

typedef struct reader {
    const uint8_t *p;
    size_t left;
} reader;

static size_t take_len(reader *r, int bytes)
{
    size_t n = 0;
    for (int i = 0; i < bytes && r->left; i++, r->left--) n = n << 8 | *r->p++;
    return n < r->left ? n : r->left;
}

static cckey_bytes take(reader *r, int len_bytes)
{
    size_t n = take_len(r, len_bytes);
    /* An empty field is {NULL, 0} or a real pointer, by the length's parity
     * bit: both are legal and must agree. */
    cckey_bytes b = {n || (r->left & 1) ? (const void *)r->p : NULL, n};
    r->p += n;
    r->left -= n;
    return b;
}

static void expect(const char *got, const char *want, const char *what)
{
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "%s:\n  got  %s\n  want %s\n", what, got, want);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    reader r = {data + 2, size - 2};
    size_t n = data[0] % 40;
    unsigned flags = data[1] & 1 ? CCKEY_SOURCE_BORROW : CCKEY_SOURCE_COPY;
    cckey_bytes dev = take(&r, 1), name = take(&r, 1), src = take(&r, 2);
    cckey_option opts[40];
    for (size_t i = 0; i < n; i++) {
        opts[i].key = take(&r, 1);
        opts[i].value = take(&r, 1);
    }

    char want[CCKEY_KEY_LEN + 1], got[CCKEY_KEY_LEN + 1];
    slow_key(want, dev, name, src, opts, n);

    if (cckey_make_key(got, dev, name, src, opts, n) != CCKEY_OK) abort();
    expect(got, want, "cckey_make_key");

    cckey_source *s;
    if (cckey_source_new(&s, src, flags) != CCKEY_OK) abort();
    for (int i = 0; i < 2; i++) {   /* a miss, then (if memoisable) a hit */
        if (cckey_source_key(got, s, dev, name, opts, n) != CCKEY_OK) abort();
        expect(got, want, i ? "cckey_source_key, second call" : "cckey_source_key");
    }
    cckey_source_free(s);

    /* A batch: the tuple, a copy of it at other addresses, and its options
     * reversed (which changes the key only through equal option keys). */
    uint8_t *copy = malloc(size);
    if (!copy) return 0;
    memcpy(copy, data, size);
#define MOVED(b) ((cckey_bytes){(b).ptr ? copy + ((const uint8_t *)(b).ptr - data) : NULL, (b).len})
    cckey_option opts2[40], rev[40];
    for (size_t i = 0; i < n; i++) {
        opts2[i] = (cckey_option){MOVED(opts[i].key), MOVED(opts[i].value)};
        rev[i] = opts[n - 1 - i];
    }
    cckey_tuple t[3] = {{dev, name, src, opts, n}, {MOVED(dev), MOVED(name), MOVED(src), opts2, n},
                        {dev, name, src, rev, n}};
    char out[3][CCKEY_KEY_LEN + 1], want_rev[CCKEY_KEY_LEN + 1];
    slow_key(want_rev, dev, name, src, rev, n);
    cckey_batch_config *cfg;
    if (cckey_batch_config_new(&cfg) != CCKEY_OK || cckey_batch_config_set_backend(cfg, CCKEY_BACKEND_CPU) != CCKEY_OK)
        abort();
    if (cckey_make_keys(out, t, 3, data[1] & 2 ? cfg : NULL) != CCKEY_OK) abort();
    expect(out[0], want, "cckey_make_keys [0]");
    expect(out[1], want, "cckey_make_keys [1] (copy)");
    expect(out[2], want_rev, "cckey_make_keys [2] (reversed options)");
    cckey_batch_config_free(cfg);
    free(copy);
    return 0;
}
