/* Entry points in a unit's token stream: OpenCL and Metal kernel functions,
 * CUDA and HIP __global__ functions (with their Itanium names), template
 * kernels' instances (templates.c). Only definitions count (a prototype
 * names no code), at namespace scope, once per name. */
#include "scanner.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_pp(const scan_token *t)
{
    return t->kind == CCKEY_TOK_PP_IF || t->kind == CCKEY_TOK_PP_ELSE || t->kind == CCKEY_TOK_PP_ENDIF;
}

bool scan_is(const scanner *s, size_t i, const char *x) { return i < s->n && scan_tok_is(&s->t[i], x); }
bool scan_ident(const scanner *s, size_t i) { return i < s->n && s->t[i].kind == CCKEY_TOK_IDENT; }

/* Depth and statement bookkeeping at a conditional's directive. An open
 * conditional scanned both ways: each group starts from the brace depth and
 * statement the #if saw, and after #endif the depth is the first group's (so
 * #ifdef A void k(float *a) { #else void k(double *a) { #endif opens one
 * body, not two). */
static void pp_directive(scanner *s, size_t i, size_t *stmt)
{
    scan_tok_kind k = s->t[i].kind;
    if (k == CCKEY_TOK_PP_IF) {
        if (!scan_grow(s, (void **)&s->pp, &s->cap_pp, s->n_pp, sizeof *s->pp)) return;
        /* SIZE_MAX: the statement starts inside the group (after #if). */
        s->pp[s->n_pp++] = (pp_frame){s->depth, *stmt == i ? SIZE_MAX : *stmt, 0, false,
                                      (s->t[i].flags & CCKEY_TOKF_DEVICE) != 0};
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

void scan_warn(scanner *s, const scan_token *at, const char *fmt, ...)
{
    scan_result *r = s->out;
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
    int k = at->file && at->file < r->n_files ? snprintf(buf, sizeof buf, "%s:%u: ", r->files[at->file], at->line)
                                              : snprintf(buf, sizeof buf, "%u: ", at->line);
    if (k < 0 || (size_t)k >= sizeof buf) k = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + k, sizeof buf - (size_t)k, fmt, ap);
    va_end(ap);
    if (!(r->warnings[r->n_warnings] = strdup(buf))) s->oom = true;
    else r->n_warnings++;
}

size_t scan_skip_group(const scanner *s, size_t i)
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

size_t scan_skip_angles(const scanner *s, size_t i)
{
    int depth = 0;
    for (size_t k = i; k < s->n; k++) {
        if (scan_is(s, k, "(") || scan_is(s, k, "[")) k = scan_skip_group(s, k) - 1;
        else if (scan_is(s, k, "<")) depth++;
        else if (scan_is(s, k, ">") && --depth == 0) return k + 1;
        else if (scan_is(s, k, ";") || scan_is(s, k, "{") || scan_is(s, k, "}") || is_pp(&s->t[k])) return i;
    }
    return i;
}

static bool at_namespace_scope(const scanner *s)
{
    for (size_t i = 0; i < s->depth; i++)
        if (s->frames[i].kind == F_OTHER) return false;
    return true;
}

void scan_ns_path(const scanner *s, char *buf, size_t cap, bool *anonymous)
{
    size_t k = 0;
    buf[0] = '\0';
    if (anonymous) *anonymous = false;
    if (s->ns_at) {
        snprintf(buf, cap, "%s", s->ns_at);
        return;
    }
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
    if (!scan_grow(s, (void **)&s->frames, &s->cap_frames, s->depth, sizeof *s->frames)) return;
    frame *f = &s->frames[s->depth++];
    *f = (frame){.kind = F_OTHER};
    size_t i = stmt;
    if (scan_is(s, i, "inline")) i++;
    if (scan_is(s, i, "namespace")) {
        i++;
        size_t k = 0;
        while (i < brace && (scan_ident(s, i) || scan_is(s, i, "::"))) {
            k += (size_t)snprintf(f->name + k, sizeof f->name > k ? sizeof f->name - k : 0, "%.*s",
                                  (int)s->t[i].len, s->t[i].p);
            i++;
        }
        if (i == brace) f->kind = k ? F_NS : F_ANON_NS;
    } else if (brace == stmt + 2 && scan_is(s, stmt, "extern") && s->t[stmt + 1].kind == CCKEY_TOK_STRING) {
        const scan_token *lit = &s->t[stmt + 1];
        f->kind = lit->len == 3 && memcmp(lit->p, "\"C\"", 3) == 0 ? F_EXTERN_C : F_EXTERN_CXX;
    }
}

bool scan_join_name(char *out, size_t cap, const char *ns, const char *name, size_t len)
{
    size_t a = strlen(ns), sep = a ? 2 : 0;
    if (a + sep + len + 1 > cap) return false;
    memcpy(out, ns, a);
    memcpy(out + a, "::", sep);
    memcpy(out + a + sep, name, len);
    out[a + sep + len] = '\0';
    return true;
}

void scan_add_entry(scanner *s, const char *name, size_t name_len, const scan_token *src)
{
    scan_result *r = s->out;
    for (size_t i = 0; i < r->n; i++)
        if (strlen(r->entries[i].name) == name_len && memcmp(r->entries[i].name, name, name_len) == 0) return;
    if (!scan_grow(s, (void **)&r->entries, &r->cap, r->n, sizeof *r->entries)) return;
    scan_entry *e = &r->entries[r->n];
    *e = (scan_entry){.name = strndup(name, name_len), .source_name = strndup(src->p, src->len),
                       .line = src->line, .file = src->file, .program = -1};
    if (!e->name || !e->source_name) {
        free(e->name), free(e->source_name);
        s->oom = true;
        return;
    }
    r->n++;
}

bool scan_grow(scanner *s, void **p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap) return true;
    size_t c = *cap ? 2 * *cap : 16;
    void *q = realloc(*p, c * size);
    if (!q) {
        s->oom = true;
        return false;
    }
    *p = q, *cap = c;
    return true;
}

size_t scan_ns_parts(char *ns, const char **parts, size_t cap)
{
    size_t n = 0;
    char *p = ns;
    if (!*ns || !cap) return 0;
    for (char *q; (q = strstr(p, "::")) && n + 1 < cap; p = q + 2) *q = '\0', parts[n++] = p;
    parts[n++] = p;
    return n;
}

/* The Itanium name of a C++ kernel, or false with a reason. */
static bool mangle_kernel(scanner *s, const scan_token *name, size_t open, size_t close, char *out, size_t cap,
                          const char **why)
{
    scan_ctype params[64];
    int np = types_params(s, open, close, params, 64, why);
    if (np < 0) return false;
    char ns[256];
    scan_ns_path(s, ns, sizeof ns, NULL);
    const char *parts[32];
    size_t n_parts = scan_ns_parts(ns, parts, 32);
    char fname[256];
    snprintf(fname, sizeof fname, "%.*s", (int)name->len, name->p);
    if (!scan_mangle(out, cap, parts, n_parts, fname, params, (size_t)np)) return *why = "the name is too long", false;
    return true;
}

/* The group at open follows a word and is itself followed by another word
 * and then a parameter list: `void LAUNCH(256) name(...)`, where LAUNCH(256)
 * is a function-like attribute macro between the return type and the name. */
static bool attribute_macro(const scanner *s, size_t open)
{
    size_t k = scan_skip_group(s, open);
    if (!scan_ident(s, k) || scan_is(s, k, "noexcept") || scan_is(s, k, "throw") || scan_is(s, k, "const") ||
        scan_is(s, k, "__attribute__") || scan_is(s, k, "override") || scan_is(s, k, "final"))
        return false;
    while (scan_ident(s, k)) k++;
    return scan_is(s, k, "(");
}

/* A non-ASCII byte in a name: the lexer keeps such words whole, the
 * finder refuses them (their spelling in a binary is not modelled). */
static bool non_ascii(const scan_token *t)
{
    for (size_t i = 0; i < t->len; i++)
        if ((unsigned char)t->p[i] >= 0x80) return true;
    return false;
}

/* What a kernel header says, from its marker to its parameter list. */
typedef struct header {
    const scan_token *name, *host_name;
    bool templated, qualified;
    size_t open, close;   /* the parameter list's parentheses */
} header;

static bool attribute_word(const scan_token *t)
{
    return scan_tok_is(t, "__attribute__") || scan_tok_is(t, "__declspec") || scan_tok_is(t, "alignas") ||
           (t->len > 4 && !memcmp(t->p, "__", 2) && !memcmp(t->p + t->len - 2, "__", 2));
}

static void note_host_name(const scanner *s, size_t from, size_t to, header *h)
{
    for (size_t k = from; k + 3 < to; k++)
        if (scan_is(s, k, "host_name") && scan_is(s, k + 1, "(") && s->t[k + 2].kind == CCKEY_TOK_STRING)
            h->host_name = &s->t[k + 2];
}

/* The index of the parameter list's '(' (s->n when there is none), with the
 * name and what else the header says in h. j: after the marker. */
static size_t find_params(const scanner *s, size_t j, header *h)
{
    for (; j < s->n; j++) {
        const scan_token *t = &s->t[j];
        if (scan_is(s, j, "[") && scan_is(s, j + 1, "[")) {
            size_t end = scan_skip_group(s, j);
            note_host_name(s, j, end, h);
            j = end - 1;
        } else if (scan_is(s, j, "]")) {
            continue;   /* the end of [[kernel]] */
        } else if (t->kind == CCKEY_TOK_IDENT && scan_is(s, j + 1, "(") && attribute_word(t)) {
            j = scan_skip_group(s, j + 1) - 1;   /* __launch_bounds__(256) and friends */
        } else if (scan_is(s, j, "(")) {
            if (!h->name || !attribute_macro(s, j)) return j;
            j = scan_skip_group(s, j) - 1;   /* NAME(args) was an attribute macro, not the kernel */
            h->name = NULL;
        } else if (scan_is(s, j, "<")) {
            h->templated = true;
        } else if (scan_is(s, j, "::")) {
            h->qualified = true;
        } else if (scan_is(s, j, ";") || scan_is(s, j, "{") || scan_is(s, j, "}") || scan_is(s, j, "=")) {
            return s->n;
        } else if (t->kind == CCKEY_TOK_IDENT) {
            h->name = t;
        }
    }
    return s->n;
}

/* The marker at i, whose statement began at stmt: the header up to its
 * parameter list, and whether a body follows (only a definition names code
 * in this file). */
static bool read_header(const scanner *s, size_t i, size_t stmt, header *h)
{
    *h = (header){0};
    for (size_t k = stmt; k < i; k++) h->templated |= scan_is(s, k, "template");
    size_t j = i + 1;
    /* A marker inside an attribute list ([[kernel, host_name("x")]]): go on
     * after the list, noting a host_name in it. */
    size_t open_at = 0;
    int depth = 0;
    for (size_t k = stmt; k < i; k++) {
        if (scan_is(s, k, "[") && depth++ == 0) open_at = k;
        else if (scan_is(s, k, "]") && depth > 0) depth--;
    }
    if (depth > 0) {
        j = scan_skip_group(s, open_at);
        note_host_name(s, open_at, j, h);
    }
    h->open = find_params(s, j, h);
    if (h->open >= s->n || !h->name) return false;
    h->close = scan_skip_group(s, h->open) - 1;
    size_t k = h->close + 1;
    while (k < s->n && !scan_is(s, k, "{") && !scan_is(s, k, ";")) {
        if (scan_is(s, k, "(")) k = scan_skip_group(s, k);
        else if (s->t[k].kind == CCKEY_TOK_IDENT || is_pp(&s->t[k])) k++;   /* the other group's header too */
        else return false;
    }
    return scan_is(s, k, "{");
}

/* An open conditional whose groups only some devices have. */
static bool device_only(const scanner *s)
{
    for (size_t k = 0; k < s->n_pp; k++)
        if (s->pp[k].device) return true;
    return false;
}

static bool extern_c(const scanner *s, size_t stmt, size_t i)
{
    bool c = c_linkage(s);
    for (size_t m = stmt; m + 1 < i; m++)
        if (scan_is(s, m, "extern") && s->t[m + 1].kind == CCKEY_TOK_STRING && s->t[m + 1].len == 3 &&
            !memcmp(s->t[m + 1].p, "\"C\"", 3))
            c = true;
    return c;
}

/* A C++ kernel's entry, by its mangled name; a warning when it cannot be
 * named exactly (a wrong name would be worse than none). */
static void cxx_kernel(scanner *s, const header *h)
{
    bool anonymous;
    char ns[256];
    scan_ns_path(s, ns, sizeof ns, &anonymous);
    char mangled[1024];
    const char *why = NULL;
    if (anonymous) why = "it is in an anonymous namespace, whose name nvcc makes up per file";
    else if (mangle_kernel(s, h->name, h->open, h->close, mangled, sizeof mangled, &why)) {
        scan_add_entry(s, mangled, strlen(mangled), h->name);
        return;
    }
    scan_warn(s, h->name, "%.*s: cannot work out its C++ (mangled) name: %s; skipped (use --exact)",
              (int)h->name->len, h->name->p, why);
}

/* A kernel marker (__kernel, kernel, __global__) at i, whose statement
 * began at stmt. */
static void kernel_at(scanner *s, size_t i, size_t stmt)
{
    header h;
    if (!read_header(s, i, stmt, &h)) return;
    const scan_token *name = h.name;
    if (non_ascii(name)) {
        scan_warn(s, name, "%.*s: a name with non-ASCII characters; skipped (refused rather than guessed)",
                  (int)name->len, name->p);
    } else if (device_only(s)) {
        scan_warn(s, name, "%.*s: defined only on devices with an extension or version this scan cannot "
                  "know (an #if on cl_* or __OPENCL_*); skipped (use --exact to ask the device)",
                  (int)name->len, name->p);
    } else if (h.templated && (s->lang == CCKEY_LANG_CUDA || s->lang == CCKEY_LANG_HIP)) {
        tmpl_kernel(s, stmt, i, name, h.open, h.close);
    } else if (h.templated) {
        scan_warn(s, name, "%.*s: a template kernel; skipped", (int)name->len, name->p);
    } else if (h.qualified) {
        scan_warn(s, name, "%.*s: a kernel defined outside its namespace; skipped (use --exact)",
                  (int)name->len, name->p);
    } else if (h.host_name) {
        scan_add_entry(s, h.host_name->p + 1, h.host_name->len >= 2 ? h.host_name->len - 2 : 0, name);
    } else if ((s->lang != CCKEY_LANG_CUDA && s->lang != CCKEY_LANG_HIP) || extern_c(s, stmt, i)) {
        scan_add_entry(s, name->p, name->len, name);
    } else {
        cxx_kernel(s, &h);
    }
}

static bool is_marker(const scanner *s, size_t i)
{
    for (size_t m = 0; m < s->n_markers; m++)
        if (scan_is(s, i, s->markers[m])) return true;
    switch (s->lang) {
    case CCKEY_LANG_OPENCL: return scan_is(s, i, "__kernel") || scan_is(s, i, "kernel");
    case CCKEY_LANG_METAL: return scan_is(s, i, "kernel");
    case CCKEY_LANG_CUDA:
    case CCKEY_LANG_HIP: return scan_is(s, i, "__global__");
    default: return false;
    }
}

/* A namespace-scope word at i, whose statement began at stmt. */
static void at_word(scanner *s, size_t i, size_t stmt)
{
    bool cuda = s->lang == CCKEY_LANG_CUDA || s->lang == CCKEY_LANG_HIP;
    if (is_marker(s, i)) kernel_at(s, i, stmt);
    else if (scan_is(s, i, "typedef") || (scan_is(s, i, "using") && i == stmt)) types_alias(s, i);
    else if (scan_is(s, i, "struct") || scan_is(s, i, "class") || scan_is(s, i, "union") || scan_is(s, i, "enum"))
        types_class_head(s, i);
    else if (cuda && scan_is(s, i, "template") && i == stmt) tmpl_definition(s, i);
    else if (cuda && i == stmt && (scan_is(s, i, "constexpr") || scan_is(s, i, "const") || scan_is(s, i, "static")))
        types_constant(s, i);
}

/* The walk over the unit's tokens. */
static void walk(scanner *s)
{
    size_t stmt = 0;
    bool cuda = s->lang == CCKEY_LANG_CUDA || s->lang == CCKEY_LANG_HIP;
    for (size_t i = 0; i < s->n && !s->oom; i++) {
        if (is_pp(&s->t[i])) {
            bool at_start = stmt == i;
            pp_directive(s, i, &stmt);
            if (at_start && s->t[i].kind != CCKEY_TOK_PP_ELSE) stmt = i + 1;
        } else if (scan_is(s, i, "{")) {
            push_frame(s, stmt, i);
            stmt = i + 1;
        } else if (scan_is(s, i, "}")) {
            if (s->depth) s->depth--;
            stmt = i + 1;
        } else if (scan_is(s, i, ";")) {
            stmt = i + 1;
        } else if (s->t[i].kind == CCKEY_TOK_IDENT) {
            if (cuda && scan_is(s, i + 1, "<")) tmpl_note_use(s, i);
            if (at_namespace_scope(s)) at_word(s, i, stmt);
            else if (cuda && (scan_is(s, i, "constexpr") || scan_is(s, i, "const")) &&
                     (i == stmt || scan_is(s, i - 1, ":")))   /* case 9: constexpr int n = 2; */
                types_local_constant(s, i);
        }
    }
    if (cuda && !s->oom) tmpl_resolve(s);
}

/* The entries in lx (the unit's tokens; env its macros as the unit leaves
 * them). 0 or -1. */
int scan_tokens(const scan_lexed *lx, const scan_macro_env *env, scan_lang lang, const scan_options *opts,
                scan_result *out);
int scan_tokens(const scan_lexed *lx, const scan_macro_env *env, scan_lang lang, const scan_options *opts,
                scan_result *out)
{
    scanner s = {.t = lx->toks, .n = lx->n, .lang = lang, .env = env, .out = out, .tok_at = SIZE_MAX};
    if (opts) s.markers = opts->kernel_macros, s.n_markers = opts->n_kernel_macros;
    if (tmpl_init(&s) != 0) return -1;
    walk(&s);
    free(s.frames);
    types_free(&s);
    free(s.pp);
    tmpl_free(&s);
    return s.oom ? -1 : 0;
}

void scan_result_free(scan_result *r)
{
    for (size_t i = 0; i < r->n; i++) free(r->entries[i].name), free(r->entries[i].source_name);
    for (size_t i = 0; i < r->n_warnings; i++) free(r->warnings[i]);
    for (size_t i = 0; i < r->n_files; i++) free(r->files[i]);
    for (size_t i = 0; i < r->n_programs; i++) free(r->programs[i].text);
    free(r->entries);
    free(r->warnings);
    free(r->files);
    free(r->programs);
    *r = (scan_result){0};
}
