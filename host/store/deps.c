/* Which files a build reads besides its source: the #include lines, followed
 * through the roots as cckey.h describes, recursively. The list is recorded
 * in the entry and re-checked on look-up (records.c). What the text cannot
 * resolve (a computed include) is noted for cckey_deps_find (deps_find.c). */
#include "deps_internal.h"
#include "../core/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Enough for any real suite; a cycle cannot reach it (files are visited
 * once), so hitting it means a generated monster, refused plainly. */
#define MAX_DEPS 20000

char *cckey_deps_normalize(const char *dir, size_t dir_len, const char *name, size_t name_len)
{
    char *out = malloc(dir_len + name_len + 2);
    if (!out) return NULL;
    size_t o = 0, keep = 0;   /* keep: bytes of leading "/" or "../" that cannot be folded */
    if ((dir_len && dir[0] == '/') || (!dir_len && name_len && name[0] == '/')) out[o++] = '/', keep = 1;
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
            if (o && out[o - 1] != '/') out[o++] = '/';
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

void cckey_deps_resolve(scan_ctx *c, uint32_t root, const char *rel, const char *name, size_t len, bool quoted,
                        bool next)
{
    if (len && name[0] == '/') {
        probe(c, CCKEY_DEP_ABSOLUTE, cckey_deps_normalize("/", 1, name, len));
        return;
    }
    /* #include_next: the roots after the includer's (from a file found in
     * none, or from the source itself, as #include: what clang does). */
    uint32_t first = next && rel[0] && root != CCKEY_DEP_ABSOLUTE ? root + 1 : 0;
    if (quoted && !next) {
        const char *slash = strrchr(rel, '/');
        size_t dl = slash ? (size_t)(slash - rel) : 0;
        /* No roots: the source's own folder is the working folder, as the
         * compilers take a program built from memory. */
        char *p = root == CCKEY_DEP_ABSOLUTE && dl == 0 && rel[0] == '/' ? cckey_deps_normalize("/", 1, name, len)
                                                                        : cckey_deps_normalize(rel, dl, name, len);
        if (p && root == CCKEY_DEP_ABSOLUTE && rel[0] == '/' && p[0] != '/') {
            char *abs = cckey_deps_normalize("/", 1, p, strlen(p));   /* keep it absolute */
            free(p);
            p = abs;
        }
        if (probe(c, root, p) || c->st != CCKEY_OK) return;
    }
    for (uint32_t r = first; r < c->n_roots && c->st == CCKEY_OK; r++)
        if (probe(c, r, cckey_deps_normalize("", 0, name, len))) return;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }
static bool is_ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The first directive the text could not resolve, as "FILE:LINE: TEXT". */
static void unresolved(scan_ctx *c, const char *rel, const char *s, size_t n)
{
    if (c->why[0]) return;
    size_t line = 1;
    for (const char *p = c->text; p < s; p++) line += *p == '\n';
    while (n && (s[n - 1] == '\r' || is_space(s[n - 1]))) n--;
    snprintf(c->why, sizeof c->why, "%s:%zu: #%.*s", rel[0] ? rel : c->source_name ? c->source_name : "source",
             line, (int)(n > 120 ? 120 : n), s);
}

/* A quoted or angled name at s[*i] (after white space): its bounds, and
 * whether it was quoted; false when s[*i] starts no such name. */
static bool header_name(const char *s, size_t n, size_t *i, size_t *start, size_t *end, bool *quoted)
{
    while (*i < n && is_space(s[*i])) ++*i;
    if (*i == n || (s[*i] != '"' && s[*i] != '<')) return false;
    char close = s[*i] == '"' ? '"' : '>';
    *quoted = close == '"';
    *start = ++*i;
    while (*i < n && s[*i] != close && s[*i] != '\n') ++*i;
    if (*i == n || s[*i] != close || *i == *start) return false;
    *end = (*i)++;
    return true;
}

/* The identifier just before s[at] ('('), white space skipped: its start
 * and length (0 when there is none). */
static size_t ident_before(const char *s, size_t at, size_t *start)
{
    size_t e = at;
    while (e && is_space(s[e - 1])) e--;
    size_t b = e;
    while (b && is_ident(s[b - 1])) b--;
    *start = b;
    return e - b;
}

/* The probes of a directive: `__has_include(...)` and
 * `__has_include_next(...)`, and in #if and #elif any macro called on a
 * header name (`_CCCL_HAS_INCLUDE(<h>)` and the like), each probed as the
 * include it names would be (a superset: a name that is no header is one
 * more absent probe). In #if and #elif an __has_include of anything else is
 * unresolved; in a #define it is a macro's body, probed where it is used. */
static void probes(scan_ctx *c, uint32_t root, const char *rel, const char *s, size_t n, bool in_if)
{
    for (const char *p = s; (p = memchr(p, '(', n - (size_t)(p - s))); p++) {
        size_t at = (size_t)(p - s), b, a, e, i = at + 1;
        size_t wl = ident_before(s, at, &b);
        bool has = (wl == 13 && memcmp(s + b, "__has_include", 13) == 0),
             next = wl == 18 && memcmp(s + b, "__has_include_next", 18) == 0, quoted;
        if (!wl || (!has && !next && !in_if)) continue;
        if (header_name(s, n, &i, &a, &e, &quoted)) {
            cckey_deps_resolve(c, root, rel, s + a, e - a, quoted, next);
        } else if ((has || next) && in_if) {
            c->has_macro = true;
            unresolved(c, rel, s, n);
        }
    }
}

/* `#define NAME "text"` or `#define NAME <text>`: kept as a name a computed
 * include may expand to (followed only when the text has one). */
static void define(scan_ctx *c, uint32_t root, const char *rel, const char *s, size_t n)
{
    size_t i = 0, a, b;
    bool quoted;
    while (i < n && is_space(s[i])) i++;
    while (i < n && is_ident(s[i])) i++;
    if (i == n || !is_space(s[i]) || !header_name(s, n, &i, &a, &b, &quoted)) return;
    if (c->n_defs == c->cap_defs) {
        size_t cap = c->cap_defs ? c->cap_defs * 2 : 16;
        define_lit *d = realloc(c->defs, cap * sizeof *d);
        if (!d) return;   /* a name fewer to probe; the text's own verdict stands */
        c->defs = d, c->cap_defs = cap;
    }
    define_lit *d = &c->defs[c->n_defs];
    d->root = root, d->angled = !quoted;
    d->rel = strdup(rel), d->name = strndup(s + a, b - a);
    if (d->rel && d->name) c->n_defs++;
    else free(d->rel), free(d->name);
}

/* A directive after its '#'. */
static void directive(scan_ctx *c, uint32_t root, const char *rel, const char *s, size_t n)
{
    size_t i = 0, a, b;
    bool quoted;
    while (i < n && is_space(s[i])) i++;
    size_t w = i;
    while (i < n && is_ident(s[i])) i++;
    const char *word = s + w;
    size_t wl = i - w;
    bool inc = wl == 7 && memcmp(word, "include", 7) == 0, next = wl == 12 && memcmp(word, "include_next", 12) == 0;
    if (inc || next) {
        if (header_name(s, n, &i, &a, &b, &quoted)) {
            cckey_deps_resolve(c, root, rel, s + a, b - a, quoted, next);
        } else {
            c->computed = true;   /* #include MACRO: cckey_deps_find asks a preprocessor */
            unresolved(c, rel, s + w, n - w);
        }
        return;
    }
    bool def = wl == 6 && memcmp(word, "define", 6) == 0;
    bool in_if = (wl == 2 && memcmp(word, "if", 2) == 0) || (wl == 4 && memcmp(word, "elif", 4) == 0);
    if (def) define(c, root, rel, s + i, n - i);
    if (def || in_if) probes(c, root, rel, s, n, in_if);
}

/* Every directive of a text, skipping comments and literals. */
void cckey_deps_follow(scan_ctx *c, uint32_t root, const char *rel, const char *s, size_t n)
{
    const char *text = c->text;
    c->text = s;
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
    c->text = text;
}

void cckey_deps_follow_from(scan_ctx *c, size_t *next)
{
    for (; c->st == CCKEY_OK && *next < c->list.n; ++*next) {
        cckey_dep d = c->list.d[*next];
        if (!d.present) continue;
        cckey_file_digest fd;
        char *text = NULL;
        const char *base = d.root == CCKEY_DEP_ABSOLUTE ? NULL : c->roots[d.root];
        c->st = cckey_dep_read(c->memo, base, d.path, strlen(d.path), &fd, &text);
        if (c->st == CCKEY_OK && text) cckey_deps_follow(c, d.root, d.path, text, (size_t)fd.size);
        free(text);
    }
}

void cckey_deps_add_absolute(scan_ctx *c, const char *path)
{
    char *p = cckey_deps_normalize("/", 1, path, strlen(path));
    probe(c, CCKEY_DEP_ABSOLUTE, p);
}

void cckey_deps_ctx_free(scan_ctx *c)
{
    for (size_t i = 0; i < c->n_defs; i++) free(c->defs[i].rel), free(c->defs[i].name);
    free(c->defs);
    c->defs = NULL, c->n_defs = c->cap_defs = 0;
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
    cckey_deps_follow(&c, n_roots ? 0 : CCKEY_DEP_ABSOLUTE, "", source, len);
    /* Then the files found, in the order found (the list grows meanwhile). */
    size_t next = 0;
    cckey_deps_follow_from(&c, &next);
    cckey_deps_ctx_free(&c);
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
