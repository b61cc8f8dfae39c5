/* Entry points in a token stream: OpenCL and Metal kernel functions, CUDA
 * and HIP __global__ functions (with their Itanium names). Only definitions
 * count (a prototype names no code), at namespace scope, once per name. */
#include "scan.h"
#include "lexer.h"
#include "mangle.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum frame_kind { F_NS, F_ANON_NS, F_EXTERN_C, F_EXTERN_CXX, F_OTHER };

typedef struct frame {
    enum frame_kind kind;
    char name[256];   /* F_NS: "a" or "a::b" (C++17 nested) */
} frame;

typedef struct named_type {
    char full[256];   /* "ns::Name" */
    cckey_ctype type;
} named_type;

/* An open conditional scanned both ways: each group starts from the brace
 * depth and statement the #if saw, and after #endif the depth is the first
 * group's (so #ifdef A void k(float *a) { #else void k(double *a) { #endif
 * opens one body, not two). */
typedef struct pp_frame {
    size_t depth, stmt, end_depth;
    bool ended;   /* end_depth is set */
} pp_frame;

typedef struct scanner {
    const cckey_token *t;
    size_t n;
    cckey_lang lang;
    frame *frames;
    size_t depth, cap_frames;
    named_type *types;
    size_t n_types, cap_types;
    cckey_scan_result *out;
    pp_frame *pp;
    size_t n_pp, cap_pp;
    const char *const *markers;   /* extra kernel markers (--kernel-macro) */
    size_t n_markers;
    bool oom;
} scanner;

static bool is_pp(const cckey_token *t)
{
    return t->kind == CCKEY_TOK_PP_IF || t->kind == CCKEY_TOK_PP_ELSE || t->kind == CCKEY_TOK_PP_ENDIF;
}

/* Depth and statement bookkeeping at a conditional's directive. */
static void pp_directive(scanner *s, size_t i, size_t *stmt)
{
    cckey_tok_kind k = s->t[i].kind;
    if (k == CCKEY_TOK_PP_IF) {
        if (s->n_pp == s->cap_pp) {
            size_t cap = s->cap_pp ? s->cap_pp * 2 : 16;
            pp_frame *p = realloc(s->pp, cap * sizeof *p);
            if (!p) {
                s->oom = true;
                return;
            }
            s->pp = p, s->cap_pp = cap;
        }
        /* SIZE_MAX: the statement starts inside the group (after #if). */
        s->pp[s->n_pp++] = (pp_frame){s->depth, *stmt == i ? SIZE_MAX : *stmt, 0, false};
    } else if (s->n_pp && k == CCKEY_TOK_PP_ELSE) {
        pp_frame *f = &s->pp[s->n_pp - 1];
        if (!f->ended) f->end_depth = s->depth, f->ended = true;
        if (s->depth > f->depth) s->depth = f->depth;
        *stmt = f->stmt == SIZE_MAX ? i + 1 : f->stmt;
    } else if (s->n_pp && k == CCKEY_TOK_PP_ENDIF) {
        pp_frame *f = &s->pp[--s->n_pp];
        if (f->ended && f->end_depth <= s->cap_frames) s->depth = f->end_depth;
    }
}

static bool is(const scanner *s, size_t i, const char *x) { return i < s->n && cckey_tok_is(&s->t[i], x); }
static bool ident(const scanner *s, size_t i) { return i < s->n && s->t[i].kind == CCKEY_TOK_IDENT; }

static void warn(scanner *s, unsigned line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void warn(scanner *s, unsigned line, const char *fmt, ...)
{
    cckey_scan_result *r = s->out;
    if (r->n_warnings == r->cap_warnings) {
        size_t cap = r->cap_warnings ? r->cap_warnings * 2 : 8;
        char **w = realloc(r->warnings, cap * sizeof *w);
        if (!w) {
            s->oom = true;
            return;
        }
        r->warnings = w, r->cap_warnings = cap;
    }
    char buf[1024];
    int k = snprintf(buf, sizeof buf, "%u: ", line);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + k, sizeof buf - (size_t)k, fmt, ap);
    va_end(ap);
    if (!(r->warnings[r->n_warnings] = strdup(buf))) s->oom = true;
    else r->n_warnings++;
}

/* The index after the bracket group opening at i ('(' or '['). */
static size_t skip_group(const scanner *s, size_t i)
{
    char open = s->t[i].p[0], close = open == '(' ? ')' : open == '[' ? ']' : '}';
    int depth = 0;
    for (; i < s->n; i++) {
        if (s->t[i].kind != CCKEY_TOK_PUNCT) continue;
        if (s->t[i].p[0] == open) depth++;
        else if (s->t[i].p[0] == close && --depth == 0) return i + 1;
    }
    return s->n;
}

static bool at_namespace_scope(const scanner *s)
{
    for (size_t i = 0; i < s->depth; i++)
        if (s->frames[i].kind == F_OTHER) return false;
    return true;
}

/* The current namespace path as "a::b" ("" at global scope). */
static void ns_path(const scanner *s, char *buf, size_t cap, bool *anonymous)
{
    size_t k = 0;
    buf[0] = '\0';
    if (anonymous) *anonymous = false;
    for (size_t i = 0; i < s->depth; i++) {
        if (s->frames[i].kind == F_ANON_NS && anonymous) *anonymous = true;
        if (s->frames[i].kind != F_NS) continue;
        k += (size_t)snprintf(buf + k, cap > k ? cap - k : 0, "%s%s", k ? "::" : "", s->frames[i].name);
    }
}

static bool c_linkage(const scanner *s)
{
    for (size_t i = s->depth; i-- > 0;) {
        if (s->frames[i].kind == F_EXTERN_C) return true;
        if (s->frames[i].kind == F_EXTERN_CXX) return false;
    }
    return false;
}

static void push_frame(scanner *s, size_t stmt, size_t brace)
{
    if (s->depth == s->cap_frames) {
        size_t cap = s->cap_frames ? s->cap_frames * 2 : 16;
        frame *f = realloc(s->frames, cap * sizeof *f);
        if (!f) {
            s->oom = true;
            return;
        }
        s->frames = f, s->cap_frames = cap;
    }
    frame *f = &s->frames[s->depth++];
    *f = (frame){.kind = F_OTHER};
    size_t i = stmt;
    if (is(s, i, "inline")) i++;
    if (is(s, i, "namespace")) {
        i++;
        size_t k = 0;
        while (i < brace && (ident(s, i) || is(s, i, "::"))) {
            k += (size_t)snprintf(f->name + k, sizeof f->name > k ? sizeof f->name - k : 0, "%.*s",
                                  (int)s->t[i].len, s->t[i].p);
            i++;
        }
        if (i == brace) f->kind = k ? F_NS : F_ANON_NS;
    } else if (brace == stmt + 2 && is(s, stmt, "extern") && s->t[stmt + 1].kind == CCKEY_TOK_STRING) {
        const cckey_token *lit = &s->t[stmt + 1];
        f->kind = lit->len == 3 && memcmp(lit->p, "\"C\"", 3) == 0 ? F_EXTERN_C : F_EXTERN_CXX;
    }
}

/* ns "::" name into out; false when it does not fit. */
static bool join_name(char *out, size_t cap, const char *ns, const char *name, size_t len)
{
    size_t a = strlen(ns), sep = a ? 2 : 0;
    if (a + sep + len + 1 > cap) return false;
    memcpy(out, ns, a);
    memcpy(out + a, "::", sep);
    memcpy(out + a + sep, name, len);
    out[a + sep + len] = '\0';
    return true;
}

static void add_type(scanner *s, const char *name, size_t len, const cckey_ctype *type)
{
    if (s->n_types == s->cap_types) {
        size_t cap = s->cap_types ? s->cap_types * 2 : 16;
        named_type *t = realloc(s->types, cap * sizeof *t);
        if (!t) {
            s->oom = true;
            return;
        }
        s->types = t, s->cap_types = cap;
    }
    named_type *nt = &s->types[s->n_types];
    char ns[256];
    ns_path(s, ns, sizeof ns, NULL);
    if (!join_name(nt->full, sizeof nt->full, ns, name, len)) return;   /* unknown, so never mangled wrong */
    nt->type = *type;
    s->n_types++;
}

static void add_class(scanner *s, const char *name, size_t len)
{
    cckey_ctype t = {0};
    char ns[256];
    ns_path(s, ns, sizeof ns, NULL);
    if (join_name(t.cls, sizeof t.cls, ns, name, len)) add_type(s, name, len, &t);
}

/* Names resolve from the innermost namespace outwards, as C++ looks them up. */
static bool lookup(void *user, const char *name, size_t len, cckey_ctype *out)
{
    scanner *s = user;
    char ns[256];
    ns_path(s, ns, sizeof ns, NULL);
    for (;;) {
        char full[512];
        if (!join_name(full, sizeof full, ns, name, len)) return false;
        for (size_t i = s->n_types; i-- > 0;)
            if (strcmp(s->types[i].full, full) == 0) {
                *out = s->types[i].type;
                return true;
            }
        if (!*ns) return false;
        char *cut = strrchr(ns, ':');
        if (cut) cut[-1] = '\0';
        else ns[0] = '\0';
    }
}

/* struct/class/union/enum NAME followed by '{', ':' or ';' declares a class
 * type that parameters may use. */
static void class_head(scanner *s, size_t i)
{
    size_t j = i + 1;
    if (is(s, i, "enum") && (is(s, j, "class") || is(s, j, "struct"))) j++;
    for (;;) {
        if (is(s, j, "[") && is(s, j + 1, "[")) j = skip_group(s, j);
        else if ((is(s, j, "__attribute__") || is(s, j, "alignas") || is(s, j, "__align__") ||
                  is(s, j, "__declspec")) && is(s, j + 1, "("))
            j = skip_group(s, j + 1);
        else break;
    }
    if (ident(s, j) && (is(s, j + 1, "{") || is(s, j + 1, ":") || is(s, j + 1, ";")))
        add_class(s, s->t[j].p, s->t[j].len);
}

/* typedef ... NAME; and using NAME = ...; at namespace scope. */
static void alias(scanner *s, size_t i)
{
    size_t end = i + 1;
    while (end < s->n && !is(s, end, ";")) end = is(s, end, "{") || is(s, end, "(") ? skip_group(s, end) : end + 1;
    if (end >= s->n) return;
    cckey_ctype t;
    const char *name, *why;
    size_t name_len;
    if (is(s, i, "using")) {
        if (ident(s, i + 1) && is(s, i + 2, "=") &&
            cckey_parse_decl(s->t + i + 3, end - i - 3, lookup, s, &t, &name, &name_len, &why) == 0 && !name) {
            t.quals[t.nptr] |= t.top_quals;
            add_type(s, s->t[i + 1].p, s->t[i + 1].len, &t);
        }
        return;
    }
    /* typedef struct [Tag] { ... } Name; */
    size_t brace = i + 1;
    while (brace < end && !is(s, brace, "{")) brace++;
    if (brace < end) {
        bool tagged = ident(s, brace - 1) && !is(s, brace - 1, "struct") && !is(s, brace - 1, "class") &&
                      !is(s, brace - 1, "union") && !is(s, brace - 1, "enum");
        size_t after = skip_group(s, brace);
        if (!(ident(s, after) && is(s, after + 1, ";"))) return;
        if (!tagged) {
            add_class(s, s->t[after].p, s->t[after].len);
        } else {
            /* The typedef name stands for the tagged class. */
            cckey_ctype c = {0};
            char ns[256];
            ns_path(s, ns, sizeof ns, NULL);
            if (join_name(c.cls, sizeof c.cls, ns, s->t[brace - 1].p, s->t[brace - 1].len))
                add_type(s, s->t[after].p, s->t[after].len, &c);
        }
        return;
    }
    if (cckey_parse_decl(s->t + i + 1, end - i - 1, lookup, s, &t, &name, &name_len, &why) == 0 && name) {
        t.quals[t.nptr] |= t.top_quals;   /* typedef volatile int vint: vint keeps its volatile */
        add_type(s, name, name_len, &t);
    }
}

static void add_entry(scanner *s, const char *name, size_t name_len, const char *src, size_t src_len, unsigned line)
{
    cckey_scan_result *r = s->out;
    for (size_t i = 0; i < r->n; i++)
        if (strlen(r->entries[i].name) == name_len && memcmp(r->entries[i].name, name, name_len) == 0) return;
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        cckey_entry *e = realloc(r->entries, cap * sizeof *e);
        if (!e) {
            s->oom = true;
            return;
        }
        r->entries = e, r->cap = cap;
    }
    cckey_entry *e = &r->entries[r->n];
    e->name = strndup(name, name_len);
    e->source_name = strndup(src, src_len);
    e->line = line;
    if (!e->name || !e->source_name) {
        free(e->name), free(e->source_name);
        s->oom = true;
        return;
    }
    r->n++;
}

/* The Itanium name of a C++ kernel, or false with a reason. */
static bool mangle_kernel(scanner *s, const cckey_token *name, size_t open, size_t close, char *out, size_t cap,
                          const char **why)
{
    cckey_ctype params[64];
    size_t np = 0;
    size_t start = open + 1;
    if (start == close) start = close;   /* () */
    for (size_t i = start; i < close;) {
        size_t j = i;
        int depth = 0;
        while (j < close && !(depth == 0 && is(s, j, ","))) {
            if (is(s, j, "(") || is(s, j, "[") || is(s, j, "{")) depth++;
            else if (is(s, j, ")") || is(s, j, "]") || is(s, j, "}")) depth--;
            j++;
        }
        if (np == 64) return *why = "more than 64 parameters", false;
        const char *pname;
        size_t pname_len;
        int r = cckey_parse_decl(s->t + i, j - i, lookup, s, &params[np], &pname, &pname_len, why);
        if (r < 0) return false;
        if (r == 1 && (i != start || j != close)) return *why = "a void parameter", false;
        if (r == 2) {
            memset(&params[np], 0, sizeof params[np]);
            strcpy(params[np].builtin, "z");
        }
        if (r != 1) np++;
        i = j + 1;
    }
    char ns[256];
    ns_path(s, ns, sizeof ns, NULL);
    const char *parts[32];
    size_t n_parts = 0;
    char *p = ns;
    if (*ns) {
        for (char *q; (q = strstr(p, "::")) && n_parts < 31; p = q + 2) *q = '\0', parts[n_parts++] = p;
        parts[n_parts++] = p;
    }
    char fname[256];
    snprintf(fname, sizeof fname, "%.*s", (int)name->len, name->p);
    if (!cckey_mangle(out, cap, parts, n_parts, fname, params, np)) return *why = "the name is too long", false;
    return true;
}

/* The group at open follows a word and is itself followed by another word
 * and then a parameter list: `void LAUNCH(256) name(...)`, where LAUNCH(256)
 * is a function-like attribute macro between the return type and the name. */
static bool attribute_macro(const scanner *s, size_t open)
{
    size_t k = skip_group(s, open);
    if (!ident(s, k) || is(s, k, "noexcept") || is(s, k, "throw") || is(s, k, "const") ||
        is(s, k, "__attribute__") || is(s, k, "override") || is(s, k, "final"))
        return false;
    while (ident(s, k)) k++;
    return is(s, k, "(");
}

/* A non-ASCII byte in a name: the lexer keeps such words whole, the
 * finder refuses them (their spelling in a binary is not modelled). */
static bool non_ascii(const cckey_token *t)
{
    for (size_t i = 0; i < t->len; i++)
        if ((unsigned char)t->p[i] >= 0x80) return true;
    return false;
}

/* A kernel marker (__kernel, kernel, __global__) at i, whose statement
 * began at stmt. */
static void kernel_at(scanner *s, size_t i, size_t stmt)
{
    const cckey_token *name = NULL, *host_name = NULL;
    bool templated = false, qualified = false;
    for (size_t k = stmt; k < i; k++) templated |= is(s, k, "template");
    size_t j = i + 1;
    /* A marker inside an attribute list ([[kernel, host_name("x")]]): go on
     * after the list, noting a host_name in it. */
    size_t open_at = 0;
    int depth = 0;
    for (size_t k = stmt; k < i; k++) {
        if (is(s, k, "[") && depth++ == 0) open_at = k;
        else if (is(s, k, "]") && depth > 0) depth--;
    }
    if (depth > 0) {
        j = skip_group(s, open_at);
        for (size_t k = open_at; k + 3 < j; k++)
            if (is(s, k, "host_name") && is(s, k + 1, "(") && s->t[k + 2].kind == CCKEY_TOK_STRING)
                host_name = &s->t[k + 2];
    }
    for (; j < s->n; j++) {
        const cckey_token *t = &s->t[j];
        if (is(s, j, "[") && is(s, j + 1, "[")) {
            size_t end = skip_group(s, j);
            for (size_t k = j; k + 3 < end; k++)
                if (is(s, k, "host_name") && is(s, k + 1, "(") && s->t[k + 2].kind == CCKEY_TOK_STRING)
                    host_name = &s->t[k + 2];
            j = end - 1;
        } else if (is(s, j, "]")) {
            continue;   /* the end of [[kernel]] */
        } else if (t->kind == CCKEY_TOK_IDENT && is(s, j + 1, "(") &&
                   (cckey_tok_is(t, "__attribute__") || cckey_tok_is(t, "__declspec") ||
                    cckey_tok_is(t, "alignas") ||
                    (t->len > 4 && !memcmp(t->p, "__", 2) && !memcmp(t->p + t->len - 2, "__", 2)))) {
            j = skip_group(s, j + 1) - 1;   /* __launch_bounds__(256) and friends */
        } else if (is(s, j, "(")) {
            if (name && attribute_macro(s, j)) {
                j = skip_group(s, j) - 1;   /* NAME(args) was an attribute macro, not the kernel */
                name = NULL;
                continue;
            }
            break;
        } else if (is(s, j, "<")) {
            templated = true;
        } else if (is(s, j, "::")) {
            qualified = true;
        } else if (is(s, j, ";") || is(s, j, "{") || is(s, j, "}") || is(s, j, "=")) {
            return;
        } else if (t->kind == CCKEY_TOK_IDENT) {
            name = t;
        }
    }
    if (j >= s->n || !name) return;
    size_t close = skip_group(s, j) - 1;
    /* Only a definition names code in this file. */
    size_t k = close + 1;
    while (k < s->n && !is(s, k, "{") && !is(s, k, ";")) {
        if (is(s, k, "(")) k = skip_group(s, k);
        else if (s->t[k].kind == CCKEY_TOK_IDENT || is_pp(&s->t[k])) k++;   /* the other group's header too */
        else return;
    }
    if (!is(s, k, "{")) return;

    if (non_ascii(name)) {
        warn(s, name->line, "%.*s: a name with non-ASCII characters; skipped (refused rather than guessed)",
             (int)name->len, name->p);
        return;
    }
    if (templated) {
        warn(s, name->line, "%.*s: a template kernel has no name until it is instantiated; skipped",
             (int)name->len, name->p);
        return;
    }
    if (qualified) {
        warn(s, name->line, "%.*s: a kernel defined outside its namespace; skipped", (int)name->len, name->p);
        return;
    }
    if (host_name) {
        add_entry(s, host_name->p + 1, host_name->len >= 2 ? host_name->len - 2 : 0, name->p, name->len,
                  name->line);
        return;
    }
    if (s->lang != CCKEY_LANG_CUDA && s->lang != CCKEY_LANG_HIP) {
        add_entry(s, name->p, name->len, name->p, name->len, name->line);
        return;
    }
    bool extern_c = c_linkage(s);
    for (size_t m = stmt; m + 1 < i; m++)
        if (is(s, m, "extern") && s->t[m + 1].kind == CCKEY_TOK_STRING && s->t[m + 1].len == 3 &&
            !memcmp(s->t[m + 1].p, "\"C\"", 3))
            extern_c = true;
    if (extern_c) {
        add_entry(s, name->p, name->len, name->p, name->len, name->line);
        return;
    }
    bool anonymous;
    char ns[256];
    ns_path(s, ns, sizeof ns, &anonymous);
    char mangled[1024];
    const char *why = NULL;
    if (anonymous) why = "it is in an anonymous namespace";
    else if (mangle_kernel(s, name, j, close, mangled, sizeof mangled, &why)) {
        add_entry(s, mangled, strlen(mangled), name->p, name->len, name->line);
        return;
    }
    warn(s, name->line, "%.*s: cannot work out its C++ (mangled) name: %s; listed under its source name",
         (int)name->len, name->p, why);
    add_entry(s, name->p, name->len, name->p, name->len, name->line);
}

static bool is_marker(const scanner *s, size_t i)
{
    for (size_t m = 0; m < s->n_markers; m++)
        if (is(s, i, s->markers[m])) return true;
    switch (s->lang) {
    case CCKEY_LANG_OPENCL: return is(s, i, "__kernel") || is(s, i, "kernel");
    case CCKEY_LANG_METAL: return is(s, i, "kernel");
    case CCKEY_LANG_CUDA:
    case CCKEY_LANG_HIP: return is(s, i, "__global__");
    default: return false;
    }
}

int cckey_scan_source(const char *src, size_t len, cckey_lang lang, cckey_scan_result *out)
{
    return cckey_scan_source_opts(src, len, lang, NULL, out);
}

int cckey_scan_source_opts(const char *src, size_t len, cckey_lang lang, const cckey_scan_options *opts,
                           cckey_scan_result *out)
{
    *out = (cckey_scan_result){0};
    /* Before anything is copied or lexed: 100 MB of '{' stops at byte 4097. */
    if ((out->deep_line = cckey_lex_too_deep(src, len, CCKEY_SCAN_MAX_DEPTH))) return CCKEY_SCAN_TOO_DEEP;
    cckey_lexed lx;
    if (cckey_lex(src, len, &lx) != 0) return -1;
    scanner s = {.t = lx.toks, .n = lx.n, .lang = lang, .out = out};
    if (opts) s.markers = opts->kernel_macros, s.n_markers = opts->n_kernel_macros;
    size_t stmt = 0;
    for (size_t i = 0; i < s.n && !s.oom; i++) {
        if (is_pp(&s.t[i])) {
            bool at_start = stmt == i;
            pp_directive(&s, i, &stmt);
            if (at_start && s.t[i].kind != CCKEY_TOK_PP_ELSE) stmt = i + 1;
        } else if (is(&s, i, "{")) {
            push_frame(&s, stmt, i);
            stmt = i + 1;
        } else if (is(&s, i, "}")) {
            if (s.depth) s.depth--;
            stmt = i + 1;
        } else if (is(&s, i, ";")) {
            stmt = i + 1;
        } else if (s.t[i].kind == CCKEY_TOK_IDENT && at_namespace_scope(&s)) {
            if (is_marker(&s, i)) kernel_at(&s, i, stmt);
            else if (is(&s, i, "typedef") || (is(&s, i, "using") && i == stmt)) alias(&s, i);
            else if (is(&s, i, "struct") || is(&s, i, "class") || is(&s, i, "union") || is(&s, i, "enum"))
                class_head(&s, i);
        }
    }
    free(s.frames);
    free(s.types);
    free(s.pp);
    cckey_lexed_free(&lx);
    if (s.oom) {
        cckey_scan_result_free(out);
        return -1;
    }
    return 0;
}

void cckey_scan_result_free(cckey_scan_result *r)
{
    for (size_t i = 0; i < r->n; i++) free(r->entries[i].name), free(r->entries[i].source_name);
    for (size_t i = 0; i < r->n_warnings; i++) free(r->warnings[i]);
    free(r->entries);
    free(r->warnings);
    *r = (cckey_scan_result){0};
}
