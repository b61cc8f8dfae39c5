/* The scanner's lexer; see lexer.h. */
#include "lexer.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

bool scan_tok_is(const scan_token *t, const char *s)
{
    size_t n = strlen(s);
    return t->kind != CCKEY_TOK_STRING && t->kind != CCKEY_TOK_CHAR && t->len == n && memcmp(t->p, s, n) == 0;
}

typedef struct lexer {
    const char *s;
    size_t n, i;
    /* Line numbers of the spliced text: splices[k] is the offset at which
     * the k-th backslash-newline was removed. */
    size_t *splices, n_splices, cur_splice;
    size_t line_off;
    unsigned line;
    bool at_line_start;
    scan_lexed *out;
    /* Conditional groups: one frame per open #if. */
    struct cond {
        bool parent_active, active, taken;   /* taken: a branch known true was seen */
        bool both;                           /* scanned both ways: its directives are tokens */
        bool device;                         /* unknown because only the device knows */
    } *conds;
    size_t n_conds, cap_conds;
    const scan_lex_opts *opts;
    unsigned char next_flags;                /* of the next token emitted */
    bool oom;
} lexer;

static unsigned line_at(lexer *L, size_t off)
{
    for (; L->line_off < off; L->line_off++)
        if (L->s[L->line_off] == '\n') L->line++;
    while (L->cur_splice < L->n_splices && L->splices[L->cur_splice] <= off) L->cur_splice++, L->line++;
    return L->line;
}

static bool active(const lexer *L) { return L->n_conds == 0 || L->conds[L->n_conds - 1].active; }

static void emit(lexer *L, scan_tok_kind kind, size_t start, size_t end)
{
    if (!active(L) || L->oom) return;
    scan_lexed *o = L->out;
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 1024;
        scan_token *t = realloc(o->toks, cap * sizeof *t);
        if (!t) {
            L->oom = true;
            return;
        }
        o->toks = t, o->cap = cap;
    }
    unsigned short file = L->opts ? L->opts->file : 0;
    o->toks[o->n++] = (scan_token){kind, L->s + start, end - start, line_at(L, start), file, L->next_flags};
    L->next_flags = 0;
}

/* Bytes of UTF-8 sequences belong to words (C++ and CUDA allow such
 * identifiers), so a name is never cut at its first non-ASCII letter. */
static bool ident_start(char c) { return isalpha((unsigned char)c) || c == '_' || c == '$' || (unsigned char)c >= 0x80; }
static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '$' || (unsigned char)c >= 0x80; }

/* Skip a comment starting at i (which holds '/'); returns the offset after
 * it, or i when there is none. */
static size_t skip_comment(const lexer *L, size_t i)
{
    if (i + 1 >= L->n || L->s[i] != '/') return i;
    if (L->s[i + 1] == '/') {
        i += 2;
        while (i < L->n && L->s[i] != '\n') i++;
        return i;
    }
    if (L->s[i + 1] == '*') {
        i += 2;
        while (i + 1 < L->n && !(L->s[i] == '*' && L->s[i + 1] == '/')) i++;
        return i + 1 < L->n ? i + 2 : L->n;
    }
    return i;
}

/* A quoted literal from the quote at i; ends at its closing quote, or at the
 * end of the line when unterminated (as compilers recover). */
static size_t skip_quoted(const lexer *L, size_t i)
{
    char q = L->s[i++];
    while (i < L->n && L->s[i] != q && L->s[i] != '\n') i += L->s[i] == '\\' && i + 1 < L->n ? 2 : 1;
    return i < L->n && L->s[i] == q ? i + 1 : i;
}

/* R"delim( ... )delim" from the quote at i. */
static size_t skip_raw(const lexer *L, size_t i)
{
    size_t d = i + 1;
    while (d < L->n && d - i <= 17 && L->s[d] != '(' && L->s[d] != '\n') d++;
    if (d >= L->n || L->s[d] != '(') return skip_quoted(L, i);
    size_t dlen = d - i - 1;
    for (size_t j = d + 1; j + dlen + 1 < L->n + 1; j++)
        if (L->s[j] == ')' && j + 1 + dlen < L->n && memcmp(L->s + j + 1, L->s + i + 1, dlen) == 0 &&
            L->s[j + 1 + dlen] == '"')
            return j + 2 + dlen;
    return L->n;
}

/* #if / #elif condition: 0 false, 1 true, -1 unknown. With the unit's
 * macros (opts->env) the preprocessor's own evaluation (pp.h); without,
 * only constant integers (and "false") are known. */
static int eval_condition(const lexer *L, size_t i, size_t end, bool *device)
{
    *device = false;
    if (L->opts && L->opts->env) return scan_pp_eval(L->opts->env, L->s + i, end - i, device);
    char buf[64];
    size_t n = 0;
    while (i < end) {
        size_t c = skip_comment(L, i);
        if (c != i) {
            i = c;
            continue;
        }
        if (!isspace((unsigned char)L->s[i])) {
            if (n + 1 >= sizeof buf) return -1;
            buf[n++] = L->s[i];
        }
        i++;
    }
    buf[n] = '\0';
    char *p = buf;
    while (n >= 2 && p[0] == '(' && p[n - 1] == ')') p++, n -= 2, p[n] = '\0';
    if (strcmp(p, "false") == 0) return 0;
    if (!isdigit((unsigned char)p[0])) return -1;
    char *e;
    unsigned long long v = strtoull(p, &e, 0);
    while (*e == 'u' || *e == 'U' || *e == 'l' || *e == 'L') e++;
    return *e ? -1 : v != 0;
}

/* A conditional's directive as a token (see CCKEY_TOK_PP_IF), whatever the
 * group's own state: it marks where groups start and end. */
static void emit_pp(lexer *L, scan_tok_kind kind, size_t at)
{
    bool saved = L->n_conds ? L->conds[L->n_conds - 1].active : true;
    if (L->n_conds) L->conds[L->n_conds - 1].active = L->conds[L->n_conds - 1].parent_active;
    emit(L, kind, at, at + 1);
    if (L->n_conds) L->conds[L->n_conds - 1].active = saved;
}

static void push_cond(lexer *L, int value, bool device, size_t at)
{
    if (L->n_conds == L->cap_conds) {
        size_t cap = L->cap_conds ? L->cap_conds * 2 : 16;
        struct cond *c = realloc(L->conds, cap * sizeof *c);
        if (!c) {
            L->oom = true;
            return;
        }
        L->conds = c, L->cap_conds = cap;
    }
    bool parent = active(L);
    L->conds[L->n_conds++] = (struct cond){parent, parent && value != 0, value == 1, parent && value == -1,
                                           value == -1 && device};
    if (L->conds[L->n_conds - 1].both) {
        L->next_flags = device ? CCKEY_TOKF_DEVICE : 0;
        emit_pp(L, CCKEY_TOK_PP_IF, at);
    }
}

/* #ifdef / #ifndef NAME: known from the unit's macros (see pp.h). */
static int defined_condition(const lexer *L, size_t j, size_t end, bool negate, bool *device)
{
    *device = false;
    if (!L->opts || !L->opts->env) return -1;
    while (j < end && (L->s[j] == ' ' || L->s[j] == '\t')) j++;
    size_t w = j;
    while (j < end && ident_char(L->s[j])) j++;
    if (j == w) return -1;
    int d = scan_pp_defined(L->opts->env, L->s + w, j - w, device);
    return d < 0 ? -1 : negate ? !d : d;
}

static void elif(lexer *L, int v, bool device, size_t at)
{
    struct cond *c = &L->conds[L->n_conds - 1];
    if (c->taken) v = 0;
    c->active = c->parent_active && v != 0;
    if (v == 1) c->taken = true;
    if (v == -1 && !c->both && c->parent_active) {
        /* The chain becomes uncertain here: the groups from this one on are
         * alternatives. */
        c->both = true, c->device = device;
        L->next_flags = device ? CCKEY_TOKF_DEVICE : 0;
        emit_pp(L, CCKEY_TOK_PP_IF, at);
        return;
    }
    if (c->both && c->active) emit_pp(L, CCKEY_TOK_PP_ELSE, at);
}

/* #include "NAME" or <NAME> in a live group: the header, where it stands. */
static void include(lexer *L, size_t j, size_t end, size_t at)
{
    if (!L->opts || !L->opts->include || !active(L)) return;
    while (j < end && (L->s[j] == ' ' || L->s[j] == '\t')) j++;
    if (j >= end || (L->s[j] != '"' && L->s[j] != '<')) return;
    char close = L->s[j] == '"' ? '"' : '>';
    size_t q = j + 1;
    while (q < end && L->s[q] != close) q++;
    if (q >= end || q == j + 1) return;
    L->opts->include(L->opts->user, L->s + j + 1, q - j - 1, close == '>', line_at(L, at));
}

/* #define / #undef in a live group. */
static void define(lexer *L, bool undef, size_t j, size_t end)
{
    if (!L->opts || !L->opts->env || !active(L)) return;
    bool uncertain = false, device = false;   /* in a group that may not be there (on some devices) */
    for (size_t k = 0; k < L->n_conds; k++) uncertain |= L->conds[k].both, device |= L->conds[k].both && L->conds[k].device;
    if (undef) scan_env_undef_text(L->opts->env, L->s + j, end - j, uncertain, device);
    else scan_env_define_text(L->opts->env, L->s + j, end - j, uncertain, device);
}

/* The end of the directive line from i (comments inside it may span lines). */
static size_t directive_end(const lexer *L, size_t i)
{
    size_t end = i + 1;
    while (end < L->n && L->s[end] != '\n') {
        size_t c = skip_comment(L, end);
        if (c != end) end = c;
        else if (L->s[end] == '"' || L->s[end] == '\'') end = skip_quoted(L, end);
        else end++;
    }
    return end;
}

/* #else and #endif of the innermost conditional (at i). */
static void else_endif(lexer *L, bool is_else, size_t i)
{
    struct cond *c = &L->conds[L->n_conds - 1];
    if (is_else) {
        c->active = c->parent_active && !c->taken;
        c->taken = true;
        if (c->both && c->active) emit_pp(L, CCKEY_TOK_PP_ELSE, i);
        return;
    }
    if (c->both) emit_pp(L, CCKEY_TOK_PP_ENDIF, i);
    L->n_conds--;
}

/* A directive from the '#' at i to the end of its line. Returns the offset
 * of the end. */
static size_t directive(lexer *L, size_t i)
{
    size_t end = directive_end(L, i);
    size_t j = i + 1;
    while (j < end && (L->s[j] == ' ' || L->s[j] == '\t')) j++;
    size_t w = j;
    while (j < end && ident_char(L->s[j])) j++;
    size_t wl = j - w;
    const char *word = L->s + w;
#define IS(x) (wl == sizeof(x) - 1 && memcmp(word, x, wl) == 0)
    bool dev = false;
    if (IS("if") || IS("ifdef") || IS("ifndef")) {
        int v = IS("if") ? eval_condition(L, j, end, &dev) : defined_condition(L, j, end, IS("ifndef"), &dev);
        push_cond(L, v, dev, i);   /* v first: it sets dev */
    } else if (L->n_conds && (IS("elif") || IS("elifdef") || IS("elifndef"))) {
        int v = IS("elif") ? eval_condition(L, j, end, &dev) : defined_condition(L, j, end, IS("elifndef"), &dev);
        elif(L, v, dev, i);
    } else if (IS("define") || IS("undef")) {
        define(L, IS("undef"), j, end);
    } else if (IS("include")) {
        include(L, j, end, i);
    } else if (L->n_conds && (IS("else") || IS("endif"))) {
        else_endif(L, IS("else"), i);
    }
#undef IS
    return end;
}

/* Copy src without its backslash-newlines, noting where each was. */
static int splice(lexer *L, const char *src, size_t len)
{
    char *t = malloc(len + 1);
    size_t cap = 16, n = 0;
    L->splices = malloc(cap * sizeof *L->splices);
    if (!t || !L->splices) {
        free(t);
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        size_t nl = src[i] == '\\' && i + 1 < len && src[i + 1] == '\n'                     ? 1
                    : src[i] == '\\' && i + 2 < len && src[i + 1] == '\r' && src[i + 2] == '\n' ? 2
                                                                                              : 0;
        if (nl) {
            if (L->n_splices == cap) {
                size_t *p = realloc(L->splices, (cap *= 2) * sizeof *p);
                if (!p) {
                    free(t);
                    return -1;
                }
                L->splices = p;
            }
            L->splices[L->n_splices++] = n;
            i += nl;
            continue;
        }
        t[n++] = src[i];
    }
    t[n] = '\0';
    L->s = t, L->n = n;
    return 0;
}

/* A word from i, or a literal with an encoding prefix (u8"", L'x', R"()"). */
static size_t lex_word(lexer *L, size_t i)
{
    size_t start = i;
    while (i < L->n && ident_char(L->s[i])) i++;
    size_t wl = i - start;
    const char *w = L->s + start;
    bool prefix = (wl == 1 && strchr("LuU", w[0])) || (wl == 2 && memcmp(w, "u8", 2) == 0);
    bool raw = wl >= 1 && w[wl - 1] == 'R' &&
               (wl == 1 || (wl == 2 && strchr("LuU", w[0])) || (wl == 3 && memcmp(w, "u8", 2) == 0));
    if (i < L->n && L->s[i] == '"' && raw) {
        i = skip_raw(L, i);
        emit(L, CCKEY_TOK_STRING, start, i);
    } else if (i < L->n && (L->s[i] == '"' || L->s[i] == '\'') && prefix) {
        bool str = L->s[i] == '"';
        i = skip_quoted(L, i);
        emit(L, str ? CCKEY_TOK_STRING : CCKEY_TOK_CHAR, start, i);
    } else {
        emit(L, CCKEY_TOK_IDENT, start, i);
    }
    return i;
}

/* A pp-number, with C++14 digit separators (1'000). */
static size_t lex_number(lexer *L, size_t i)
{
    size_t start = i++;
    while (i < L->n) {
        char d = L->s[i];
        if ((d == '+' || d == '-') && strchr("eEpP", L->s[i - 1])) i++;
        else if (ident_char(d) || d == '.') i++;
        else if (d == '\'' && i + 1 < L->n && isalnum((unsigned char)L->s[i + 1])) i++;
        else break;
    }
    emit(L, CCKEY_TOK_NUMBER, start, i);
    return i;
}

/* The token (or blank, comment, directive) at i; the offset after it. */
static size_t lex_one(lexer *L, size_t i)
{
    char c = L->s[i];
    if (c == '\n') {
        L->at_line_start = true;
        return i + 1;
    }
    if (isspace((unsigned char)c)) return i + 1;
    size_t after = skip_comment(L, i);
    if (after != i) return after;
    if (c == '#' && L->at_line_start) return directive(L, i);
    L->at_line_start = false;
    if (ident_start(c)) return lex_word(L, i);
    if (isdigit((unsigned char)c) || (c == '.' && i + 1 < L->n && isdigit((unsigned char)L->s[i + 1])))
        return lex_number(L, i);
    size_t end = c == '"' || c == '\'' ? skip_quoted(L, i) : c == ':' && i + 1 < L->n && L->s[i + 1] == ':' ? i + 2
                                                                                                           : i + 1;
    emit(L, c == '"' ? CCKEY_TOK_STRING : c == '\'' ? CCKEY_TOK_CHAR : CCKEY_TOK_PUNCT, i, end);
    return end;
}

/* Keeps text (a source's spliced copy) with the output, which owns it. */
static int keep_text(scan_lexed *out, char *text)
{
    char **t = realloc(out->texts, (out->n_texts + 1) * sizeof *t);
    if (!t) {
        free(text);
        return -1;
    }
    out->texts = t;
    out->texts[out->n_texts++] = text;
    if (!out->text) out->text = text;
    return 0;
}

int scan_lex_more(const char *src, size_t len, const scan_lex_opts *opts, scan_lexed *out)
{
    lexer L = {.line = 1, .at_line_start = true, .out = out, .opts = opts};
    if (splice(&L, src, len) != 0) {
        free(L.splices);
        return -1;
    }
    if (keep_text(out, (char *)L.s) != 0) {
        free(L.splices);
        return -1;
    }
    for (size_t i = 0; i < L.n && !L.oom;) i = lex_one(&L, i);
    free(L.splices);
    free(L.conds);
    return L.oom || (opts && opts->env && opts->env->oom) ? -1 : 0;
}

int scan_lex_with(const char *src, size_t len, const scan_lex_opts *opts, scan_lexed *out)
{
    *out = (scan_lexed){0};
    if (scan_lex_more(src, len, opts, out) == 0) return 0;
    scan_lexed_free(out);
    return -1;
}

int scan_lex(const char *src, size_t len, scan_lexed *out)
{
    return scan_lex_with(src, len, NULL, out);
}

/* The end of the comment or quoted literal at i (its last byte), counting
 * the newlines it spans into *line; i itself when none starts there. */
static size_t skip_opaque(const char *s, size_t n, size_t i, unsigned *line)
{
    char c = s[i], d = i + 1 < n ? s[i + 1] : '\0';
    if (c == '/' && d == '/') {
        while (i + 1 < n && s[i + 1] != '\n') i++;
    } else if (c == '/' && d == '*') {
        for (i += 2; i + 1 < n && !(s[i] == '*' && s[i + 1] == '/'); i++) *line += s[i] == '\n';
        i++;
    } else if (c == '"' || c == '\'') {
        /* As the lexer has it: a literal ends at its quote or its line. */
        for (i++; i < n && s[i] != c && s[i] != '\n'; i++)
            if (s[i] == '\\' && i + 1 < n && s[i + 1] != '\n') i++;
        if (i < n && s[i] == '\n') i--;
    }
    return i < n ? i : n - 1;
}

unsigned scan_lex_too_deep(const char *src, size_t len, unsigned max)
{
    unsigned line = 1, depth = 0;
    for (size_t i = 0; i < len; i++) {
        char c = src[i];
        if (c == '\n') line++;
        else if (c == '{' && ++depth > max) return line;
        else if (c == '}' && depth) depth--;
        else if (c == '/' || c == '"' || c == '\'') i = skip_opaque(src, len, i, &line);
    }
    return 0;
}

void scan_lexed_free(scan_lexed *l)
{
    for (size_t i = 0; i < l->n_texts; i++) free(l->texts[i]);
    free(l->texts);
    free(l->toks);
    *l = (scan_lexed){0};
}
