/* A translation unit as the scanner sees it: a source, the headers it
 * includes with #include "..." lexed where they stand, and the macros they
 * define; then the finder (entries.c) over its tokens. */
#include "scanner.h"
#include "shaders.h"
#include "strprog.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int scan_tokens(const scan_lexed *lx, const scan_macro_env *env, scan_lang lang, const scan_options *opts,
                scan_result *out);

/* Headers are followed this deep, and no bigger than this. */
#define MAX_INCLUDE_DEPTH 32
#define MAX_HEADER_BYTES (16u << 20)

typedef struct unit {
    scan_lexed lx;
    scan_macro_env env;
    scan_result *out;   /* out->files: every file lexed, in order, as the includes name them */
    char **reals;             /* their resolved paths (the same file twice is lexed once) */
    char *dirs[MAX_INCLUDE_DEPTH + 1];   /* the folders of the files being lexed */
    size_t depth;
    unsigned short file_now;  /* the file being lexed */
    unsigned library_line;    /* where Thrust or CUB is first included (0: nowhere) */
    unsigned short library_file;
    bool oom;
} unit;

static void env_from_options(scan_macro_env *env, const scan_options *opts)
{
    for (size_t i = 0; opts && i < opts->n_defines; i++) {
        const char *d = opts->defines[i];
        if (d[0] == '-') {
            scan_env_undef(env, d + 1, strlen(d + 1));
            continue;
        }
        const char *eq = strchr(d, '=');
        const char *paren = strchr(d, '(');
        bool fn = paren && (!eq || paren < eq);
        size_t n = fn ? (size_t)(paren - d) : eq ? (size_t)(eq - d) : strlen(d);
        scan_env_define(env, d, n, eq ? eq + 1 : "1", eq ? strlen(eq + 1) : 1, fn);
    }
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
}

/* path (as shown) and real (resolved; NULL: path) as file n_files. */
static bool add_file(unit *u, const char *path, const char *real)
{
    scan_result *r = u->out;
    char **f = realloc(r->files, (r->n_files + 1) * sizeof *f);
    if (f) r->files = f;
    char **g = realloc(u->reals, (r->n_files + 1) * sizeof *g);
    if (g) u->reals = g;
    if (!f || !g) return false;
    if (!(r->files[r->n_files] = strdup(path))) return false;
    if (!(u->reals[r->n_files] = strdup(real ? real : path))) {
        free(r->files[r->n_files]);
        return false;
    }
    r->n_files++;
    return true;
}

/* NAME found beside the including file, then beside the unit's source:
 * the path as the includer's folder names it into shown, resolved into
 * real; or false. */
static bool find_header(const unit *u, const char *name, size_t len, char *shown, char *real)
{
    for (size_t k = 0; k < 2; k++) {
        const char *dir = k == 0 ? u->dirs[u->depth - 1] : u->dirs[0];
        struct stat st;
        int n = name[0] == '/' || !strcmp(dir, ".") ? snprintf(shown, PATH_MAX, "%.*s", (int)len, name)
                                                     : snprintf(shown, PATH_MAX, "%s/%.*s", dir, (int)len, name);
        if (n > 0 && n < PATH_MAX && stat(shown, &st) == 0 && S_ISREG(st.st_mode) &&
            (size_t)st.st_size <= MAX_HEADER_BYTES && realpath(shown, real))
            return true;
    }
    return false;
}

static int lex_file(unit *u, const char *path, unsigned short file);

/* Thrust's and CUB's algorithms instantiate kernels in the library's own
 * namespaces, which only the compiler can name. 0 or -1. */
static int library_warning(unit *u)
{
    scan_result *r = u->out;
    char buf[PATH_MAX + 200];
    const char *why = "includes Thrust or CUB: the kernels their algorithms instantiate are not listed (use --exact)";
    if (u->library_file) snprintf(buf, sizeof buf, "%s:%u: %s", r->files[u->library_file], u->library_line, why);
    else snprintf(buf, sizeof buf, "%u: %s", u->library_line, why);
    char **w = realloc(r->warnings, (r->n_warnings + 1) * sizeof *w);
    if (!w) return -1;
    r->warnings = w, r->cap_warnings = r->n_warnings + 1;
    if (!(w[r->n_warnings] = strdup(buf))) return -1;
    r->n_warnings++;
    return 0;
}

/* #include "NAME" (see scan_lex_opts): the header, once per unit. A
 * system header is not read; Thrust's and CUB's are noted (their
 * algorithms bring kernels of their own). */
static void on_include(void *user, const char *name, size_t len, bool angle, unsigned line)
{
    unit *u = user;
    if (angle) {
        if (!u->library_line && ((len > 7 && !memcmp(name, "thrust/", 7)) || (len > 4 && !memcmp(name, "cub/", 4))))
            u->library_line = line, u->library_file = u->file_now;
        return;
    }
    char path[PATH_MAX], real[PATH_MAX];
    if (u->oom || u->depth > MAX_INCLUDE_DEPTH || !find_header(u, name, len, path, real)) return;
    for (size_t i = 0; i < u->out->n_files; i++)
        if (strcmp(u->reals[i], real) == 0) return;   /* #pragma once, include guards: the same */
    if (u->out->n_files >= USHRT_MAX || !add_file(u, path, real)) {
        u->oom = u->out->n_files < USHRT_MAX;
        return;
    }
    if (lex_file(u, path, (unsigned short)(u->out->n_files - 1)) == -1) u->oom = true;
}

/* The text of file (path) into u->lx, its includes followed: 0 or -1. */
static int lex_text(unit *u, const char *path, const char *buf, size_t len, unsigned short file)
{
    if (!(u->dirs[u->depth] = dir_of(path))) return -1;
    u->depth++;
    unsigned short outer = u->file_now;
    u->file_now = file;
    scan_lex_opts o = {.env = &u->env, .include = on_include, .user = u, .file = file};
    int r = scan_lex_more(buf, len, &o, &u->lx);
    u->file_now = outer;
    free(u->dirs[--u->depth]);
    return r == 0 && !u->oom ? 0 : -1;
}

/* A header of the unit into u->lx: 0, -1 out of memory, CCKEY_SCAN_UNREADABLE. */
static int lex_file(unit *u, const char *path, unsigned short file)
{
    FILE *f = fopen(path, "rb");
    if (!f) return CCKEY_SCAN_UNREADABLE;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (size_t r; buf && (r = fread(buf + len, 1, cap - len, f)) > 0;) {
        len += r;
        if (len == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    int err = ferror(f);
    fclose(f);
    if (!buf) return -1;
    if (err) {
        free(buf);
        return CCKEY_SCAN_UNREADABLE;
    }
    int r = lex_text(u, path, buf, len, file);
    free(buf);
    return r;
}

int scan_source(const char *src, size_t len, scan_lang lang, scan_result *out)
{
    return scan_source_opts(src, len, lang, NULL, out);
}

int scan_source_opts(const char *src, size_t len, scan_lang lang, const scan_options *opts,
                           scan_result *out)
{
    *out = (scan_result){0};
    /* Before anything is copied or lexed: 100 MB of '{' stops at byte 4097. */
    if ((out->deep_line = scan_lex_too_deep(src, len, CCKEY_SCAN_MAX_DEPTH))) return CCKEY_SCAN_TOO_DEEP;
    scan_macro_env env;
    scan_env_init(&env, lang);
    env_from_options(&env, opts);
    scan_lex_opts o = {.env = &env};
    scan_lexed lx;
    int r = scan_lex_with(src, len, &o, &lx);
    if (r == 0) r = scan_tokens(&lx, &env, lang, opts, out);
    scan_lexed_free(&lx);
    scan_env_free(&env);
    if (r != 0) scan_result_free(out);
    return r;
}

int scan_file(const char *path, const char *src, size_t len, scan_lang lang, const scan_options *opts,
                    scan_result *out)
{
    *out = (scan_result){0};
    /* Before anything is copied or lexed: 100 MB of '{' stops at byte 4097. */
    if ((out->deep_line = scan_lex_too_deep(src, len, CCKEY_SCAN_MAX_DEPTH))) return CCKEY_SCAN_TOO_DEEP;
    int r;
    if (lang == CCKEY_LANG_HOST) return scan_strings(path, src, len, CCKEY_LANG_NONE, opts, out);
    /* Compute shaders: their own scan (shaders.h), .comp or not by name. */
    if (lang == CCKEY_LANG_GLSL || lang == CCKEY_LANG_HLSL)
        return scan_shader(src, len, lang, scan_shader_path_is_comp(path), out);
    if (scan_strings_wanted_src(src, len, lang)) {
        r = scan_strings(path, src, len, lang, opts, out);
        if (r != 1) return r;   /* 1: not a stringified program after all */
    }
    unit u = {.out = out};
    scan_env_init(&u.env, lang);
    env_from_options(&u.env, opts);
    char real[PATH_MAX];
    if (!add_file(&u, path, realpath(path, real))) r = -1;
    else r = lex_text(&u, path, src, len, 0);
    if (r == 0) r = scan_tokens(&u.lx, &u.env, lang, opts, out);
    if (r == 0 && u.library_line && (lang == CCKEY_LANG_CUDA || lang == CCKEY_LANG_HIP)) r = library_warning(&u);
    scan_lexed_free(&u.lx);
    scan_env_free(&u.env);
    for (size_t i = 0; i < out->n_files; i++) free(u.reals[i]);
    free(u.reals);
    if (r == CCKEY_SCAN_UNREADABLE) errno = errno ? errno : EIO;
    if (r != 0) {
        int e = errno;
        scan_result_free(out);
        errno = e;
    }
    return r;
}
