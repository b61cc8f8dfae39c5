/* The CLI's one JSON writer (json_out.h): text built in a buffer, member by
 * member, and printed whole, so a failure never leaves half a line. */
#include "json_out.h"
#include "cli.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void cli_json_init(cli_json *w, cli_json_layout layout, bool strict)
{
    memset(w, 0, sizeof *w);
    w->layout = layout;
    w->strict = strict;
}

void cli_json_free(cli_json *w)
{
    free(w->buf);
    cli_json_init(w, w->layout, w->strict);
}

void cli_json_reset(cli_json *w)
{
    w->len = 0;
    w->failed = w->after_key = w->inline_next = false;
    w->depth = w->inline_from = 0;
}

/* The layout of the innermost open container. */
static cli_json_layout layout(const cli_json *w) { return w->inline_from ? CLI_JSON_SPACED : w->layout; }

int cli_json_put(cli_json *w, FILE *out, const char *end)
{
    int rc = w->failed || w->depth ? -1 : 0;
    if (!rc && w->len) fwrite(w->buf, 1, w->len, out);
    if (!rc && end) fputs(end, out);
    cli_json_reset(w);
    return rc;
}

static bool room(cli_json *w, size_t n)
{
    if (w->failed) return false;
    if (w->len + n <= w->cap) return true;
    size_t cap = w->cap ? w->cap : 256;
    while (cap < w->len + n) cap *= 2;
    char *b = realloc(w->buf, cap);
    if (!b) {
        w->failed = true;
        return false;
    }
    w->buf = b, w->cap = cap;
    return true;
}

static void add(cli_json *w, const char *s, size_t n)
{
    if (room(w, n)) memcpy(w->buf + w->len, s, n), w->len += n;
}

static void add_c(cli_json *w, char c) { add(w, &c, 1); }

/* A line break and the indent of depth d (INDENT only). */
static void newline(cli_json *w, int d)
{
    if (!room(w, 1 + 2 * (size_t)d)) return;
    w->buf[w->len++] = '\n';
    memset(w->buf + w->len, ' ', 2 * (size_t)d);
    w->len += 2 * (size_t)d;
}

/* What goes before a value or a key: nothing after a key or at the top;
 * else the separator from the container's previous member. */
static void before(cli_json *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (!w->depth) return;
    bool *had = &w->members[w->depth - 1];
    cli_json_layout l = layout(w);
    if (*had) add(w, l == CLI_JSON_SPACED ? ", " : ",", l == CLI_JSON_SPACED ? 2 : 1);
    if (l == CLI_JSON_INDENT) newline(w, w->depth);
    *had = true;
}

static void open_with(cli_json *w, char c, char close)
{
    before(w);
    if (w->depth == CLI_JSON_DEPTH) {
        w->failed = true;
        return;
    }
    add_c(w, c);
    w->closer[w->depth] = close;
    w->members[w->depth++] = false;
    if (w->inline_next && !w->inline_from) w->inline_from = w->depth;
    w->inline_next = false;
}

void cli_json_inline(cli_json *w) { w->inline_next = true; }

void cli_json_object(cli_json *w) { open_with(w, '{', '}'); }
void cli_json_array(cli_json *w) { open_with(w, '[', ']'); }

void cli_json_end(cli_json *w)
{
    if (!w->depth || w->after_key) {   /* a caller's bug: say so through put */
        w->failed = true;
        return;
    }
    if (w->members[w->depth - 1] && layout(w) == CLI_JSON_INDENT) newline(w, w->depth - 1);
    if (w->inline_from == w->depth) w->inline_from = 0;
    w->depth--;
    add_c(w, w->closer[w->depth]);
}

/* JSON's two-character escapes; NULL for a byte that has none. */
static const char *short_escape(unsigned char c)
{
    switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\b': return "\\b";
    case '\f': return "\\f";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: return NULL;
    }
}

/* The escaped text of s[0..len), quotes included. false: invalid UTF-8 in
 * a strict writer. */
static bool add_string(cli_json *w, const char *s, size_t len)
{
    add_c(w, '"');
    const unsigned char *p = (const unsigned char *)(s ? s : ""), *end = p + len;
    while (p < end && !w->failed) {
        const unsigned char *run = p;   /* bytes that go out as they are */
        while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') p++;
        add(w, (const char *)run, (size_t)(p - run));
        if (p == end) break;
        unsigned char c = *p;
        if (c >= 0x80) {
            size_t k = cli_utf8_len(p, (size_t)(end - p));
            if (!k && w->strict) return false;
            if (k) add(w, (const char *)p, k);
            else add(w, "\xef\xbf\xbd", 3);
            p += k ? k : 1;
            continue;
        }
        const char *sh = short_escape(c);
        char esc[8];
        if (!sh) snprintf(esc, sizeof esc, "\\u%04X", c);
        add(w, sh ? sh : esc, sh ? 2 : 6);
        p++;
    }
    add_c(w, '"');
    return true;
}

void cli_json_key(cli_json *w, const char *key)
{
    before(w);
    if (!add_string(w, key, strlen(key))) w->failed = true;
    add(w, layout(w) == CLI_JSON_COMPACT ? ":" : ": ", layout(w) == CLI_JSON_COMPACT ? 1 : 2);
    w->after_key = true;
}

void cli_json_strn(cli_json *w, const char *s, size_t len)
{
    before(w);
    if (!add_string(w, s, len)) w->failed = true;
}

void cli_json_str(cli_json *w, const char *s)
{
    if (s) cli_json_strn(w, s, strlen(s));
    else cli_json_null(w);
}

static void add_text(cli_json *w, const char *t)
{
    before(w);
    add(w, t, strlen(t));
}

void cli_json_int(cli_json *w, long long v)
{
    char t[24];
    snprintf(t, sizeof t, "%lld", v);
    add_text(w, t);
}

/* %.17g, read back as a real: ".0" on a whole number; "e+05" as "e5". */
void cli_json_real(cli_json *w, double v)
{
    if (!isfinite(v)) {   /* JSON has no NaN or infinity */
        cli_json_null(w);
        return;
    }
    char t[40];
    int n = snprintf(t, sizeof t - 2, "%.17g", v);
    if (n < 0 || (size_t)n >= sizeof t - 2) {
        w->failed = true;
        return;
    }
    if (!strpbrk(t, ".e")) memcpy(t + n, ".0", 3);
    char *e = strchr(t, 'e');
    if (e) {
        char *digits = e + 1 + (e[1] == '-'), *from = e + 1;
        while (*from == '+' || *from == '-' || (*from == '0' && from[1])) from++;
        memmove(digits, from, strlen(from) + 1);
    }
    add_text(w, t);
}

void cli_json_fixed(cli_json *w, double v, int decimals)
{
    char t[64];
    if (!isfinite(v) || snprintf(t, sizeof t, "%.*f", decimals, v) >= (int)sizeof t) {
        cli_json_null(w);
        return;
    }
    add_text(w, t);
}

void cli_json_bool(cli_json *w, bool v) { add_text(w, v ? "true" : "false"); }
void cli_json_null(cli_json *w) { add_text(w, "null"); }

void cli_json_kstr(cli_json *w, const char *key, const char *s) { cli_json_key(w, key), cli_json_str(w, s); }
void cli_json_kint(cli_json *w, const char *key, long long v) { cli_json_key(w, key), cli_json_int(w, v); }
void cli_json_kreal(cli_json *w, const char *key, double v) { cli_json_key(w, key), cli_json_real(w, v); }
void cli_json_kbool(cli_json *w, const char *key, bool v) { cli_json_key(w, key), cli_json_bool(w, v); }
void cli_json_knull(cli_json *w, const char *key) { cli_json_key(w, key), cli_json_null(w); }

void cli_json_kstrs(cli_json *w, const char *key, const char *const *v, size_t n)
{
    cli_json_key(w, key);
    cli_json_array(w);
    for (size_t i = 0; i < n; i++) cli_json_str(w, v[i]);
    cli_json_end(w);
}

void cli_json_rows_start(cli_json_rows *r, FILE *out, bool array, cli_json_layout row_layout, bool strict)
{
    r->out = out, r->array = array, r->n = 0;
    cli_json_init(&r->w, row_layout, strict);
}

int cli_json_row_put(cli_json_rows *r)
{
    if (r->w.failed || r->w.depth) return cli_json_put(&r->w, r->out, NULL);
    if (r->array) fputs(r->n ? ",\n  " : "[\n  ", r->out);
    r->n++;
    return cli_json_put(&r->w, r->out, r->array ? NULL : "\n");
}

void cli_json_rows_end(cli_json_rows *r, bool complete)
{
    if (complete && r->array) fputs(r->n ? "\n]\n" : "[]\n", r->out);
    cli_json_free(&r->w);
}
