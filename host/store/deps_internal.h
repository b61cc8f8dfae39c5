/* The include follower shared by cckey_deps_scan (deps.c) and
 * cckey_deps_find (deps_find.c): what was read and probed, and what the
 * text alone could not resolve. */
#ifndef CCKEY_DEPS_INTERNAL_H
#define CCKEY_DEPS_INTERNAL_H

#include "store_internal.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct dep_list {
    cckey_dep *d;
    size_t n, cap;
} dep_list;

/* `#define NAME "text"` (or <text>): a name a computed include may expand to. */
typedef struct define_lit {
    uint32_t root;
    char *rel;      /* the file that holds it ("" for the source) */
    char *name;
    bool angled;
} define_lit;

typedef struct scan_ctx {
    const char *const *roots;
    size_t n_roots;
    cckey_dep_memo *memo;
    dep_list list;
    cckey_status st;
    /* What the text could not resolve: `#include MACRO` (computed) and
     * `__has_include(MACRO)` (has_macro); why names the first. */
    bool computed, has_macro;
    char why[512];
    const char *source_name;   /* the source in messages */
    const char *text;          /* the text being followed, for line numbers */
    define_lit *defs;
    size_t n_defs, cap_defs;
} scan_ctx;

/* "a/./b/../c" -> "a/c" for dir joined with name; leading ".." stay. A new
 * string, or NULL when out of memory. */
char *cckey_deps_normalize(const char *dir, size_t dir_len, const char *name, size_t name_len);
/* One include of name from the file at (root, rel) (rel "" is the source
 * itself), its candidates tried in search order; quoted: "name"; next:
 * #include_next. */
void cckey_deps_resolve(scan_ctx *c, uint32_t root, const char *rel, const char *name, size_t len, bool quoted,
                        bool next);
/* Follow every directive of a text held by the file at (root, rel). */
void cckey_deps_follow(scan_ctx *c, uint32_t root, const char *rel, const char *s, size_t n);
/* Read and follow the present dependencies from index *next on, the list
 * growing meanwhile; *next ends past the last. */
void cckey_deps_follow_from(scan_ctx *c, size_t *next);
/* Record a file by absolute path as found (when it exists). */
void cckey_deps_add_absolute(scan_ctx *c, const char *path);
void cckey_deps_ctx_free(scan_ctx *c);

#endif
