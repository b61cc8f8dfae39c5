/* The types and constants a unit names, for the kernels' (mangled) names;
 * see scanner.h. */
#include "scanner.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add_type(scanner *s, const char *name, size_t len, const scan_ctype *type)
{
    if (!scan_grow(s, (void **)&s->types, &s->cap_types, s->n_types, sizeof *s->types)) return;
    named_type *nt = &s->types[s->n_types];
    char ns[256];
    scan_ns_path(s, ns, sizeof ns, NULL);
    if (!scan_join_name(nt->full, sizeof nt->full, ns, name, len)) return;   /* unknown, so never mangled wrong */
    nt->type = *type;
    s->n_types++;
}

static void add_class(scanner *s, const char *name, size_t len)
{
    scan_ctype t = {0};
    char ns[256];
    scan_ns_path(s, ns, sizeof ns, NULL);
    if (scan_join_name(t.cls, sizeof t.cls, ns, name, len)) add_type(s, name, len, &t);
}

/* Walks the namespaces from the innermost outwards, as C++ looks names up:
 * true when visit(full name) finds it. */
static bool each_scope(const scanner *s, const char *name, size_t len, bool (*visit)(const scanner *, const char *, void *),
                       void *arg)
{
    char ns[256];
    scan_ns_path(s, ns, sizeof ns, NULL);
    for (;;) {
        char full[512];
        if (!scan_join_name(full, sizeof full, ns, name, len)) return false;
        if (visit(s, full, arg)) return true;
        if (!*ns) return false;
        char *cut = strrchr(ns, ':');
        if (cut) cut[-1] = '\0';
        else ns[0] = '\0';
    }
}

static bool find_type(const scanner *s, const char *full, void *arg)
{
    for (size_t i = s->n_types; i-- > 0;)
        if (strcmp(s->types[i].full, full) == 0) {
            *(scan_ctype *)arg = s->types[i].type;
            return true;
        }
    return false;
}

bool types_lookup(void *user, const char *name, size_t len, scan_ctype *out)
{
    scanner *s = user;
    for (size_t k = 0; k < s->n_tparams; k++)
        if (s->tparam_lens[k] == len && memcmp(s->tparam_names[k], name, len) == 0) {
            *out = (scan_ctype){.tparam = (unsigned short)(k + 1)};
            return true;
        }
    if (len > 2 && name[0] == ':' && name[1] == ':') name += 2, len -= 2;   /* ::T: the global one */
    return each_scope(s, name, len, find_type, out);
}

static bool find_const(const scanner *s, const char *full, void *arg)
{
    /* the latest declaration in sight: an inner block's shadows an outer one */
    for (size_t i = s->n_consts; i-- > 0;)
        if (s->tok_at >= s->consts[i].from && s->tok_at <= s->consts[i].to && strcmp(s->consts[i].full, full) == 0) {
            *(long long *)arg = s->consts[i].value;
            return true;
        }
    return false;
}

bool types_const_value(void *user, const char *name, size_t len, long long *value)
{
    return each_scope(user, name, len, find_const, value);
}

/* struct/class/union/enum NAME followed by '{', ':' or ';' declares a class
 * type that parameters may use. */
void types_class_head(scanner *s, size_t i)
{
    size_t j = i + 1;
    if (scan_is(s, i, "enum") && (scan_is(s, j, "class") || scan_is(s, j, "struct"))) j++;
    for (;;) {
        if (scan_is(s, j, "[") && scan_is(s, j + 1, "[")) j = scan_skip_group(s, j);
        else if ((scan_is(s, j, "__attribute__") || scan_is(s, j, "alignas") || scan_is(s, j, "__align__") ||
                  scan_is(s, j, "__declspec")) && scan_is(s, j + 1, "("))
            j = scan_skip_group(s, j + 1);
        else break;
    }
    if (scan_ident(s, j) && (scan_is(s, j + 1, "{") || scan_is(s, j + 1, ":") || scan_is(s, j + 1, ";")))
        add_class(s, s->t[j].p, s->t[j].len);
}

/* typedef struct [Tag] [attributes] { ... } Name; */
static void typedef_struct(scanner *s, size_t i, size_t brace, size_t end)
{
    size_t tag = brace - 1;
    while (tag > i && scan_is(s, tag, ")")) {   /* __align__(16), __attribute__((x)) */
        int d = 0;
        do {
            d += scan_is(s, tag, ")") - scan_is(s, tag, "(");
            tag--;
        } while (tag > i && d > 0);
        if (scan_ident(s, tag)) tag--;
    }
    bool tagged = scan_ident(s, tag) && !scan_is(s, tag, "struct") && !scan_is(s, tag, "class") &&
                  !scan_is(s, tag, "union") && !scan_is(s, tag, "enum") && tag > i + 1;
    size_t after = scan_skip_group(s, brace);
    if (!(after < end && scan_ident(s, after) && scan_is(s, after + 1, ";"))) return;
    if (!tagged) {
        add_class(s, s->t[after].p, s->t[after].len);
        return;
    }
    /* The typedef name stands for the tagged class. */
    scan_ctype c = {0};
    char ns[256];
    scan_ns_path(s, ns, sizeof ns, NULL);
    if (scan_join_name(c.cls, sizeof c.cls, ns, s->t[tag].p, s->t[tag].len)) add_type(s, s->t[after].p,
                                                                                     s->t[after].len, &c);
}

/* typedef ... NAME; and using NAME = ...; at namespace scope. */
void types_alias(scanner *s, size_t i)
{
    size_t end = i + 1;
    while (end < s->n && !scan_is(s, end, ";"))
        end = scan_is(s, end, "{") || scan_is(s, end, "(") ? scan_skip_group(s, end) : end + 1;
    if (end >= s->n) return;
    scan_ctype t;
    const char *name, *why;
    size_t name_len;
    if (scan_is(s, i, "using")) {
        if (scan_ident(s, i + 1) && scan_is(s, i + 2, "=") &&
            types_parse(s, s->t + i + 3, end - i - 3, &t, &name, &name_len, &why) == 0 && !name) {
            t.quals[t.nptr] |= t.top_quals;
            add_type(s, s->t[i + 1].p, s->t[i + 1].len, &t);
        }
        return;
    }
    size_t brace = i + 1;
    while (brace < end && !scan_is(s, brace, "{")) brace++;
    if (brace < end) {
        typedef_struct(s, i, brace, end);
        return;
    }
    if (types_parse(s, s->t + i + 1, end - i - 1, &t, &name, &name_len, &why) == 0 && name) {
        t.quals[t.nptr] |= t.top_quals;   /* typedef volatile int vint: vint keeps its volatile */
        add_type(s, name, name_len, &t);
    }
}

/* [static] const[expr] INTEGER-TYPE NAME = EXPR; from token i, seen by the
 * tokens in [from, to]. */
static void add_constant(scanner *s, size_t i, size_t from, size_t to)
{
    size_t j = i, eq = 0, name = 0;
    for (; j < s->n && !scan_is(s, j, ";") && !scan_is(s, j, "{") && !scan_is(s, j, "("); j++)
        if (scan_is(s, j, "=") && !eq) eq = j, name = j - 1;
    if (!eq || !scan_is(s, j, ";") || !scan_ident(s, name) || name <= i) return;
    long long v;
    const char *text = s->t[eq + 1].p, *stop = s->t[j - 1].p + s->t[j - 1].len;
    size_t at = s->tok_at;
    s->tok_at = i;   /* its initializer sees what its declaration sees */
    bool known = eq + 1 < j && s->t[eq + 1].file == s->t[j - 1].file &&
                 scan_pp_value(s->env, text, (size_t)(stop - text), types_const_value, s, &v);
    s->tok_at = at;
    if (!known) return;
    if (!scan_grow(s, (void **)&s->consts, &s->cap_consts, s->n_consts, sizeof *s->consts)) return;
    char ns[256];
    scan_ns_path(s, ns, sizeof ns, NULL);
    named_const *c = &s->consts[s->n_consts];
    if (scan_join_name(c->full, sizeof c->full, ns, s->t[name].p, s->t[name].len))
        c->value = v, c->from = from, c->to = to, s->n_consts++;
}

void types_constant(scanner *s, size_t i) { add_constant(s, i, 0, SIZE_MAX); }

void types_local_constant(scanner *s, size_t i)
{
    size_t end = i;
    for (int depth = 0; end < s->n; end++) {
        if (scan_is(s, end, "{")) depth++;
        else if (scan_is(s, end, "}") && depth-- == 0) break;
    }
    add_constant(s, i, i, end);
}

/* ---- declarations ------------------------------------------------------------ */

#define MAX_DECL_TOKS 256

/* t[0..n) with the unit's object-like macros expanded into out (at most
 * MAX_DECL_TOKS; lexed bodies kept in bodies[] for the caller to free):
 * `DTYPE *p` with #define DTYPE float is a float *. A macro the unit
 * defines more than one way, or maybe not at all, or a function-like one,
 * makes the type unknown. The count, or -1 with a reason. */
static int expand(const scanner *s, const scan_token *t, size_t n, scan_token *out, size_t n_out,
                  scan_lexed *bodies, size_t *n_bodies, unsigned depth, const char **why)
{
    for (size_t k = 0; k < n; k++) {
        const scan_macro *m = t[k].kind == CCKEY_TOK_IDENT && s->env ? scan_env_find(s->env, t[k].p, t[k].len)
                                                                       : NULL;
        if (!m || !m->defined) {
            if (n_out == MAX_DECL_TOKS) return *why = "a parameter too long to read", -1;
            out[n_out++] = t[k];
            continue;
        }
        if (!m->body || m->ambiguous || m->uncertain || depth == 8 || *n_bodies == 8)
            return *why = "a parameter type spelled through a macro this scan cannot expand", -1;
        scan_lexed *b = &bodies[(*n_bodies)++];
        if (scan_lex(m->body, strlen(m->body), b) != 0) return *why = "out of memory", -1;
        int r = expand(s, b->toks, b->n, out, n_out, bodies, n_bodies, depth + 1, why);
        if (r < 0) return -1;
        for (size_t x = n_out; x < (size_t)r; x++) out[x].line = t[k].line, out[x].file = t[k].file;
        n_out = (size_t)r;
    }
    return (int)n_out;
}

/* Qualified names (a::b::T, ::T) in t[0..n) become one token each, spelled
 * in text (cap bytes), as types_lookup takes them. The new count. */
static size_t join_qualified(scan_token *t, size_t n, char *text, size_t cap)
{
    size_t m = 0, used = 0;
    for (size_t k = 0; k < n; k++) {
        bool lead = scan_tok_is(&t[k], "::") && k + 1 < n && t[k + 1].kind == CCKEY_TOK_IDENT;
        bool head = t[k].kind == CCKEY_TOK_IDENT && k + 2 < n && scan_tok_is(&t[k + 1], "::") &&
                    t[k + 2].kind == CCKEY_TOK_IDENT;
        if (!lead && !head) {
            t[m++] = t[k];
            continue;
        }
        scan_token q = t[k];
        size_t start = used, z = k;
        for (; z < n && (t[z].kind == CCKEY_TOK_IDENT || scan_tok_is(&t[z], "::")); z++) {
            if (z > k && t[z].kind == t[z - 1].kind) break;   /* two words in a row: the declarator */
            if (used + t[z].len >= cap) return n;   /* too long: left as it is (refused) */
            memcpy(text + used, t[z].p, t[z].len);
            used += t[z].len;
        }
        q.kind = CCKEY_TOK_IDENT, q.p = text + start, q.len = used - start;
        t[m++] = q;
        k = z - 1;
    }
    return m;
}

int types_parse(scanner *s, const scan_token *t, size_t n, scan_ctype *out, const char **name, size_t *name_len,
                const char **why)
{
    scan_token toks[MAX_DECL_TOKS];
    scan_lexed bodies[8];
    size_t n_bodies = 0;
    char joined[1024];
    int m = expand(s, t, n, toks, 0, bodies, &n_bodies, 0, why);
    if (m > 0) m = (int)join_qualified(toks, (size_t)m, joined, sizeof joined);
    int r = m < 0 ? -1 : scan_parse_decl(toks, (size_t)m, types_lookup, s, out, name, name_len, why);
    if (r == 0 && *name) {
        /* the declarator's name must be one the source spells, not a macro body's */
        bool ours = false;
        for (size_t k = 0; k < n && !ours; k++) ours = t[k].p == *name;
        if (!ours) *name = NULL, *name_len = 0;
    }
    for (size_t k = 0; k < n_bodies; k++) scan_lexed_free(&bodies[k]);
    return r;
}

int types_params(scanner *s, size_t open, size_t close, scan_ctype *params, size_t cap, const char **why)
{
    size_t np = 0, start = open + 1;
    for (size_t k = start; k < close; k++)
        if (s->t[k].kind == CCKEY_TOK_PP_IF || s->t[k].kind == CCKEY_TOK_PP_ELSE || s->t[k].kind == CCKEY_TOK_PP_ENDIF)
            return *why = "its parameter list has a conditional this scan cannot decide", -1;
    for (size_t i = start; i < close;) {
        size_t j = i;
        int depth = 0;
        while (j < close && !(depth == 0 && scan_is(s, j, ","))) {
            if (scan_is(s, j, "(") || scan_is(s, j, "[") || scan_is(s, j, "{")) depth++;
            else if (scan_is(s, j, ")") || scan_is(s, j, "]") || scan_is(s, j, "}")) depth--;
            j++;
        }
        if (np == cap) return *why = "too many parameters", -1;
        const char *pname;
        size_t pname_len;
        int r = types_parse(s, s->t + i, j - i, &params[np], &pname, &pname_len, why);
        if (r < 0) return -1;
        if (r == 1 && (i != start || j != close)) return *why = "a void parameter", -1;
        if (r == 2) {
            memset(&params[np], 0, sizeof params[np]);
            strcpy(params[np].builtin, "z");
        }
        if (r != 1) np++;
        i = j + 1;
    }
    return (int)np;
}

void types_free(scanner *s)
{
    free(s->types);
    free(s->consts);
    s->types = NULL, s->consts = NULL;
    s->n_types = s->n_consts = 0;
}
