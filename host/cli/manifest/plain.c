/* The fast path of the manifest parser (see manifest.h): lines of the
 * usual shape, parsed without the general machinery.
 *
 * Nearly every manifest line is one flat object of known members with
 * string values, and "options" as [[k, v], ...] or {k: v, ...}, written by
 * a program: plain ASCII, no escapes. One pass over such a line (no
 * backslash, no control byte, no byte >= 0x80) copies it and marks its
 * quotes; then each string decodes to itself and ends at the next quote,
 * and the rest is a few fixed tokens with spaces between them. Anything else -- an escape, UTF-8, a number, an unknown or
 * repeated member, a malformed token -- is not judged here: the line goes
 * to the strict parser, which gives the verdict and the error. So this path
 * only ever accepts, and only what the strict parser accepts with the same
 * result (fuzz/fuzz_manifest_diff.c runs both through mj_parse). It exists
 * because the general parser walked these lines at half simdjson's rate
 * (bench/parse.c). */
#include "json.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Lines up to this long (most are ~100 bytes) take the fast path. */
#define PLAIN_MAX 4096

typedef struct plain {
    const uint8_t *s;
    size_t len, i;
    char *out;
    mj_parser *p;
    mj_line *res;
    uint64_t quotes[PLAIN_MAX / 64];   /* bit k of word k / 64: s[k] is '"' */
} plain;

/* One pass over the line: copies it to out (a plain line decodes to
 * itself, so every string is then in out at its own offset), marks its
 * quotes, and says whether every byte is plain (no '\\', no byte < 0x20 or
 * >= 0x80). */
static bool scan(plain *c)
{
    const uint8_t *s = c->s;
    size_t len = c->len, i = 0;
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
    __m128i odd = _mm_setzero_si128();
    uint64_t m = 0;   /* the quotes of the current 64 bytes, stored whole */
    for (; i + 16 <= len; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
        _mm_storeu_si128((__m128i *)(c->out + i), v);
        /* As signed bytes, "< 0x20" also holds for every byte >= 0x80. */
        odd = _mm_or_si128(odd, _mm_or_si128(_mm_cmpeq_epi8(v, bslash), _mm_cmplt_epi8(v, space)));
        m |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote)) << (i % 64);
        if (i % 64 == 48) {
            c->quotes[i / 64] = m;
            m = 0;
        }
    }
    if (i < len && len >= 16) {
        /* The last 16 bytes, overlapping ones already seen: checking and
         * copying those again is harmless, their quotes are shifted out. */
        size_t seen = 16 - (len - i);
        __m128i v = _mm_loadu_si128((const __m128i *)(s + len - 16));
        _mm_storeu_si128((__m128i *)(c->out + len - 16), v);
        odd = _mm_or_si128(odd, _mm_or_si128(_mm_cmpeq_epi8(v, bslash), _mm_cmplt_epi8(v, space)));
        m |= (uint64_t)((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote)) >> seen) << (i % 64);
    } else if (i < len) {   /* a short line, padded with spaces (plain, not quotes) */
        uint8_t tail[16];
        memset(tail, ' ', sizeof tail);
        memcpy(tail, s + i, len - i);
        memcpy(c->out + i, s + i, len - i);
        __m128i v = _mm_loadu_si128((const __m128i *)tail);
        odd = _mm_or_si128(odd, _mm_or_si128(_mm_cmpeq_epi8(v, bslash), _mm_cmplt_epi8(v, space)));
        m |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote)) << (i % 64);
    }
    if (len % 64) c->quotes[len / 64] = m;
    return !_mm_movemask_epi8(odd);
#else
    uint64_t m = 0;
    bool ok = true;
    for (; i < len; i++) {
        uint8_t ch = s[i];
        ok &= ch >= 0x20 && ch < 0x80 && ch != '\\';
        c->out[i] = (char)ch;
        m |= (uint64_t)(ch == '"') << (i % 64);
        if (i % 64 == 63 || i + 1 == len) {
            c->quotes[i / 64] = m;
            m = 0;
        }
    }
    return ok;
#endif
}

static inline __attribute__((always_inline)) void ws(plain *c)
{
    while (c->i < c->len && c->s[c->i] == ' ') c->i++;
}

static inline __attribute__((always_inline)) bool take(plain *c, uint8_t ch)
{
    ws(c);
    if (c->i >= c->len || c->s[c->i] != ch) return false;
    c->i++;
    return true;
}

/* A string at s[i] (after spaces): it ends at the next quote. */
static inline __attribute__((always_inline)) bool str(plain *c, cckey_bytes *b, size_t *at)
{
    ws(c);
    if (c->i >= c->len || c->s[c->i] != '"') return false;
    if (at) *at = c->i;
    size_t start = c->i + 1, w = start / 64;
    if (start >= c->len) return false;   /* a quote as the last byte: no mask word past it */
    uint64_t m = start % 64 ? c->quotes[w] >> (start % 64) << (start % 64) : c->quotes[w];
    size_t words = (c->len + 63) / 64;
    while (!m) {
        if (++w >= words) return false;
        m = c->quotes[w];
    }
    size_t end = w * 64 + (size_t)__builtin_ctzll(m);
    *b = (cckey_bytes){c->out + start, end - start};
    c->i = end + 1;
    return true;
}

static bool same(cckey_bytes a, cckey_bytes b) { return a.len == b.len && memcmp(a.ptr, b.ptr, a.len) == 0; }

static bool push(plain *c, cckey_bytes k, cckey_bytes v, int *oom)
{
    if (mj_push_option(c->p, c->res, k, v) == 0) return true;
    *oom = 1;
    return false;
}

/* [[k, v], ...] with string pairs. */
static bool pairs(plain *c, int *oom)
{
    c->i++;   /* '[' */
    if (take(c, ']')) return true;
    do {
        cckey_bytes k, v;
        if (!take(c, '[') || !str(c, &k, NULL) || !take(c, ',') || !str(c, &v, NULL) || !take(c, ']')) return false;
        if (!push(c, k, v, oom)) return false;
    } while (take(c, ','));
    return take(c, ']');
}

/* {k: v, ...} with string values and distinct names (a few: larger objects
 * go to the strict parser, which sorts to find duplicates). */
static bool members(plain *c, int *oom)
{
    c->i++;   /* '{' */
    if (take(c, '}')) return true;
    do {
        cckey_bytes k, v;
        if (!str(c, &k, NULL) || !take(c, ':') || !str(c, &v, NULL)) return false;
        mj_line *r = c->res;
        if (r->n_opts >= 16) return false;
        for (size_t j = 0; j < r->n_opts; j++)
            if (same(c->p->opts[j].key, k)) return false;
        if (!push(c, k, v, oom)) return false;
    } while (take(c, ','));
    return take(c, '}');
}

/* The member a name stands for, or NULL (unknown names go the slow way, for
 * the typo hints it gives). */
static mj_member *known(mj_line *r, cckey_bytes k)
{
    const char *n = k.ptr;
    switch (k.len) {
    case 4: return memcmp(n, "name", 4) ? NULL : &r->name;
    case 6: return !memcmp(n, "device", 6) ? &r->device : !memcmp(n, "source", 6) ? &r->source : NULL;
    case 7: return memcmp(n, "options", 7) ? NULL : &r->options;
    case 8: return memcmp(n, "language", 8) ? NULL : &r->language;
    case 11: return memcmp(n, "source_file", 11) ? NULL : &r->source_file;
    }
    return NULL;
}

int mj_parse_plain(mj_parser *p, const char *line, size_t len, char *out, mj_line *res)
{
    if (len > PLAIN_MAX) return 0;
    plain c;
    c.s = (const uint8_t *)line;
    c.len = len;
    c.i = 0;
    c.out = out;
    c.p = p;
    c.res = res;
    if (!scan(&c)) return 0;
    int oom = 0;
    if (!take(&c, '{')) return 0;
    if (take(&c, '}')) goto done;
    do {
        cckey_bytes k;
        size_t key_off;
        if (!str(&c, &k, &key_off) || !take(&c, ':')) return 0;
        mj_member *m = known(res, k);
        if (!m || m->present) return 0;
        ws(&c);
        if (c.i >= len) return 0;
        *m = (mj_member){.present = true, .key_off = key_off, .val_off = c.i};
        if (m == &res->options && (c.s[c.i] == '[' || c.s[c.i] == '{')) {
            m->kind = c.s[c.i] == '[' ? MJ_ARRAY : MJ_OBJECT;
            if (!(m->kind == MJ_ARRAY ? pairs(&c, &oom) : members(&c, &oom))) return oom ? -2 : 0;
        } else {
            m->kind = MJ_STRING;
            if (!str(&c, &m->str, NULL)) return 0;
        }
        m->val_end = c.i;
    } while (take(&c, ','));
    if (!take(&c, '}')) return 0;
done:
    ws(&c);
    if (c.i != len) return 0;
    res->root = MJ_OBJECT;
    res->opts = p->opts;
    return 1;
}

/* The fast path first, the strict parser (json.c) for what it leaves: here,
 * so that json.c never calls back into this file. */
int mj_parse(mj_parser *p, const char *line, size_t len, char *out, mj_line *res, size_t *bad_off, char *what,
             size_t what_len)
{
    /* Zeroed up to the unknown names, which count by n_unknown. */
    memset(res, 0, offsetof(mj_line, unknown));
    p->n_hits = 0;
    int fast = mj_parse_plain(p, line, len, out, res);
    if (fast == 1) return 0;
    if (fast == -2) {
        *bad_off = 0;
        return -2;
    }
    return mj_parse_strict(p, line, len, out, res, bad_off, what, what_len);
}
