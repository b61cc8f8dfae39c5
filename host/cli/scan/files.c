/* Kernel source files: languages by extension, and the folder walk. */
#include "scan.h"
#include "lexer.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const struct {
    const char *ext;
    scan_lang lang;
} exts[] = {
    {".cl", CCKEY_LANG_OPENCL}, {".ocl", CCKEY_LANG_OPENCL}, {".clc", CCKEY_LANG_OPENCL}, {".opencl", CCKEY_LANG_OPENCL},
    {".cu", CCKEY_LANG_CUDA},   {".cuh", CCKEY_LANG_CUDA},   {".hip", CCKEY_LANG_HIP},
    {".metal", CCKEY_LANG_METAL},
    {".comp", CCKEY_LANG_GLSL}, {".glsl", CCKEY_LANG_GLSL}, {".hlsl", CCKEY_LANG_HLSL},
};

static const char *const names[] = {"", "opencl", "cuda", "hip", "metal", "glsl", "hlsl", "host"};
_Static_assert(sizeof names / sizeof *names == CCKEY_LANG_HOST + 1, "a name for every language");

const char *scan_lang_name(scan_lang lang)
{
    return (unsigned)lang < sizeof names / sizeof *names ? names[lang] : "";
}

scan_lang scan_lang_from_name(const char *name)
{
    for (size_t i = 1; i < CCKEY_LANG_HOST; i++)
        if (strcmp(name, names[i]) == 0) return (scan_lang)i;
    return CCKEY_LANG_NONE;
}

scan_lang scan_lang_of_path(const char *path)
{
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash)) return CCKEY_LANG_NONE;
    for (size_t i = 0; i < sizeof exts / sizeof *exts; i++)
        if (strcmp(dot, exts[i].ext) == 0) return exts[i].lang;
    return CCKEY_LANG_NONE;
}

bool scan_is_host_path(const char *path)
{
    static const char *const host[] = {".h", ".hh", ".hpp", ".hxx", ".c", ".cc", ".cpp", ".cxx", ".inl"};
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash)) return false;
    for (size_t i = 0; i < sizeof host / sizeof *host; i++)
        if (strcmp(dot, host[i]) == 0) return true;
    return false;
}

static scan_lang lang_for_scan(const char *path)
{
    scan_lang l = scan_lang_of_path(path);
    return l ? l : scan_is_host_path(path) ? CCKEY_LANG_HOST : CCKEY_LANG_NONE;
}

/* A header named on the command line: CUDA or OpenCL when its code (not
 * its strings or comments) defines kernels, else host code. */
static scan_lang named_header_lang(const char *path)
{
    const char *dot = strrchr(path, '.');
    static const char *const hdr[] = {".h", ".hh", ".hpp", ".hxx", ".inl"};
    bool is_hdr = false;
    for (size_t i = 0; dot && i < sizeof hdr / sizeof *hdr; i++) is_hdr |= strcmp(dot, hdr[i]) == 0;
    FILE *f = is_hdr ? fopen(path, "rb") : NULL;
    if (!f) return CCKEY_LANG_HOST;
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    for (size_t r; buf && len < (16u << 20) && (r = fread(buf + len, 1, cap - len, f)) > 0;) {
        len += r;
        char *nb = len == cap ? realloc(buf, cap *= 2) : buf;
        if (!nb) free(buf);
        buf = nb;
    }
    fclose(f);
    scan_lexed lx;
    scan_lang lang = CCKEY_LANG_HOST;
    if (buf && scan_lex(buf, len, &lx) == 0) {
        for (size_t i = 0; i < lx.n && lang == CCKEY_LANG_HOST; i++)
            lang = scan_tok_is(&lx.toks[i], "__global__") ? CCKEY_LANG_CUDA
                   : scan_tok_is(&lx.toks[i], "__kernel") ? CCKEY_LANG_OPENCL
                                                           : CCKEY_LANG_HOST;
        scan_lexed_free(&lx);
    }
    free(buf);
    return lang;
}

static int add(scan_source_list *l, const char *path, scan_lang lang, bool named)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        char **p = realloc(l->paths, cap * sizeof *p);
        if (p) l->paths = p;
        scan_lang *g = realloc(l->langs, cap * sizeof *g);
        if (g) l->langs = g;
        bool *nm = realloc(l->named, cap * sizeof *nm);
        if (nm) l->named = nm;
        if (!p || !g || !nm) return -1;
        l->cap = cap;
    }
    if (!(l->paths[l->n] = strdup(path))) return -1;
    l->named[l->n] = named;
    l->langs[l->n++] = lang;
    return 0;
}

static int walk(const char *dir, scan_source_list *l, char *err, size_t err_len, int depth)
{
    if (depth > 64) {
        snprintf(err, err_len, "%s: folders nested too deep", dir);
        return -1;
    }
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, err_len, "%s: %s", dir, strerror(errno));
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;   /* hidden: .git, editors' files */
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *path = malloc(n);
        if (!path) {
            snprintf(err, err_len, "out of memory");
            rc = -1;
            break;
        }
        snprintf(path, n, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", e->d_name);
        struct stat lst, st;
        if (lstat(path, &lst) == 0) {
            if (S_ISDIR(lst.st_mode)) {
                rc = walk(path, l, err, err_len, depth + 1);
            } else if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                scan_lang lang = lang_for_scan(path);
                if (lang && add(l, path, lang, false) != 0) {
                    snprintf(err, err_len, "out of memory");
                    rc = -1;
                }
            }
        }
        free(path);
    }
    closedir(d);
    return rc;
}

static int by_path(const void *a, const void *b, void *arg)
{
    const scan_source_list *l = arg;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return strcmp(l->paths[x], l->paths[y]);
}

/* One file seen under several names (a symlink beside its target, d/e.cl
 * and ./d/e.cl, hard links) is scanned once, under the first name in path
 * order. */
typedef struct file_id {
    dev_t dev;
    ino_t ino;
    size_t at;   /* position in path order */
} file_id;

static int by_file(const void *a, const void *b)
{
    const file_id *x = a, *y = b;
    if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
    if (x->ino != y->ino) return x->ino < y->ino ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

static int drop_same_files(scan_source_list *l)
{
    file_id *ids = malloc((l->n ? l->n : 1) * sizeof *ids);
    bool *dup = calloc(l->n ? l->n : 1, sizeof *dup);
    if (!ids || !dup) {
        free(ids), free(dup);
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        struct stat st;
        if (stat(l->paths[i], &st) == 0) ids[k++] = (file_id){st.st_dev, st.st_ino, i};
    }
    qsort(ids, k, sizeof *ids, by_file);
    for (size_t i = 1; i < k; i++) dup[ids[i].at] = ids[i].dev == ids[i - 1].dev && ids[i].ino == ids[i - 1].ino;
    size_t m = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (dup[i]) {
            free(l->paths[i]);
            continue;
        }
        l->paths[m] = l->paths[i], l->named[m] = l->named[i], l->langs[m++] = l->langs[i];
    }
    l->n = m;
    free(ids), free(dup);
    return 0;
}

int scan_find_sources(char *const *paths, size_t n, scan_source_list *out, char *err, size_t err_len)
{
    *out = (scan_source_list){0};
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0) {
            snprintf(err, err_len, "%s: %s", paths[i], strerror(errno));
            goto fail;
        }
        if (S_ISDIR(st.st_mode)) {
            if (walk(paths[i], out, err, err_len, 0) != 0) goto fail;
        } else {
            scan_lang lang = lang_for_scan(paths[i]);
            if (lang == CCKEY_LANG_HOST) lang = named_header_lang(paths[i]);
            if (!lang) {
                snprintf(err, err_len, "%s: not a kernel source (known: .cl .ocl .clc .opencl .cu .cuh .hip .metal, "
                         "and host code holding programs as strings: .h .hpp .c .cpp ...)", paths[i]);
                goto fail;
            }
            if (add(out, paths[i], lang, true) != 0) {
                snprintf(err, err_len, "out of memory");
                goto fail;
            }
        }
    }
    /* Sort (by byte order, so the output is the same everywhere) and drop
     * duplicates from overlapping arguments. */
    size_t *order = malloc((out->n ? out->n : 1) * sizeof *order);
    char **paths2 = malloc((out->n ? out->n : 1) * sizeof *paths2);
    scan_lang *langs2 = malloc((out->n ? out->n : 1) * sizeof *langs2);
    bool *named2 = malloc((out->n ? out->n : 1) * sizeof *named2);
    if (!order || !paths2 || !langs2 || !named2) {
        free(order), free(paths2), free(langs2), free(named2);
        snprintf(err, err_len, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < out->n; i++) order[i] = i;
    qsort_r(order, out->n, sizeof *order, by_path, out);
    size_t m = 0;
    for (size_t i = 0; i < out->n; i++) {
        char *p = out->paths[order[i]];
        if (m && strcmp(paths2[m - 1], p) == 0) {
            named2[m - 1] |= out->named[order[i]];
            free(p);
            continue;
        }
        paths2[m] = p, named2[m] = out->named[order[i]], langs2[m++] = out->langs[order[i]];
    }
    free(order), free(out->paths), free(out->langs), free(out->named);
    out->paths = paths2, out->langs = langs2, out->named = named2, out->n = m, out->cap = out->n;
    if (drop_same_files(out) != 0) {
        snprintf(err, err_len, "out of memory");
        goto fail;
    }
    return 0;
fail:
    scan_source_list_free(out);
    return -1;
}

/* The #include "NAME" lines of path, each resolved beside it, into
 * (*inc)[*n] (a quick read: comments and conditionals are not looked at, so
 * a header that some branch includes counts as included). */
static int includes_of(const char *path, char ***inc, size_t *n)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[4096];
    const char *slash = strrchr(path, '/');
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        const char *p = line + strspn(line, " \t");
        if (*p++ != '#') continue;
        p += strspn(p, " \t");
        if (strncmp(p, "include", 7) != 0) continue;
        p += 7 + strspn(p + 7, " \t");
        const char *q = *p == '"' ? strchr(p + 1, '"') : NULL;
        if (!q || q == p + 1) continue;
        char cand[PATH_MAX], real[PATH_MAX];
        int k = p[1] == '/' ? snprintf(cand, sizeof cand, "%.*s", (int)(q - p - 1), p + 1)
                            : snprintf(cand, sizeof cand, "%.*s%.*s", slash ? (int)(slash - path + 1) : 0, path,
                                       (int)(q - p - 1), p + 1);
        if (k <= 0 || (size_t)k >= sizeof cand || !realpath(cand, real)) continue;
        char **g = realloc(*inc, (*n + 1) * sizeof *g);
        if (!g || !(g[*n] = strdup(real))) rc = -1;
        if (g) *inc = g;
        if (rc == 0) (*n)++;
    }
    fclose(f);
    return rc;
}

long scan_drop_included(scan_source_list *l)
{
    char **inc = NULL;
    size_t n_inc = 0;
    for (size_t i = 0; i < l->n; i++)
        if (includes_of(l->paths[i], &inc, &n_inc) != 0) {
            for (size_t k = 0; k < n_inc; k++) free(inc[k]);
            free(inc);
            return -1;
        }
    size_t m = 0;
    long dropped = 0;
    for (size_t i = 0; i < l->n; i++) {
        char real[PATH_MAX];
        bool covered = false;
        if (!l->named[i] && realpath(l->paths[i], real))
            for (size_t k = 0; k < n_inc && !covered; k++) covered = strcmp(inc[k], real) == 0;
        if (covered) {
            free(l->paths[i]);
            dropped++;
            continue;
        }
        l->paths[m] = l->paths[i], l->langs[m] = l->langs[i], l->named[m++] = l->named[i];
    }
    l->n = m;
    for (size_t k = 0; k < n_inc; k++) free(inc[k]);
    free(inc);
    return dropped;
}

void scan_source_list_free(scan_source_list *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->paths[i]);
    free(l->paths);
    free(l->langs);
    free(l->named);
    *l = (scan_source_list){0};
}
