/* Which files a build reads besides its source: the #include lines, followed
 * through the roots as cckey.h describes, recursively. The list is recorded
 * in the entry and re-checked on look-up (records.c). */
#include "store_internal.h"
#include "../core/internal.h"

#include <stdlib.h>
#include <string.h>

/* Enough for any real suite; a cycle cannot reach it (files are visited
 * once), so hitting it means a generated monster, refused plainly. */
#define MAX_DEPS 20000

typedef struct dep_list {
    cckey_dep *d;
    size_t n, cap;
    size_t next;          /* the first present dep whose includes are not followed yet */
} dep_list;

typedef struct scan_ctx {
    const char *const *roots;
    size_t n_roots;
    cckey_dep_memo *memo;
    dep_list list;
    cckey_status st;
} scan_ctx;

/* "a/./b/../c" -> "a/c"; leading ".." stay. Returns a new string. */
static char *normalize(const char *dir, size_t dir_len, const char *name, size_t name_len)
{
    char *out = malloc(dir_len + name_len + 2);
    if (!out) return NULL;
    size_t o = 0, keep = 0;   /* keep: bytes of leading "../" that cannot be folded */
    const char *parts[2] = {dir, name};
    size_t lens[2] = {dir_len, name_len};
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < lens[k];) {
            size_t j = i;
            while (j < lens[k] && parts[k][j] != '/') j++;
            const char *seg = parts[k] + i;
            size_t sl = j - i;
            i = j + 1;
            if (sl == 0 || (sl == 1 && seg[0] == '.')) continue;
            if (sl == 2 && seg[0] == '.' && seg[1] == '.' && o > keep) {
                while (o > keep && out[o - 1] != '/') o--;
                if (o > keep) o--;   /* the slash before the folded segment */
                continue;
            }
            if (o) out[o++] = '/';
            memcpy(out + o, seg, sl);
            o += sl;
            if (sl == 2 && seg[0] == '.' && seg[1] == '.') keep = o;
        }
    }
    out[o] = '\0';
    return out;
}

static cckey_dep *find_dep(dep_list *l, uint32_t root, const char *path)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->d[i].root == root && strcmp(l->d[i].path, path) == 0) return &l->d[i];
    return NULL;
}

/* Record root/path (taking path) unless already listed; the listed one. */
static cckey_dep *add_dep(scan_ctx *c, uint32_t root, char *path, const cckey_file_digest *fd)
{
    cckey_dep *seen = find_dep(&c->list, root, path);
    if (seen) {
        free(path);
        return seen;
    }
    dep_list *l = &c->list;
    if (l->n == MAX_DEPS) {
        free(path);
        c->st = cckey_fail(CCKEY_ERR_INVALID_ARG, "more than %d included files", MAX_DEPS);
        return NULL;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        cckey_dep *d = realloc(l->d, cap * sizeof *d);
        if (!d) {
            free(path);
            c->st = cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
            return NULL;
        }
        l->d = d, l->cap = cap;
    }
    cckey_dep *d = &l->d[l->n++];
    *d = (cckey_dep){.root = root, .path = path, .present = fd->exists, .size = fd->exists ? fd->size : 0};
    if (fd->exists) memcpy(d->md5, fd->md5, 16);
    return d;
}

/* Try one candidate; true when it exists (the search stops there). */
static bool probe(scan_ctx *c, uint32_t root, char *path)
{
    if (!path) {
        c->st = cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
        return true;
    }
    cckey_dep *seen = find_dep(&c->list, root, path);
    if (seen) {
        free(path);
        return seen->present;
    }
    cckey_file_digest fd;
    const char *base = root == CCKEY_DEP_ABSOLUTE ? NULL : c->roots[root];
    cckey_status st = cckey_dep_digest(c->memo, base, path, strlen(path), &fd);
    if (st != CCKEY_OK) {
        free(path);
        c->st = st;
        return true;
    }
    add_dep(c, root, path, &fd);
    return fd.exists;
}

/* One #include of the file at (root, rel): its candidates in search order. */
static void resolve(scan_ctx *c, uint32_t root, const char *rel, const char *name, size_t len, bool quoted)
{
    if (len && name[0] == '/') {
        probe(c, CCKEY_DEP_ABSOLUTE, normalize("/", 1, name, len));
        return;
    }
    if (quoted) {
        const char *slash = strrchr(rel, '/');
        size_t dl = slash ? (size_t)(slash - rel) : 0;
        char *p = root == CCKEY_DEP_ABSOLUTE && dl == 0 ? normalize("/", 1, name, len)
                                                        : normalize(rel, dl, name, len);
        if (p && root == CCKEY_DEP_ABSOLUTE && rel[0] == '/' && p[0] != '/') {
            char *abs = normalize("/", 1, p, strlen(p));   /* keep it absolute */
            free(p);
            p = abs;
        }
        if (probe(c, root, p) || c->st != CCKEY_OK) return;
    }
    for (uint32_t r = 0; r < c->n_roots && c->st == CCKEY_OK; r++)
        if (probe(c, r, normalize("", 0, name, len))) return;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

/* A directive after its '#': an include's name, if it is one. */
static void directive(scan_ctx *c, uint32_t root, const char *rel, const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && is_space(s[i])) i++;
    if (n - i < 7 || memcmp(s + i, "include", 7) != 0) return;
    i += 7;
    while (i < n && is_space(s[i])) i++;
    if (i == n || (s[i] != '"' && s[i] != '<')) return;   /* #include MACRO: not followed */
    char close = s[i] == '"' ? '"' : '>';
    size_t start = ++i;
    while (i < n && s[i] != close && s[i] != '\n') i++;
    if (i < n && s[i] == close && i > start) resolve(c, root, rel, s + start, i - start, close == '"');
}

/* Every #include line of a text, skipping comments and literals. */
static void follow(scan_ctx *c, uint32_t root, const char *rel, const char *s, size_t n)
{
    bool bol = true;
    for (size_t i = 0; i < n && c->st == CCKEY_OK;) {
        char ch = s[i];
        if (ch == '\n') {
            bol = true, i++;
        } else if (is_space(ch)) {
            i++;
        } else if (ch == '/' && i + 1 < n && s[i + 1] == '*') {
            const char *end = memmem(s + i + 2, n - i - 2, "*/", 2);
            i = end ? (size_t)(end - s) + 2 : n;
        } else if (ch == '/' && i + 1 < n && s[i + 1] == '/') {
            while (i < n && s[i] != '\n') i++;
        } else if (bol && ch == '#') {
            size_t e = i + 1;
            while (e < n && s[e] != '\n') e++;
            directive(c, root, rel, s + i + 1, e - i - 1);
            i = e, bol = false;
        } else if (ch == '"' || ch == '\'') {
            for (i++; i < n && s[i] != ch && s[i] != '\n'; i++)
                if (s[i] == '\\') i++;
            i++, bol = false;
        } else {
            i++, bol = false;
        }
    }
}

cckey_status cckey_deps_scan(const void *source, size_t len, const char *const *roots, size_t n_roots,
                             cckey_dep_memo *memo, cckey_dep **deps, size_t *n)
{
    if (deps) *deps = NULL;
    if (n) *n = 0;
    if (!deps || !n || (!source && len) || (!roots && n_roots))
        return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL source, roots or output");
    for (size_t i = 0; i < n_roots; i++)
        if (!roots[i]) return cckey_fail(CCKEY_ERR_INVALID_ARG, "root %zu is NULL", i);
    scan_ctx c = {.roots = roots, .n_roots = n_roots, .memo = memo, .st = CCKEY_OK};
    follow(&c, n_roots ? 0 : CCKEY_DEP_ABSOLUTE, "", source, len);
    /* Then the files found, in the order found (the list grows meanwhile). */
    for (size_t i = 0; c.st == CCKEY_OK && i < c.list.n; i++) {
        cckey_dep d = c.list.d[i];
        if (!d.present) continue;
        cckey_file_digest fd;
        char *text = NULL;
        const char *base = d.root == CCKEY_DEP_ABSOLUTE ? NULL : roots[d.root];
        c.st = cckey_dep_read(memo, base, d.path, strlen(d.path), &fd, &text);
        if (c.st == CCKEY_OK && text) follow(&c, d.root, d.path, text, (size_t)fd.size);
        free(text);
    }
    if (c.st != CCKEY_OK) {
        cckey_deps_free(c.list.d, c.list.n);
        return c.st;
    }
    *deps = c.list.d, *n = c.list.n;
    return CCKEY_OK;
}

void cckey_deps_free(cckey_dep *deps, size_t n)
{
    for (size_t i = 0; deps && i < n; i++) free((char *)deps[i].path);
    free(deps);
}
