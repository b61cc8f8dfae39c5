/* Programs kept as strings; see strings.h. */
#include "strprog.h"
#include "pp.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BYTES (64u << 20)
#define MAX_STRINGIFY 16

/* A file's text after line splicing (translation phase 2), with each byte's
 * line in the original. */
typedef struct text {
    char *t;
    unsigned *line;
    size_t n;
} text;

/* A program being decoded: its bytes and their original lines. */
typedef struct outbuf {
    char *t;
    unsigned *line;
    size_t n, cap;
} outbuf;

typedef struct decoder {
    const char *path;
    text s;
    scan_macro_env host;            /* the host's macros, for directives inside MSTRINGIFY(...) */
    char stringify[MAX_STRINGIFY][64];   /* macros that stringize their arguments */
    size_t n_stringify;
    const char *why;                 /* why the current expression cannot be decoded exactly */
    int depth;                       /* #include depth */
    bool oom;
} decoder;

static void add_warning(scan_result *out, const char *text)
{
    char **w = realloc(out->warnings, (out->n_warnings + 1) * sizeof *w);
    if (w) out->warnings = w, out->cap_warnings = out->n_warnings + 1;
    if (w && (w[out->n_warnings] = strdup(text))) out->n_warnings++;
}

/* raw[0..n) spliced into out: 0 or -1. */
static int splice_text(const char *raw, size_t n, text *out)
{
    out->t = malloc(n + 1);
    out->line = malloc((n + 1) * sizeof *out->line);
    if (!out->t || !out->line) {
        free(out->t), free(out->line);
        return -1;
    }
    unsigned line = 1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (raw[i] == '\\' && i + 1 < n && raw[i + 1] == '\n') {
            i++, line++;
            continue;
        }
        out->t[k] = raw[i], out->line[k++] = line;
        line += raw[i] == '\n';
    }
    out->t[k] = '\0', out->line[k] = line;
    out->n = k;
    return 0;
}

static int read_text(const char *path, text *out)
{
    FILE *f = fopen(path, "rb");
    if (!f) return CCKEY_SCAN_UNREADABLE;
    char *raw = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            char *p = cap < MAX_BYTES ? realloc(raw, cap = cap ? 2 * cap : 1 << 14) : NULL;
            if (!p) break;
            raw = p;
        }
        size_t r = fread(raw + n, 1, cap - n, f);
        if (!r) break;
        n += r;
    }
    bool bad = ferror(f) || !raw;
    fclose(f);
    int r = bad ? (raw ? CCKEY_SCAN_UNREADABLE : -1) : splice_text(raw, n, out);
    free(raw);
    return r;
}

static void put(decoder *d, outbuf *o, char c, unsigned line)
{
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 4096;
        char *t = realloc(o->t, cap + 1);
        if (t) o->t = t;
        unsigned *l = t ? realloc(o->line, (cap + 1) * sizeof *l) : NULL;
        if (l) o->line = l;
        if (!t || !l) {
            d->oom = true;
            return;
        }
        o->cap = cap;
    }
    o->t[o->n] = c, o->line[o->n++] = line;
    o->t[o->n] = '\0';
}

static bool word_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* The end of the comment at i, or i when none starts there. */
static size_t skip_comment(const text *s, size_t i)
{
    if (i + 1 >= s->n || s->t[i] != '/') return i;
    if (s->t[i + 1] == '/') {
        while (i < s->n && s->t[i] != '\n') i++;
        return i;
    }
    if (s->t[i + 1] != '*') return i;
    for (i += 2; i + 1 < s->n && !(s->t[i] == '*' && s->t[i + 1] == '/'); i++) {}
    return i + 1 < s->n ? i + 2 : s->n;
}

/* The end of the literal ("...", '...', R"d(...)d") starting at i. */
static size_t literal_end(const text *s, size_t i)
{
    if (s->t[i] == 'R' || (i + 1 < s->n && s->t[i + 1] == 'R') || (i + 2 < s->n && s->t[i + 2] == 'R')) {
        size_t q = i;
        while (q < s->n && s->t[q] != '"') q++;
        size_t open = q + 1;
        while (open < s->n && s->t[open] != '(' && open - q <= 17) open++;
        size_t dl = open - q - 1;
        for (size_t j = open + 1; j + dl + 1 < s->n + 1; j++)
            if (s->t[j] == ')' && j + 1 + dl < s->n && !memcmp(s->t + j + 1, s->t + q + 1, dl) && s->t[j + 1 + dl] == '"')
                return j + 2 + dl;
        return s->n;
    }
    while (i < s->n && s->t[i] != '"' && s->t[i] != '\'') i++;   /* past a prefix */
    char q = s->t[i++];
    while (i < s->n && s->t[i] != q && s->t[i] != '\n') i += s->t[i] == '\\' && i + 1 < s->n ? 2 : 1;
    return i < s->n ? i + 1 : i;
}

/* A literal's start at i: its prefix length and whether it is raw; -1 when
 * none starts there. */
static int literal_at(const text *s, size_t i, bool *raw)
{
    static const char *const prefixes[] = {"u8R\"", "LR\"", "uR\"", "UR\"", "R\"", "u8\"", "L\"", "u\"", "U\"", "\""};
    if (i && word_char(s->t[i - 1])) return -1;
    for (size_t k = 0; k < sizeof prefixes / sizeof *prefixes; k++) {
        size_t n = strlen(prefixes[k]);
        if (s->n - i >= n && memcmp(s->t + i, prefixes[k], n) == 0) {
            *raw = strchr(prefixes[k], 'R') != NULL;
            return (int)n - 1;
        }
    }
    return -1;
}

/* One escape sequence after the backslash at i into o; the index after it. */
static size_t unescape(decoder *d, outbuf *o, size_t i)
{
    const text *s = &d->s;
    unsigned line = s->line[i];
    char c = i + 1 < s->n ? s->t[i + 1] : '\0';
    static const char from[] = "ntr\\'\"?abfv", to[] = "\n\t\r\\'\"?\a\b\f\v";
    const char *m = c ? strchr(from, c) : NULL;
    if (m) {
        put(d, o, to[m - from], line);
        return i + 2;
    }
    if (c >= '0' && c <= '7') {
        unsigned v = 0;
        size_t j = i + 1;
        for (int k = 0; k < 3 && j < s->n && s->t[j] >= '0' && s->t[j] <= '7'; k++) v = v * 8 + (unsigned)(s->t[j++] - '0');
        put(d, o, (char)v, line);
        return j;
    }
    if (c == 'x') {
        unsigned v = 0;
        size_t j = i + 2;
        while (j < s->n && isxdigit((unsigned char)s->t[j])) v = v * 16 + (unsigned)(isdigit((unsigned char)s->t[j]) ? s->t[j] - '0' : (tolower((unsigned char)s->t[j]) - 'a' + 10)), j++;
        if (j == i + 2 || v > 255) d->why = "a hexadecimal escape this scan does not decode";
        put(d, o, (char)v, line);
        return j;
    }
    d->why = "an escape sequence this scan does not decode (\\u, \\U or unknown)";
    return i + 2;
}

/* The literal at i (prefix plen) decoded into o; the index after it. */
static size_t decode_literal(decoder *d, outbuf *o, size_t i, int plen, bool raw)
{
    const text *s = &d->s;
    size_t end = literal_end(s, i);
    if (plen && (s->t[i] == 'L' || s->t[i] == 'U' || (s->t[i] == 'u' && s->t[i + 1] != '8')))
        d->why = "a wide string literal";
    if (raw) {
        size_t q = i + (size_t)plen, open = q + 1;
        while (open < end && s->t[open] != '(') open++;
        size_t dl = open - q - 1, stop = end >= dl + 2 ? end - dl - 2 : open + 1;
        for (size_t k = open + 1; k < stop; k++) put(d, o, s->t[k], s->line[k]);
        return end;
    }
    for (size_t k = i + (size_t)plen + 1; k + 1 < end;) {
        if (s->t[k] == '\\') k = unescape(d, o, k);
        else put(d, o, s->t[k], s->line[k]), k++;
    }
    return end;
}

/* ---- MSTRINGIFY(...) ---------------------------------------------------------- */

/* The ')' closing the '(' at open (literals and comments skipped). */
static size_t call_end(const text *s, size_t open)
{
    int depth = 0;
    bool raw;
    for (size_t i = open; i < s->n;) {
        size_t c = skip_comment(s, i);
        if (c != i) {
            i = c;
            continue;
        }
        if (literal_at(s, i, &raw) >= 0 || s->t[i] == '\'') {
            i = literal_end(s, i);
            continue;
        }
        if (s->t[i] == '(') depth++;
        else if (s->t[i] == ')' && --depth == 0) return i;
        i++;
    }
    return s->n;
}

/* The line from i (a '#' at a line's start): its end; *word the directive. */
static size_t directive_line(const text *s, size_t i, size_t *word, size_t *wl)
{
    size_t j = i + 1;
    while (j < s->n && (s->t[j] == ' ' || s->t[j] == '\t')) j++;
    *word = j;
    while (j < s->n && word_char(s->t[j])) j++;
    *wl = j - *word;
    while (j < s->n && s->t[j] != '\n') j++;
    return j;
}

typedef struct cond {
    bool live, taken, parent;
} cond;

/* A directive inside the argument (host side): conditionals evaluated over
 * the host's macros, #define / #undef applied, anything else undecodable.
 * conds/n: the open conditionals. */
static void arg_directive(decoder *d, size_t i, size_t end, size_t w, size_t wl, cond *conds, size_t *n)
{
    const char *word = d->s.t + w, *rest = word + wl;
    size_t rl = (size_t)(d->s.t + end - rest);
    bool live = !*n || conds[*n - 1].live;
    int v = -1;
#define IS(x) (wl == sizeof(x) - 1 && memcmp(word, x, wl) == 0)
    if (IS("if") || IS("ifdef") || IS("ifndef")) {
        if (*n == 32) {
            d->why = "conditionals nested too deep";
            return;
        }
        v = IS("if") ? scan_pp_eval(&d->host, rest, rl, NULL) : scan_pp_defined(&d->host, rest + strspn(rest, " \t"),
                                                                                   strcspn(rest + strspn(rest, " \t"), " \t\n/"), NULL);
        if (IS("ifndef") && v >= 0) v = !v;
        conds[(*n)++] = (cond){live && v == 1, v == 1, live};
    } else if (*n && (IS("elif") || IS("else"))) {
        cond *c = &conds[*n - 1];
        v = IS("else") ? !c->taken : c->taken ? 0 : scan_pp_eval(&d->host, rest, rl, NULL);
        c->live = c->parent && v == 1, c->taken |= v == 1;
    } else if (*n && IS("endif")) {
        (*n)--;
        v = 0;
    } else if (!live) {
        v = 0;
    } else if (IS("define") || IS("undef")) {
        if (IS("define")) scan_env_define_text(&d->host, rest, rl, false, false);
        else scan_env_undef_text(&d->host, rest, rl, false, false);
        v = 0;
    }
#undef IS
    if (v < 0) d->why = "a directive inside the stringized text that this scan cannot evaluate on the host's side";
    (void)i;
}

/* The argument text (open, close) stringized and decoded into o, as the
 * preprocessor and then the compiler have it. */
static void stringize(decoder *d, outbuf *o, size_t open, size_t close)
{
    const text *s = &d->s;
    cond conds[32];
    size_t n_conds = 0;
    bool space = false, any = false, line_start = false, raw;
    for (size_t i = open + 1; i < close && !d->oom;) {
        size_t c = skip_comment(s, i);
        bool live = !n_conds || conds[n_conds - 1].live;
        if (c != i || isspace((unsigned char)s->t[i])) {
            if (c == i) line_start |= s->t[i] == '\n', c = i + 1;
            space = any, i = c;
            continue;
        }
        if (s->t[i] == '#' && line_start) {
            size_t w, wl, end = directive_line(s, i, &w, &wl);
            arg_directive(d, i, end, w, wl, conds, &n_conds);
            i = end;
            continue;
        }
        line_start = false;
        if (!live) {
            i++;
            continue;
        }
        if (space) put(d, o, ' ', s->line[i]);
        space = false, any = true;
        if (literal_at(s, i, &raw) >= 0 || s->t[i] == '\'') {
            size_t end = literal_end(s, i);
            for (size_t k = i; k < end; k++) put(d, o, s->t[k], s->line[k]);
            i = end;
        } else if (s->t[i] == '\\') {
            i = unescape(d, o, i);
        } else {
            put(d, o, s->t[i], s->line[i]), i++;
        }
    }
    if (n_conds) d->why = "an unterminated conditional inside the stringized text";
}

/* ---- expressions -------------------------------------------------------------- */

static bool is_stringify(const decoder *d, const char *w, size_t n)
{
    for (size_t k = 0; k < d->n_stringify; k++)
        if (strlen(d->stringify[k]) == n && !memcmp(d->stringify[k], w, n)) return true;
    /* clpeak's MSTRINGIFY and its kin, defined in another file */
    for (size_t k = 0; k + 9 <= n; k++)
        if (!memcmp(w + k, "STRINGIFY", 9)) return true;
    return false;
}

/* #define NAME(x) #x or #define NAME(...) #__VA_ARGS__: a stringizing macro. */
static void note_define(decoder *d, size_t w, size_t end)
{
    const char *p = d->s.t + w + 6, *e = d->s.t + end;
    while (p < e && isspace((unsigned char)*p)) p++;
    const char *name = p;
    while (p < e && word_char(*p)) p++;
    size_t nl = (size_t)(p - name);
    if (!nl || p >= e || *p != '(' || d->n_stringify == MAX_STRINGIFY || nl >= sizeof d->stringify[0]) return;
    const char *close = memchr(p, ')', (size_t)(e - p));
    if (!close) return;
    const char *body = close + 1;
    while (body < e && isspace((unsigned char)*body)) body++;
    if (body < e && *body == '#' && body + 1 < e && body[1] != '#')
        snprintf(d->stringify[d->n_stringify++], sizeof d->stringify[0], "%.*s", (int)nl, name);
}

typedef struct programs {
    scan_result *out;
    const scan_options *opts;
    scan_lang want;   /* OpenCL file: its language; NONE: any */
    size_t found;      /* expressions that hold kernels */
} programs;

static int scan_pieces(decoder *d, programs *pg, outbuf *o, bool *open_expr, bool top);
static void finish(decoder *d, programs *pg, outbuf *o, bool *open_expr, unsigned line);
static bool starts_with_piece(const decoder *d);

/* #include "NAME" between pieces (clpeak's kernelStrings.hpp): the
 * header's pieces join the expression. */
static int include_pieces(decoder *d, programs *pg, outbuf *o, bool *open_expr, size_t w, size_t end)
{
    const char *q = memchr(d->s.t + w, '"', end - w);
    const char *q2 = q ? memchr(q + 1, '"', (size_t)(d->s.t + end - q - 1)) : NULL;
    if (!q2 || d->depth >= 8) return 0;
    char path[PATH_MAX];
    const char *slash = strrchr(d->path, '/');
    int n = q[1] == '/' ? snprintf(path, sizeof path, "%.*s", (int)(q2 - q - 1), q + 1)
                        : snprintf(path, sizeof path, "%.*s%.*s", slash ? (int)(slash - d->path + 1) : 0, d->path,
                                   (int)(q2 - q - 1), q + 1);
    if (n <= 0 || (size_t)n >= sizeof path) return 0;
    decoder sub = *d;
    sub.path = path, sub.depth = d->depth + 1;
    if (read_text(path, &sub.s) != 0) return 0;
    if (!starts_with_piece(&sub)) {   /* an ordinary header: not part of a string */
        free(sub.s.t), free(sub.s.line);
        return 0;
    }
    int r = scan_pieces(&sub, pg, o, open_expr, false);
    d->why = sub.why ? sub.why : d->why;
    d->oom |= sub.oom;
    for (size_t k = d->n_stringify; k < sub.n_stringify; k++) memcpy(d->stringify[d->n_stringify++], sub.stringify[k], 64);
    free(sub.s.t), free(sub.s.line);
    return r;
}

/* A directive at i (the start of a line) outside any string. */
static size_t top_directive(decoder *d, programs *pg, outbuf *o, bool *open_expr, size_t i)
{
    size_t w, wl, end = directive_line(&d->s, i, &w, &wl);
    if (wl == 6 && !memcmp(d->s.t + w, "define", 6)) note_define(d, w, end);
    else if (wl == 7 && !memcmp(d->s.t + w, "include", 7)) {
        size_t at = o->n;
        include_pieces(d, pg, o, open_expr, w, end);
        if (o->n == at && !*open_expr) return end;
    }
    return end;
}

/* A word at i (its end e): a stringizing macro's call joins the expression;
 * any other word ends it. The offset after it. */
static size_t word_piece(decoder *d, programs *pg, outbuf *o, bool *open_expr, bool top, size_t i)
{
    const text *s = &d->s;
    size_t e = i;
    while (e < s->n && word_char(s->t[e])) e++;
    size_t p = e;
    while (p < s->n && (s->t[p] == ' ' || s->t[p] == '\t' || s->t[p] == '\n')) p++;
    if (p < s->n && s->t[p] == '(' && is_stringify(d, s->t + i, e - i)) {
        size_t close = call_end(s, p);
        *open_expr = true;
        stringize(d, o, p, close);
        return close < s->n ? close + 1 : close;
    }
    if (*open_expr && top) finish(d, pg, o, open_expr, s->line[i]);
    return e;
}

/* The pieces of d's text: literals, stringizing calls and includes; each
 * run of them is an expression, decoded into o. 0 or -1. */
static int scan_pieces(decoder *d, programs *pg, outbuf *o, bool *open_expr, bool top)
{
    const text *s = &d->s;
    bool line_start = true, raw;
    for (size_t i = 0; i < s->n && !d->oom;) {
        size_t c = skip_comment(s, i);
        if (c != i || isspace((unsigned char)s->t[i])) {
            if (c == i) line_start |= s->t[i] == '\n', c = i + 1;
            i = c;
            continue;
        }
        int plen = literal_at(s, i, &raw);
        if (s->t[i] == '#' && line_start) {
            i = top_directive(d, pg, o, open_expr, i);
            continue;
        }
        line_start = false;
        if (plen >= 0) {
            *open_expr = true;
            i = decode_literal(d, o, i, plen, raw);
        } else if (s->t[i] == '\'' && !(i && isalnum((unsigned char)s->t[i - 1]))) {
            i = literal_end(s, i);
        } else if (word_char(s->t[i]) && !(i && word_char(s->t[i - 1]))) {
            i = word_piece(d, pg, o, open_expr, top, i);
        } else {
            if (*open_expr && top) finish(d, pg, o, open_expr, s->line[i]);
            i++;
        }
    }
    return d->oom ? -1 : 0;
}

/* ---- programs ----------------------------------------------------------------- */

static bool has_word(const char *t, size_t n, const char *w)
{
    size_t wl = strlen(w);
    for (const char *p = t; (p = memmem(p, (size_t)(t + n - p), w, wl)); p += wl)
        if ((p == t || !word_char(p[-1])) && (p + wl == t + n || !word_char(p[wl]))) return true;
    return false;
}

/* The line in o of the first whole-word name at or after the start of the
 * program's line `line`. */
static unsigned original_line(const outbuf *o, unsigned line, const char *name)
{
    size_t at = 0;
    for (unsigned l = 1; l < line && at < o->n; at++) l += o->t[at] == '\n';
    size_t nl = strlen(name);
    for (const char *p = o->t + at; nl && (p = memmem(p, (size_t)(o->t + o->n - p), name, nl)); p++)
        if ((p == o->t || !word_char(p[-1])) && !word_char(p[nl])) return o->line[p - o->t];
    return at < o->n ? o->line[at] : o->n ? o->line[o->n - 1] : 1;
}

static int add_program(programs *pg, outbuf *o, scan_lang lang, unsigned first_line)
{
    scan_result *out = pg->out, r;
    if (scan_source_opts(o->t, o->n, lang, pg->opts, &r) != 0) return -1;
    scan_program *p = realloc(out->programs, (out->n_programs + 1) * sizeof *p);
    scan_entry *e = realloc(out->entries, (out->n + r.n + 1) * sizeof *e);
    if (p) out->programs = p;
    if (e) out->entries = e, out->cap = out->n + r.n + 1;
    char **w = realloc(out->warnings, (out->n_warnings + r.n_warnings + 1) * sizeof *w);
    if (w) out->warnings = w, out->cap_warnings = out->n_warnings + r.n_warnings + 1;
    if (!p || !e || !w) {
        scan_result_free(&r);
        return -1;
    }
    int idx = (int)out->n_programs++;
    out->programs[idx] = (scan_program){o->t, o->n, lang, first_line};
    for (size_t k = 0; k < r.n; k++) {
        r.entries[k].line = original_line(o, r.entries[k].line, r.entries[k].source_name);
        r.entries[k].program = idx;
        out->entries[out->n++] = r.entries[k];
    }
    /* the program's warnings, at its lines in the file */
    for (size_t k = 0; k < r.n_warnings; k++) {
        unsigned l = (unsigned)strtoul(r.warnings[k], NULL, 10);
        const char *rest = strchr(r.warnings[k], ':');
        /* "LINE: NAME: why": the line of NAME (a stringified program may be one long line) */
        char name[256] = "";
        size_t nl = 0;
        while (rest && rest[0] == ':' && rest[1] == ' ' && nl + 1 < sizeof name && word_char(rest[2 + nl])) nl++;
        if (nl && rest[2 + nl] == ':') snprintf(name, sizeof name, "%.*s", (int)nl, rest + 2);
        char buf[1100];
        snprintf(buf, sizeof buf, "%u%s", original_line(o, l, name), rest ? rest : "");
        out->warnings[out->n_warnings] = strdup(buf);
        if (out->warnings[out->n_warnings]) out->n_warnings++;
    }
    free(r.entries);
    for (size_t k = 0; k < r.n_warnings; k++) free(r.warnings[k]);
    free(r.warnings);
    free(o->line);   /* the line map served original_line above; the text itself moves */
    o->t = NULL, o->line = NULL, o->n = o->cap = 0;   /* the text now belongs to out */
    return 0;
}

/* The expression in o is complete: a program when it defines kernels. */
static void finish(decoder *d, programs *pg, outbuf *o, bool *open_expr, unsigned line)
{
    *open_expr = false;
    bool cuda = o->n && has_word(o->t, o->n, "__global__");
    bool cl = o->n && (has_word(o->t, o->n, "__kernel") || has_word(o->t, o->n, "kernel"));
    scan_lang lang = cuda ? CCKEY_LANG_CUDA : CCKEY_LANG_OPENCL;
    if ((cuda || cl) && (pg->want == CCKEY_LANG_NONE || pg->want == lang)) {
        pg->found++;
        unsigned first = o->n ? o->line[0] : line;
        if (d->why) {
            char buf[512];
            snprintf(buf, sizeof buf, "%u: the string holding a program cannot be decoded exactly: %s; skipped "
                     "(use --exact)", first, d->why);
            add_warning(pg->out, buf);
        } else if (add_program(pg, o, lang, first) != 0) {
            d->oom = true;
        }
    }
    d->why = NULL;
    o->n = 0;
    if (o->t) o->t[0] = '\0';
}

/* The first token of the text at i, skipping blanks and comments. */
static size_t first_token(const text *s)
{
    size_t i = 0;
    for (;;) {
        size_t c = skip_comment(s, i);
        if (c != i) i = c;
        else if (i < s->n && isspace((unsigned char)s->t[i])) i++;
        else return i;
    }
}

static bool starts_with_piece(const decoder *d)
{
    const text *s = &d->s;
    size_t i = first_token(s);
    bool raw;
    if (i >= s->n) return false;
    if (literal_at(s, i, &raw) >= 0) return true;
    size_t e = i;
    while (e < s->n && word_char(s->t[e])) e++;
    while (e < s->n && isspace((unsigned char)s->t[e])) e++;
    return e > i && e < s->n && s->t[e] == '(' && is_stringify(d, s->t + i, e - i);
}

static bool wanted_in(const char *head, size_t n, scan_lang lang)
{
    if (lang == CCKEY_LANG_NONE || lang == CCKEY_LANG_HOST) return true;
    if (lang != CCKEY_LANG_OPENCL) return false;
    char buf[4096];
    n = n < sizeof buf - 1 ? n : sizeof buf - 1;
    memcpy(buf, head, n);
    buf[n] = '\0';
    decoder d = {.s = {buf, NULL, n}};
    return starts_with_piece(&d);
}

bool scan_strings_wanted(const char *path, scan_lang lang)
{
    if (lang != CCKEY_LANG_OPENCL) return wanted_in("", 0, lang);
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return wanted_in(buf, n, lang);
}

bool scan_strings_wanted_src(const char *src, size_t len, scan_lang lang) { return wanted_in(src, len, lang); }

int scan_strings(const char *path, const char *src, size_t len, scan_lang lang, const scan_options *opts,
                 scan_result *out)
{
    decoder d = {.path = path};
    if (lang != CCKEY_LANG_NONE && !wanted_in(src, len, lang)) return 1;
    if (len > MAX_BYTES) {
        add_warning(out, "1: bigger than 64 MiB: not searched for programs held as strings");
        return 0;
    }
    if (splice_text(src, len, &d.s) != 0) return -1;
    scan_env_init(&d.host, CCKEY_LANG_NONE);
    programs pg = {out, opts, lang, 0};
    outbuf o = {0};
    bool open_expr = false;
    int r = scan_pieces(&d, &pg, &o, &open_expr, true);
    if (r == 0 && open_expr) finish(&d, &pg, &o, &open_expr, d.s.line[d.s.n]);
    if (r == 0 && d.oom) r = -1;
    if (r == 0 && lang != CCKEY_LANG_NONE && pg.found == 0) {
        add_warning(out, "1: its string holds no kernel as the host's preprocessor leaves it");
    }
    free(o.t), free(o.line);
    free(d.s.t), free(d.s.line);
    scan_env_free(&d.host);
    return r;
}
