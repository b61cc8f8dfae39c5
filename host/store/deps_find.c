/* cckey_deps_find: the text scan (deps.c) plus what a build's flags and a
 * real preprocessor add: pre-includes, the directives a preprocessor
 * processed with their macros expanded, and every file it read. */
#include "deps_internal.h"
#include "../core/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* path made absolute (against the working folder) and normalized: a new
 * string, or NULL. */
static char *absolute(const char *path)
{
    if (path[0] == '/') return cckey_deps_normalize("/", 1, path, strlen(path));
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) return NULL;
    char *p = cckey_deps_normalize(cwd, strlen(cwd), path, strlen(path));
    char *abs = p ? cckey_deps_normalize("/", 1, p, strlen(p)) : NULL;
    free(p);
    return abs;
}

/* Absolute paths of the roots and of the dependencies listed so far, made
 * once each: a preprocessor names files by path, the list by root. */
typedef struct paths {
    char **root;
    char **dep;
    size_t n_dep, cap_dep;
} paths;

static void paths_free(paths *p, size_t n_roots)
{
    for (size_t i = 0; p->root && i < n_roots; i++) free(p->root[i]);
    for (size_t i = 0; i < p->n_dep; i++) free(p->dep[i]);
    free(p->root), free(p->dep);
}

static char *joined(const char *base, const char *rel)
{
    char *p = base ? cckey_deps_normalize(base, strlen(base), rel, strlen(rel)) : NULL;
    char *abs = p ? cckey_deps_normalize("/", 1, p, strlen(p)) : NULL;
    free(p);
    return abs;
}

/* Bring p->dep up to the list (NULL entries where out of memory). */
static void paths_sync(const scan_ctx *c, paths *p)
{
    if (p->cap_dep < c->list.n) {
        char **d = realloc(p->dep, c->list.n * sizeof *d);
        if (!d) return;
        p->dep = d, p->cap_dep = c->list.n;
    }
    for (; p->n_dep < c->list.n; p->n_dep++) {
        const cckey_dep *d = &c->list.d[p->n_dep];
        p->dep[p->n_dep] = d->root == CCKEY_DEP_ABSOLUTE ? joined("/", d->path) : joined(p->root[d->root], d->path);
    }
}

/* The file a preprocessor named path, as (root, rel): a present dependency
 * with that path (true), else the first root it lies under, else by
 * absolute path (false). *rel is a new string (NULL: out of memory). */
static bool locate(const scan_ctx *c, paths *ps, const char *path, uint32_t *root, char **rel)
{
    *rel = NULL;
    char *abs = absolute(path);
    if (!abs) return false;
    paths_sync(c, ps);
    for (size_t i = 0; i < ps->n_dep; i++) {
        if (!c->list.d[i].present || !ps->dep[i] || strcmp(ps->dep[i], abs) != 0) continue;
        *root = c->list.d[i].root, *rel = strdup(c->list.d[i].path);
        free(abs);
        return true;
    }
    for (uint32_t r = 0; r < c->n_roots; r++) {
        const char *base = ps->root[r];
        size_t bl = base ? strlen(base) : 0;
        if (!base || strncmp(abs, base, bl) != 0 || (abs[bl] != '/' && bl != 1)) continue;
        *root = r, *rel = strdup(abs + (bl == 1 ? 1 : bl + 1));
        free(abs);
        return false;
    }
    *root = CCKEY_DEP_ABSOLUTE, *rel = abs;
    return false;
}

/* The preprocessor's directives, each followed from the file that holds it. */
static void follow_directives(scan_ctx *c, paths *ps, const cckey_deps_request *rq)
{
    uint32_t main_root = c->n_roots ? 0 : CCKEY_DEP_ABSOLUTE;
    for (size_t i = 0; i < rq->n_includes && c->st == CCKEY_OK; i++) {
        const cckey_include *in = &rq->includes[i];
        if (!in->name || !in->name[0]) continue;
        uint32_t root = main_root;
        char *rel = NULL;
        if (in->from) locate(c, ps, in->from, &root, &rel);
        if (in->from && !rel) {
            c->st = cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
            return;
        }
        cckey_deps_resolve(c, root, rel ? rel : "", in->name, strlen(in->name), !in->angled, in->next);
        free(rel);
    }
}

/* Every file the preprocessor read is a dependency: one the search through
 * the roots did not list is recorded by its absolute path. */
static void add_read(scan_ctx *c, paths *ps, const cckey_deps_request *rq)
{
    for (size_t i = 0; i < rq->n_read && c->st == CCKEY_OK; i++) {
        uint32_t root;
        char *rel;
        if (!locate(c, ps, rq->read[i], &root, &rel)) {
            char *abs = absolute(rq->read[i]);
            if (abs) cckey_deps_add_absolute(c, abs);
            else c->st = cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
            free(abs);
        }
        free(rel);
    }
}

/* Follow what is listed, and, once the text has a computed include, probe
 * every `#define`d string as a name it may expand to, from its file (a
 * superset, whatever the preprocessor's macros were), until nothing new. */
static void settle(scan_ctx *c, size_t *next, size_t *defs_done)
{
    do {
        cckey_deps_follow_from(c, next);
        for (; c->computed && *defs_done < c->n_defs && c->st == CCKEY_OK; ++*defs_done) {
            const define_lit *d = &c->defs[*defs_done];
            cckey_deps_resolve(c, d->root, d->rel, d->name, strlen(d->name), !d->angled, false);
        }
    } while (c->st == CCKEY_OK && *next < c->list.n);
}

static cckey_status check_request(const cckey_deps_request *rq, cckey_deps_result *out)
{
    if (!rq || !out || (!rq->source && rq->len) || (!rq->roots && rq->n_roots) ||
        (!rq->pre_includes && rq->n_pre_includes) || (!rq->includes && rq->n_includes) || (!rq->read && rq->n_read))
        return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL request, result or array");
    for (size_t i = 0; i < rq->n_roots; i++)
        if (!rq->roots[i]) return cckey_fail(CCKEY_ERR_INVALID_ARG, "root %zu is NULL", i);
    for (size_t i = 0; i < rq->n_pre_includes; i++)
        if (!rq->pre_includes[i]) return cckey_fail(CCKEY_ERR_INVALID_ARG, "pre-include %zu is NULL", i);
    for (size_t i = 0; i < rq->n_read; i++)
        if (!rq->read[i]) return cckey_fail(CCKEY_ERR_INVALID_ARG, "read file %zu is NULL", i);
    return CCKEY_OK;
}

cckey_status cckey_deps_find(const cckey_deps_request *rq, cckey_deps_result *out)
{
    if (out) memset(out, 0, sizeof *out);
    cckey_status st = check_request(rq, out);
    if (st != CCKEY_OK) return st;
    scan_ctx c = {.roots = rq->roots, .n_roots = rq->n_roots, .memo = rq->memo, .st = CCKEY_OK,
                  .source_name = rq->source_name};
    uint32_t main_root = rq->n_roots ? 0 : CCKEY_DEP_ABSOLUTE;
    /* -include f: `#include "f"` before the source's first line. */
    for (size_t i = 0; i < rq->n_pre_includes && c.st == CCKEY_OK; i++)
        cckey_deps_resolve(&c, main_root, "", rq->pre_includes[i], strlen(rq->pre_includes[i]), true, false);
    cckey_deps_follow(&c, main_root, "", rq->source, rq->len);
    size_t next = 0, defs_done = 0;
    paths ps = {.root = calloc(rq->n_roots ? rq->n_roots : 1, sizeof *ps.root)};
    for (size_t i = 0; ps.root && i < rq->n_roots; i++) ps.root[i] = absolute(rq->roots[i]);
    if (!ps.root) c.st = cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
    settle(&c, &next, &defs_done);
    if (c.st == CCKEY_OK) follow_directives(&c, &ps, rq);
    settle(&c, &next, &defs_done);
    if (c.st == CCKEY_OK) add_read(&c, &ps, rq);
    settle(&c, &next, &defs_done);
    paths_free(&ps, rq->n_roots);
    cckey_deps_ctx_free(&c);
    if (c.st != CCKEY_OK) {
        cckey_deps_free(c.list.d, c.list.n);
        return c.st;
    }
    out->deps = c.list.d, out->n = c.list.n;
    out->complete = !c.has_macro && (!c.computed || rq->preprocessed);
    if (!out->complete) snprintf(out->why, sizeof out->why, "%s", c.why);
    return CCKEY_OK;
}

void cckey_deps_result_free(cckey_deps_result *r)
{
    if (!r) return;
    cckey_deps_free(r->deps, r->n);
    r->deps = NULL, r->n = 0;
}
