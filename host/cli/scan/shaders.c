/* GLSL and HLSL compute entry points in a token stream; see shaders.h. */
#include "shaders.h"
#include "lexer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A conditional scanned both ways (#ifdef A ... #else ... #endif): each
 * group starts at the depth the #if saw, and after #endif the depth is the
 * first group's, so a function head written once per group opens one body. */
typedef struct pp_frame {
    size_t depth, end_depth;
    bool ended;
} pp_frame;

typedef struct walker {
    const scan_token *t;
    size_t n, depth;
    pp_frame *pp;
    size_t n_pp, cap_pp;
    scan_result *out;
    bool oom;
} walker;

static bool is(const walker *w, size_t i, const char *s) { return i < w->n && scan_tok_is(&w->t[i], s); }
static bool ident(const walker *w, size_t i) { return i < w->n && w->t[i].kind == CCKEY_TOK_IDENT; }

static bool is_pp(const scan_token *t)
{
    return t->kind == CCKEY_TOK_PP_IF || t->kind == CCKEY_TOK_PP_ELSE || t->kind == CCKEY_TOK_PP_ENDIF;
}

static void pp_directive(walker *w, const scan_token *t)
{
    if (t->kind == CCKEY_TOK_PP_IF) {
        if (w->n_pp == w->cap_pp) {
            size_t cap = w->cap_pp ? w->cap_pp * 2 : 16;
            pp_frame *p = realloc(w->pp, cap * sizeof *p);
            if (!p) {
                w->oom = true;
                return;
            }
            w->pp = p, w->cap_pp = cap;
        }
        w->pp[w->n_pp++] = (pp_frame){w->depth, 0, false};
    } else if (w->n_pp && t->kind == CCKEY_TOK_PP_ELSE) {
        pp_frame *f = &w->pp[w->n_pp - 1];
        if (!f->ended) f->end_depth = w->depth, f->ended = true;
        w->depth = f->depth;
    } else if (w->n_pp && t->kind == CCKEY_TOK_PP_ENDIF) {
        pp_frame *f = &w->pp[--w->n_pp];
        if (f->ended) w->depth = f->end_depth;
    }
}

/* Braces and conditionals at token i; true when it was one of them. */
static bool track(walker *w, size_t i)
{
    const scan_token *t = &w->t[i];
    if (is_pp(t)) pp_directive(w, t);
    else if (is(w, i, "{")) w->depth++;
    else if (is(w, i, "}")) w->depth -= w->depth > 0;
    else return false;
    return true;
}

/* A .glsl file with a main but no workgroup size: another stage's shader
 * (a .glsl without main is a header, which is no news). */
static void warn_not_compute(walker *w, unsigned line)
{
    scan_result *r = w->out;
    char msg[160];
    snprintf(msg, sizeof msg, "%u: main is not a compute shader's: no layout(local_size_x = ...) in; at file scope "
             "(or name the file .comp)", line);
    char **p = realloc(r->warnings, (r->n_warnings + 1) * sizeof *p);
    if (p) r->warnings = p, r->cap_warnings = r->n_warnings + 1;
    if (!p || !(r->warnings[r->n_warnings] = strdup(msg))) w->oom = true;
    else r->n_warnings++;
}

/* The index after the bracket group opening at i. */
static size_t skip_group(const walker *w, size_t i)
{
    char open = w->t[i].p[0], close = open == '(' ? ')' : ']';
    int depth = 0;
    for (; i < w->n; i++) {
        if (w->t[i].kind != CCKEY_TOK_PUNCT) continue;
        if (w->t[i].p[0] == open) depth++;
        else if (w->t[i].p[0] == close && --depth == 0) return i + 1;
    }
    return w->n;
}

static void add_entry(walker *w, const scan_token *name)
{
    scan_result *r = w->out;
    for (size_t i = 0; i < r->n; i++)
        if (strlen(r->entries[i].name) == name->len && memcmp(r->entries[i].name, name->p, name->len) == 0) return;
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 8;
        scan_entry *e = realloc(r->entries, cap * sizeof *e);
        if (!e) {
            w->oom = true;
            return;
        }
        r->entries = e, r->cap = cap;
    }
    char *a = strndup(name->p, name->len), *b = strndup(name->p, name->len);
    if (!a || !b) {
        free(a), free(b);
        w->oom = true;
        return;
    }
    r->entries[r->n++] = (scan_entry){.name = a, .source_name = b, .line = name->line, .file = 0, .program = -1};
}

/* A function defined with its name at i ("NAME ( ... ) [: SEMANTIC] {"):
 * the index of its '{', or 0 for a prototype or anything else. */
static size_t definition(const walker *w, size_t i)
{
    if (!ident(w, i) || !is(w, i + 1, "(")) return 0;
    size_t k = skip_group(w, i + 1);
    if (is(w, k, ":") && ident(w, k + 1)) k += 2;   /* HLSL: a semantic on the return value */
    return is(w, k, "{") ? k : 0;
}

/* GLSL: layout ( ... local_size_* ... ) in ; at i. */
static bool workgroup_layout(const walker *w, size_t i)
{
    if (!is(w, i, "layout") || !is(w, i + 1, "(")) return false;
    size_t end = skip_group(w, i + 1);
    bool size = false;
    for (size_t k = i + 2; k + 1 < end; k++)
        if (ident(w, k) && w->t[k].len > 11 && memcmp(w->t[k].p, "local_size_", 11) == 0) size = true;
    return size && is(w, end, "in") && is(w, end + 1, ";");
}

static void walk_glsl(walker *w, bool compute)
{
    const scan_token *main_tok = NULL;
    for (size_t i = 0; i < w->n && !w->oom; i++) {
        if (track(w, i) || w->depth) continue;
        if (workgroup_layout(w, i)) compute = true;
        else if (!main_tok && is(w, i, "main") && i > 0 && is(w, i - 1, "void") && definition(w, i))
            main_tok = &w->t[i];
    }
    if (compute && main_tok) add_entry(w, main_tok);
    else if (main_tok) warn_not_compute(w, main_tok->line);
}

/* HLSL: the attributes starting at i ("[a(...)] [b] ..."), the index after
 * them, and whether one was numthreads. */
static size_t attributes(const walker *w, size_t i, bool *numthreads)
{
    *numthreads = false;
    while (is(w, i, "[") && ident(w, i + 1)) {
        if (is(w, i + 1, "numthreads")) *numthreads = true;
        i = skip_group(w, i);
    }
    return i;
}

static void walk_hlsl(walker *w)
{
    for (size_t i = 0; i < w->n && !w->oom; i++) {
        if (track(w, i) || w->depth || !is(w, i, "[")) continue;
        bool marked;
        size_t k = attributes(w, i, &marked);
        if (!marked) continue;
        /* The return type and qualifiers, then the name: the identifier
         * right before the first '('. */
        size_t j = k;
        while (j < w->n && !is(w, j, "(") && !is(w, j, ";") && !is(w, j, "{") && !is(w, j, "[")) j++;
        if (j > k && is(w, j, "(") && definition(w, j - 1)) add_entry(w, &w->t[j - 1]);
        i = k - 1;
    }
}

static int scan(const char *src, size_t len, int lang, bool compute, scan_result *out)
{
    memset(out, 0, sizeof *out);
    if ((out->deep_line = scan_lex_too_deep(src, len, CCKEY_SCAN_MAX_DEPTH))) return CCKEY_SCAN_TOO_DEEP;
    scan_lexed lx = {0};
    if (scan_lex(src, len, &lx) != 0) return -1;
    walker w = {.t = lx.toks, .n = lx.n, .out = out};
    if (lang == 0) walk_glsl(&w, compute);
    else walk_hlsl(&w);
    free(w.pp);
    scan_lexed_free(&lx);
    if (w.oom) {
        scan_result_free(out);
        return -1;
    }
    return 0;
}

int scan_glsl(const char *src, size_t len, bool compute_file, scan_result *out)
{
    return scan(src, len, 0, compute_file, out);
}

int scan_hlsl(const char *src, size_t len, scan_result *out) { return scan(src, len, 1, false, out); }

int scan_shader(const char *src, size_t len, scan_lang lang, bool compute_file, scan_result *out)
{
    if (lang == CCKEY_LANG_GLSL) return scan_glsl(src, len, compute_file, out);
    if (lang == CCKEY_LANG_HLSL) return scan_hlsl(src, len, out);
    memset(out, 0, sizeof *out);
    return -1;
}

const char *scan_shader_none(scan_lang lang, bool compute_file)
{
    if (lang == CCKEY_LANG_HLSL) return "no function marked [numthreads(...)] defined at file scope";
    return compute_file ? "no main defined at file scope" : NULL;
}

static bool has_ext(const char *path, const char *ext)
{
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    return dot && (!slash || dot > slash) && strcmp(dot, ext) == 0;
}

bool scan_shader_path_is_comp(const char *path) { return has_ext(path, ".comp"); }
bool scan_shader_path_is_glsl(const char *path) { return has_ext(path, ".glsl"); }
bool scan_shader_path_is_hlsl(const char *path) { return has_ext(path, ".hlsl"); }
