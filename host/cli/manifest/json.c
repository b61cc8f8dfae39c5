/* A strict JSON parser for one manifest line (see manifest.h).
 *
 * Recursive descent over the bytes, strings decoded as they are met into
 * the caller's buffer. jansson's rules, kept here because the manifest
 * format was defined by them: whitespace is space, tab, CR and LF; strings
 * are valid UTF-8 (no overlong forms, no encoded surrogates, nothing past
 * U+10FFFF) without raw control bytes; \u escapes pair surrogates; integers
 * must fit 64 bits and reals must not overflow a double; member names may
 * not hold \u0000 and may not repeat; nesting stops at 2048 levels. */
#include "json.h"
#include "reuse.h"
#include "simd.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define MAX_DEPTH 2048
#define LINEAR_DUPS 16   /* objects with more members are checked by sorting */

const char *mj_kind_name(int kind)
{
    switch (kind) {
    case MJ_OBJECT: return "an object";
    case MJ_ARRAY: return "an array";
    case MJ_STRING: return "a string";
    case MJ_INTEGER: return "an integer";
    case MJ_REAL: return "a number";
    case MJ_BOOL: return "a boolean";
    case MJ_NULL: return "null";
    }
    return "a value";
}

void mj_parser_free(mj_parser *p)
{
    free(p->keys);
    free(p->opts);
    memset(p, 0, sizeof *p);
}

typedef struct ctx {
    mj_parser *p;
    mj_str_kernel kern;
    const uint8_t *s;
    size_t len, i;
    char *out;
    size_t o;
    int depth, err;   /* err: 0, -1 invalid, -2 out of memory */
    size_t bad;
    char *what;
    size_t what_len;
    mj_line *res;
    cckey_bytes pair_kv[2];   /* the last [key, value] pair of strings seen */
} ctx;

/* What a value was, for the callers that look at it. */
typedef struct val {
    int kind;
    cckey_bytes str;
} val;

static int fail(ctx *c, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(ctx *c, size_t at, const char *fmt, ...)
{
    if (c->err) return -1;
    c->err = -1;
    c->bad = at;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->what, c->what_len, fmt, ap);
    va_end(ap);
    return -1;
}

static int end_early(ctx *c) { return fail(c, c->len, "premature end of input"); }

static void skip_ws(ctx *c)
{
    while (c->i < c->len) {
        uint8_t ch = c->s[c->i];
        if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r') return;
        c->i++;
    }
}

static int hex4(const uint8_t *p)
{
    int v = 0;
    for (int k = 0; k < 4; k++) {
        int d = p[k] >= '0' && p[k] <= '9' ? p[k] - '0' : p[k] >= 'a' && p[k] <= 'f' ? p[k] - 'a' + 10
              : p[k] >= 'A' && p[k] <= 'F' ? p[k] - 'A' + 10 : -1;
        if (d < 0) return -1;
        v = v << 4 | d;
    }
    return v;
}

static void put_utf8(ctx *c, uint32_t cp)
{
    char *o = c->out + c->o;
    if (cp < 0x80) {
        o[0] = (char)cp;
        c->o += 1;
    } else if (cp < 0x800) {
        o[0] = (char)(0xc0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3f));
        c->o += 2;
    } else if (cp < 0x10000) {
        o[0] = (char)(0xe0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        c->o += 3;
    } else {
        o[0] = (char)(0xf0 | cp >> 18);
        o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
        o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
        o[3] = (char)(0x80 | (cp & 0x3f));
        c->o += 4;
    }
}

/* An escape at s[i] == '\\'; advances past it. */
static int escape(ctx *c)
{
    size_t at = c->i;
    if (c->i + 1 >= c->len) return end_early(c);
    uint8_t e = c->s[c->i + 1];
    char to = mj_short_escape(e);
    if (to) {
        c->out[c->o++] = to;
        c->i += 2;
        return 0;
    }
    if (e != 'u') return fail(c, at + 1, "invalid escape");
    if (c->i + 6 > c->len) return end_early(c);
    int cp = hex4(c->s + c->i + 2);
    if (cp < 0) return fail(c, at + 2, "invalid escape");
    c->i += 6;
    if (cp >= 0xdc00 && cp <= 0xdfff) return fail(c, at, "invalid Unicode '\\u%04X'", cp);
    if (cp >= 0xd800 && cp <= 0xdbff) {
        if (c->i + 6 > c->len || c->s[c->i] != '\\' || c->s[c->i + 1] != 'u')
            return fail(c, at, "invalid Unicode '\\u%04X'", cp);
        int lo = hex4(c->s + c->i + 2);
        if (lo < 0) return fail(c, c->i + 2, "invalid escape");
        if (lo < 0xdc00 || lo > 0xdfff) return fail(c, at, "invalid Unicode '\\u%04X\\u%04X'", cp, lo);
        c->i += 6;
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    }
    put_utf8(c, (uint32_t)cp);
    return 0;
}

/* One UTF-8 sequence of two or more bytes at s[i]; copied, or an error at
 * the first byte that cannot be part of it. */
static int utf8_seq(ctx *c)
{
    const uint8_t *s = c->s + c->i;
    size_t left = c->len - c->i, n;
    uint8_t lo = 0x80, hi = 0xbf;
    if (s[0] >= 0xc2 && s[0] <= 0xdf) n = 2;
    else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        n = 3;
        if (s[0] == 0xe0) lo = 0xa0;          /* overlong */
        else if (s[0] == 0xed) hi = 0x9f;     /* surrogates */
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        n = 4;
        if (s[0] == 0xf0) lo = 0x90;          /* overlong */
        else if (s[0] == 0xf4) hi = 0x8f;     /* past U+10FFFF */
    } else {
        return fail(c, c->i, "unable to decode byte 0x%x", s[0]);
    }
    for (size_t k = 1; k < n; k++) {
        if (k >= left) return end_early(c);
        uint8_t b = s[k];
        if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xbf))
            return fail(c, c->i + k, "unable to decode byte 0x%x", b);
    }
    memcpy(c->out + c->o, s, n);
    c->o += n;
    c->i += n;
    return 0;
}

/* Hand out an entry of the run-wide layer, noting it for the caller. */
static bool known_hit(ctx *c, size_t body, const mj_known_entry *e, cckey_bytes *str)
{
    mj_parser *p = c->p;
    if (p->n_hits < MJ_HITS_MAX) p->hits[p->n_hits++] = e;
    c->i = body + e->raw_len + 1;
    *str = e->dec;
    return true;
}

/* A long string whose raw bytes repeat an earlier one's (manifest.h):
 * true with *str set and the string consumed; false with *slot set for
 * the chunk table's put once it is decoded. A repeat within the chunk is
 * promoted to the run-wide layer when there is one. */
static bool repeat(ctx *c, size_t body, size_t *slot, cckey_bytes *str)
{
    const uint8_t *s = c->s + body;
    size_t avail = c->len - body;
    uint64_t h = mj_reuse_hash(s);
    mj_known *known = c->p->known;
    const mj_known_entry *k = known ? mj_known_find(known, h, s, avail) : NULL;
    if (k) return known_hit(c, body, k, str);
    mj_reuse *reuse = c->p->reuse;
    if (!reuse) return false;
    *slot = mj_reuse_slot(reuse, h);
    const mj_reuse_entry *e = mj_reuse_find(reuse, *slot, s, avail);
    if (!e) return false;
    if (known && (k = mj_known_add(known, h, s, e->raw_len, e->dec))) return known_hit(c, body, k, str);
    c->i = body + e->raw_len + 1;
    *str = e->dec;
    return true;
}

/* A short plain string (member names, most values): ended by a quote
 * within 32 bytes, nothing to decode before it. true with it taken; false
 * (nothing taken) for the general path. Calling the block kernel and the
 * repeat look-up costs more than the whole string then. out has room: it
 * holds len bytes, and o <= i, so 16 bytes at o fit where 16 at i do. */
static bool short_plain(ctx *c, size_t start, cckey_bytes *str)
{
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
    for (size_t k = 0; k < 32 && c->len - c->i >= k + 16; k += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(c->s + c->i + k));
        /* As signed bytes, "< 0x20" also holds for every byte >= 0x80. */
        __m128i odd = _mm_or_si128(_mm_cmpeq_epi8(v, bslash), _mm_cmplt_epi8(v, space));
        unsigned q = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote)), o = (unsigned)_mm_movemask_epi8(odd);
        _mm_storeu_si128((__m128i *)(c->out + c->o + k), v);
        if (!q && !o) continue;
        if (!q || (o && __builtin_ctz(o) < __builtin_ctz(q))) return false;
        size_t n = k + (size_t)__builtin_ctz(q);
        c->o += n;
        c->i += n + 1;
        *str = (cckey_bytes){c->out + start, c->o - start};
        return true;
    }
#else
    (void)c, (void)start, (void)str;
#endif
    return false;
}

/* A string at s[i] == '"': decoded into out, *str pointing at it. */
static int string(ctx *c, cckey_bytes *str)
{
    size_t start = c->o;
    c->i++;
    if (short_plain(c, start, str)) return 0;
    mj_reuse *reuse = c->p->reuse;
    size_t body = c->i, slot = SIZE_MAX;   /* set when the string was looked up */
    /* Only strings of MJ_REUSE_MIN raw bytes or more (no quote that early)
     * are looked up: member names and short values never pay for it. */
    if ((reuse || c->p->known) && c->len - body > MJ_REUSE_MIN && !memchr(c->s + body, '"', MJ_REUSE_MIN) &&
        repeat(c, body, &slot, str))
        return 0;
    for (;;) {
        /* The common run: plain ASCII, one-character escapes and (AVX2 and
         * up) valid UTF-8, a block at a time (simd.c); then the
         * rest byte by byte. */
        c->i = c->kern(c->s, c->i, c->len, c->out, &c->o);
        size_t run = c->i;
        while (run < c->len) {
            uint8_t ch = c->s[run];
            if (ch < 0x20 || ch == '"' || ch == '\\' || ch >= 0x80) break;
            run++;
        }
        memcpy(c->out + c->o, c->s + c->i, run - c->i);
        c->o += run - c->i;
        c->i = run;
        if (c->i >= c->len) return end_early(c);
        uint8_t ch = c->s[c->i];
        if (ch == '"') {
            *str = (cckey_bytes){c->out + start, c->o - start};
            if (reuse && slot != SIZE_MAX) mj_reuse_put(reuse, slot, c->s + body, c->i - body, *str);
            c->i++;
            return 0;
        }
        int r = ch == '\\' ? escape(c) : ch >= 0x80 ? utf8_seq(c) : fail(c, c->i, "control character 0x%x", ch);
        if (r) return r;
    }
}

static int is_digit(uint8_t ch) { return ch >= '0' && ch <= '9'; }

static void skip_digits(ctx *c)
{
    while (c->i < c->len && is_digit(c->s[c->i])) c->i++;
}

/* The integer part: a lone 0, or digits not starting with 0. */
static int int_part(ctx *c)
{
    if (c->i >= c->len) return end_early(c);
    if (c->s[c->i] == '0') {
        c->i++;
        if (c->i < c->len && is_digit(c->s[c->i])) return fail(c, c->i, "invalid token");
        return 0;
    }
    if (!is_digit(c->s[c->i])) return fail(c, c->i, "invalid token");
    skip_digits(c);
    return 0;
}

/* At least one digit, where a fraction or an exponent needs them. */
static int some_digits(ctx *c)
{
    if (c->i >= c->len) return end_early(c);
    if (!is_digit(c->s[c->i])) return fail(c, c->i, "invalid token");
    skip_digits(c);
    return 0;
}

/* The fraction and the exponent, each optional; *real when either is there. */
static int real_parts(ctx *c, bool *real)
{
    if (c->i < c->len && c->s[c->i] == '.') {
        *real = true;
        c->i++;
        int r = some_digits(c);
        if (r) return r;
    }
    if (c->i < c->len && (c->s[c->i] == 'e' || c->s[c->i] == 'E')) {
        *real = true;
        c->i++;
        if (c->i < c->len && (c->s[c->i] == '+' || c->s[c->i] == '-')) c->i++;
        return some_digits(c);
    }
    return 0;
}

/* jansson keeps integers in 64 bits and refuses the rest. */
static int integer_range(ctx *c, size_t start, bool neg, size_t int_digits)
{
    static const char max[] = "9223372036854775807", min[] = "9223372036854775808";
    const char *d = (const char *)c->s + start + neg;
    if (int_digits > 19 || (int_digits == 19 && memcmp(d, neg ? min : max, 19) > 0))
        return fail(c, start, neg ? "too big negative integer" : "too big integer");
    return 0;
}

/* jansson refuses a real that overflows a double. */
static int real_range(ctx *c, size_t start)
{
    size_t n = c->i - start;
    char small[128], *buf = n < sizeof small ? small : malloc(n + 1);
    if (!buf) {
        c->err = -2;
        return -1;
    }
    memcpy(buf, c->s + start, n);
    buf[n] = '\0';
    errno = 0;
    double d = strtod(buf, NULL);
    bool overflow = (d == HUGE_VAL || d == -HUGE_VAL) && errno == ERANGE;
    if (buf != small) free(buf);
    return overflow ? fail(c, start, "real number overflow") : 0;
}

static int number(ctx *c, val *v)
{
    size_t start = c->i;
    bool neg = c->s[c->i] == '-', real = false;
    if (neg) c->i++;
    int r = int_part(c);
    if (r) return r;
    size_t int_digits = c->i - start - neg;
    if ((r = real_parts(c, &real))) return r;
    v->kind = real ? MJ_REAL : MJ_INTEGER;
    return real ? real_range(c, start) : integer_range(c, start, neg, int_digits);
}

static int literal(ctx *c, val *v)
{
    size_t start = c->i;
    while (c->i < c->len && ((c->s[c->i] | 0x20) >= 'a' && (c->s[c->i] | 0x20) <= 'z')) c->i++;
    size_t n = c->i - start;
    const char *w = (const char *)c->s + start;
    if (n == 4 && memcmp(w, "true", 4) == 0) v->kind = MJ_BOOL;
    else if (n == 5 && memcmp(w, "false", 5) == 0) v->kind = MJ_BOOL;
    else if (n == 4 && memcmp(w, "null", 4) == 0) v->kind = MJ_NULL;
    else return fail(c, start, "invalid token");
    return 0;
}

enum { GENERIC, TOP, OPTIONS, PAIR };

static int value(ctx *c, val *v, int mode);

int mj_push_option(mj_parser *p, mj_line *r, cckey_bytes k, cckey_bytes v)
{
    if (r->n_opts == p->cap_opts) {
        size_t cap = p->cap_opts ? 2 * p->cap_opts : 16;
        cckey_option *o = realloc(p->opts, cap * sizeof *o);
        if (!o) return -1;
        p->opts = o;
        p->cap_opts = cap;
    }
    p->opts[r->n_opts++] = (cckey_option){k, v};
    return 0;
}

static int push_pair(ctx *c, cckey_bytes k, cckey_bytes v)
{
    if (mj_push_option(c->p, c->res, k, v) == 0) return 0;
    c->err = -2;
    return -1;
}

static int by_key(const void *a, const void *b)
{
    const mj_key *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int d = n ? memcmp(x->ptr, y->ptr, n) : 0;
    if (d) return d;
    return x->len < y->len ? -1 : x->len > y->len ? 1 : x->off < y->off ? -1 : 1;
}

/* Duplicates among the members of a large object: sorted, then the pair
 * whose later member comes first in the line is the one reported. */
static int sorted_dups(ctx *c, mj_key *k, size_t n)
{
    qsort(k, n, sizeof *k, by_key);
    size_t worst = SIZE_MAX;
    for (size_t i = 1; i < n; i++)
        if (k[i].len == k[i - 1].len && memcmp(k[i].ptr, k[i - 1].ptr, k[i].len) == 0 && k[i].off < worst)
            worst = k[i].off;
    return worst == SIZE_MAX ? 0 : fail(c, worst, "duplicate object key");
}

static mj_member *known(mj_line *r, cckey_bytes k)
{
    static const struct {
        const char *name;
        size_t off;
    } names[] = {{"device", offsetof(mj_line, device)},   {"name", offsetof(mj_line, name)},
                 {"source", offsetof(mj_line, source)},   {"source_file", offsetof(mj_line, source_file)},
                 {"options", offsetof(mj_line, options)}, {"language", offsetof(mj_line, language)}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (k.len == strlen(names[i].name) && memcmp(k.ptr, names[i].name, k.len) == 0)
            return (mj_member *)((char *)r + names[i].off);
    return NULL;
}

/* An object's member name: decoded, refused when it repeats one of the
 * first LINEAR_DUPS (sorted_dups checks the rest at the end), and kept. */
static int member_key(ctx *c, size_t base, cckey_bytes *key, size_t *key_off)
{
    mj_parser *p = c->p;
    if (c->i >= c->len) return end_early(c);
    if (c->s[c->i] != '"') return fail(c, c->i, "string or '}' expected");
    *key_off = c->i;
    if (string(c, key)) return -1;
    if (memchr(key->ptr, '\0', key->len)) return fail(c, *key_off, "NUL byte in object key not supported");
    if (p->n_keys - base < LINEAR_DUPS)
        for (size_t k = base; k < p->n_keys; k++)
            if (p->keys[k].len == key->len && memcmp(p->keys[k].ptr, key->ptr, key->len) == 0)
                return fail(c, *key_off, "duplicate object key");
    if (p->n_keys == p->cap_keys) {
        size_t cap = p->cap_keys ? 2 * p->cap_keys : 64;
        mj_key *k = realloc(p->keys, cap * sizeof *k);
        if (!k) {
            c->err = -2;
            return -1;
        }
        p->keys = k;
        p->cap_keys = cap;
    }
    p->keys[p->n_keys++] = (mj_key){key->ptr, key->len, *key_off};
    return 0;
}

/* What a member's value means: a known member of the line (TOP), an
 * unknown one kept for the typo check, or an option pair (OPTIONS). */
static int member_record(ctx *c, int mode, mj_member *m, cckey_bytes key, size_t key_off, const val *v, size_t val_off)
{
    mj_line *r = c->res;
    if (m) {
        *m = (mj_member){true, v->kind, key_off, v->str, val_off, c->i};
    } else if (mode == TOP && r->n_unknown < MJ_UNKNOWN_MAX) {
        r->unknown_off[r->n_unknown] = key_off;
        r->unknown[r->n_unknown++] = key;
    }
    if (mode != OPTIONS) return 0;
    if (v->kind == MJ_STRING) return push_pair(c, key, v->str) ? -1 : 0;
    if (!r->opt_err) {
        r->opt_err = MJ_OPT_MEMBER;
        r->opt_err_key = key;
        r->opt_err_kind = v->kind;
    }
    return 0;
}

/* One member, name through value. */
static int member(ctx *c, int mode, size_t base)
{
    cckey_bytes key = {0};
    size_t key_off = 0;
    if (member_key(c, base, &key, &key_off)) return -1;
    skip_ws(c);
    if (c->i >= c->len) return end_early(c);
    if (c->s[c->i] != ':') return fail(c, c->i, "':' expected");
    c->i++;
    skip_ws(c);
    val v = {0};
    mj_member *m = mode == TOP ? known(c->res, key) : NULL;
    size_t val_off = c->i;
    if (value(c, &v, m == &c->res->options ? OPTIONS : GENERIC)) return -1;
    return member_record(c, mode, m, key, key_off, &v, val_off);
}

/* After a member or an element: 1 past a ',' (the next one follows), 0
 * past the closing bracket, -1 on anything else. */
static int next_or_close(ctx *c, char close)
{
    skip_ws(c);
    if (c->i >= c->len) return end_early(c);
    if (c->s[c->i] == ',') {
        c->i++;
        skip_ws(c);
        return 1;
    }
    if (c->s[c->i] != (uint8_t)close) return fail(c, c->i, "'%c' expected", close);
    c->i++;
    return 0;
}

static int object(ctx *c, int mode)
{
    mj_parser *p = c->p;
    size_t base = p->n_keys;
    c->i++;
    skip_ws(c);
    if (c->i >= c->len) return end_early(c);
    if (c->s[c->i] == '}') {
        c->i++;
        return 0;
    }
    for (;;) {
        if (member(c, mode, base)) return -1;
        int more = next_or_close(c, '}');
        if (more < 0) return -1;
        if (!more) break;
    }
    int r = p->n_keys - base > LINEAR_DUPS ? sorted_dups(c, p->keys + base, p->n_keys - base) : 0;
    p->n_keys = base;
    return r;
}

/* mode OPTIONS: the elements are pairs; PAIR: keep the first two strings. */
static int array(ctx *c, int mode, val *pair)
{
    c->i++;
    skip_ws(c);
    if (c->i >= c->len) return end_early(c);
    if (c->s[c->i] == ']') {
        c->i++;
        if (mode == PAIR) pair->kind = 0;   /* no elements: not a pair */
        return 0;
    }
    size_t count = 0;
    bool strings = true;
    for (;; count++) {
        val v = {0};
        if (value(c, &v, mode == OPTIONS ? PAIR : GENERIC)) return -1;
        if (mode == OPTIONS) {
            mj_line *r = c->res;
            if (v.kind == MJ_ARRAY && r->opt_err == MJ_OPT_OK && v.str.len == 2 && v.str.ptr) {
                const cckey_bytes *kv = v.str.ptr;
                if (push_pair(c, kv[0], kv[1])) return -1;
            } else if (!r->opt_err) {
                r->opt_err = v.kind == MJ_ARRAY && v.str.len == 2 ? MJ_OPT_PAIR_TYPES : MJ_OPT_PAIR;
                r->opt_err_index = count;
            }
        } else if (mode == PAIR) {
            if (count < 2) pair[1 + count] = v;
            if (v.kind != MJ_STRING) strings = false;
        }
        int more = next_or_close(c, ']');
        if (more < 0) return -1;
        if (!more) {
            count++;
            break;
        }
    }
    if (mode == PAIR) pair->kind = count == 2 && strings ? 2 : count == 2 ? 1 : 0;
    return 0;
}

static int value(ctx *c, val *v, int mode)
{
    if (c->i >= c->len) return end_early(c);
    uint8_t ch = c->s[c->i];
    /* jansson counts every value, scalars too, with its enclosing ones. */
    if (c->depth + 1 > MAX_DEPTH) return fail(c, c->i, "maximum parsing depth reached");
    if (ch == '{' || ch == '[') {
        c->depth++;
        int r;
        if (ch == '{') {
            v->kind = MJ_OBJECT;
            r = object(c, mode == OPTIONS ? OPTIONS : mode == TOP ? TOP : GENERIC);
        } else {
            v->kind = MJ_ARRAY;
            /* A pair's verdict travels back in v->str: {kv, 2} for two
             * strings, {NULL, 2} for two of anything else. */
            val pair[3] = {{0}};
            r = array(c, mode == OPTIONS ? OPTIONS : mode == PAIR ? PAIR : GENERIC, pair);
            if (mode == PAIR && !r) {
                v->str.len = pair[0].kind ? 2 : 0;
                if (pair[0].kind == 2) {
                    c->pair_kv[0] = pair[1].str;
                    c->pair_kv[1] = pair[2].str;
                    v->str.ptr = c->pair_kv;
                } else {
                    v->str.ptr = NULL;
                }
            }
        }
        c->depth--;
        return r;
    }
    if (ch == '"') {
        v->kind = MJ_STRING;
        return string(c, &v->str);
    }
    if (ch == '-' || is_digit(ch)) return number(c, v);
    if (((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z')) return literal(c, v);
    return fail(c, c->i, "invalid token");
}

int mj_parse_strict(mj_parser *p, const char *line, size_t len, char *out, mj_line *res, size_t *bad_off,
                    char *what, size_t what_len)
{
    memset(res, 0, offsetof(mj_line, unknown));
    p->n_keys = 0;
    p->n_hits = 0;
    ctx c = {.p = p, .kern = mj_str_kernel_get(), .s = (const uint8_t *)line, .len = len, .out = out,
             .what = what, .what_len = what_len, .res = res};
    skip_ws(&c);
    val root = {0};
    if (c.i >= len) {
        fail(&c, len, "'[' or '{' expected");
    } else if (!value(&c, &root, TOP)) {
        skip_ws(&c);
        if (c.i < len) fail(&c, c.i, "end of file expected");
    }
    if (c.err) {
        *bad_off = c.bad;
        return c.err;
    }
    res->root = root.kind;
    res->opts = p->opts;
    return 0;
}
