/* The text scan of one file under each option set: #if and #ifdef see the
 * set's -D and -U (a kernel under #ifdef WITH_X exists for the sets that
 * pass -DWITH_X), so the file is scanned once per distinct list of macros
 * and the entries are merged, each with the sets it exists in. */
#include <stdio.h>
#include "scan_text.h"

#include <stdlib.h>
#include <string.h>

/* A set's -D / -U flags as scan_options.defines has them, in order:
 * ["-DNAME", "V"] and ["-D", "NAME=V"] are "NAME=V"; ["-DNAME", ""] and
 * ["-D", "NAME"] are "NAME"; ["-UNAME", ""] and ["-U", "NAME"] are "-NAME". */
static char **defines_of(const scan_exact_set *set, size_t *n)
{
    char **d = calloc(set->n + 1, sizeof *d);
    *n = 0;
    for (size_t i = 0; d && i < set->n; i++) {
        const cckey_option *o = &set->opts[i];
        const char *k = o->key.ptr, *v = o->value.ptr ? o->value.ptr : "";
        size_t kl = o->key.len, vl = o->value.len;
        if (kl < 2 || k[0] != '-' || (k[1] != 'D' && k[1] != 'U')) continue;
        bool undef = k[1] == 'U', split = kl == 2;
        const char *name = split ? v : k + 2;
        size_t nl = split ? vl : kl - 2;
        const char *val = split ? NULL : v;
        size_t len = nl + (val && vl ? vl + 1 : 0) + 2;
        char *s = malloc(len);
        if (!s) break;
        if (undef) snprintf(s, len, "-%.*s", (int)nl, name);
        else if (val && vl) snprintf(s, len, "%.*s=%.*s", (int)nl, name, (int)vl, val);
        else snprintf(s, len, "%.*s", (int)nl, name);
        d[(*n)++] = s;
    }
    return d;
}

static void free_defines(char **d, size_t n)
{
    for (size_t i = 0; i < n; i++) free(d[i]);
    free(d);
}

static bool same_defines(char **a, size_t na, char **b, size_t nb)
{
    if (na != nb) return false;
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i], b[i]) != 0) return false;
    return true;
}

/* The entry of r like e (the same name, in the same program text), or -1. */
static long find_like(const scan_result *r, const scan_result *from, const scan_entry *e)
{
    for (size_t k = 0; k < r->n; k++) {
        const scan_entry *x = &r->entries[k];
        if (strcmp(x->name, e->name) != 0 || (x->program < 0) != (e->program < 0)) continue;
        if (e->program < 0) return (long)k;
        const scan_program *p = &r->programs[x->program], *q = &from->programs[e->program];
        if (p->len == q->len && memcmp(p->text, q->text, p->len) == 0) return (long)k;
    }
    return -1;
}

/* Moves entry e of from (a scan under other macros) into r; its index. */
static long adopt(scan_result *r, scan_result *from, scan_entry *e)
{
    scan_entry *ne = realloc(r->entries, (r->n + 1) * sizeof *ne);
    if (!ne) return -1;
    r->entries = ne, r->cap = r->n + 1;
    scan_entry moved = *e;
    if (e->program >= 0) {
        scan_program *p = realloc(r->programs, (r->n_programs + 1) * sizeof *p);
        if (!p) return -1;
        r->programs = p;
        scan_program *src = &from->programs[e->program];
        char *t = malloc(src->len + 1);
        if (!t) return -1;
        memcpy(t, src->text, src->len + 1);
        r->programs[r->n_programs] = (scan_program){t, src->len, src->lang, src->line};
        moved.program = (int)r->n_programs++;
    }
    e->name = e->source_name = NULL;   /* now r's */
    r->entries[r->n] = moved;
    return (long)r->n++;
}

static int merge_warnings(scan_result *r, scan_result *from)
{
    for (size_t i = 0; i < from->n_warnings; i++) {
        bool seen = false;
        for (size_t k = 0; k < r->n_warnings && !seen; k++) seen = strcmp(r->warnings[k], from->warnings[i]) == 0;
        if (seen) continue;
        char **w = realloc(r->warnings, (r->n_warnings + 1) * sizeof *w);
        if (!w) return -1;
        r->warnings = w, r->cap_warnings = r->n_warnings + 1;
        r->warnings[r->n_warnings++] = from->warnings[i];
        from->warnings[i] = NULL;
    }
    return 0;
}

/* in_set for r's entries, grown to n entries (new rows false). */
static bool *grow_in_set(bool *in_set, size_t old_n, size_t n, size_t n_sets)
{
    bool *p = realloc(in_set, (n ? n : 1) * n_sets * sizeof *p);
    if (p && n > old_n) memset(p + old_n * n_sets, 0, (n - old_n) * n_sets * sizeof *p);
    return p;
}

/* from's entries (scanned with the macros of the sets where group[s]) into out. */
static int merge(scan_exact_file *out, scan_result *from, const bool *group, size_t n_sets)
{
    scan_result *r = &out->r;
    for (size_t e = 0; e < from->n; e++) {
        long k = find_like(r, from, &from->entries[e]);
        size_t before = r->n;
        if (k < 0 && (k = adopt(r, from, &from->entries[e])) < 0) return -1;
        bool *p = grow_in_set(out->in_set, before, r->n, n_sets);
        if (!p) return -1;
        out->in_set = p;
        for (size_t s = 0; s < n_sets; s++) out->in_set[(size_t)k * n_sets + s] |= group[s];
    }
    if (merge_warnings(r, from) != 0) return -1;
    if (!r->n_files && from->n_files) {   /* the headers: the first scan's */
        r->files = from->files, r->n_files = from->n_files;
        from->files = NULL, from->n_files = 0;
    }
    return 0;
}

int scan_text_sets(const char *path, const char *src, size_t len, scan_lang lang, const scan_exact_set *sets,
                   size_t n_sets, const char *const *macros, size_t n_macros, scan_exact_file *out)
{
    *out = (scan_exact_file){0};
    char ***defs = calloc(n_sets ? n_sets : 1, sizeof *defs);
    size_t *n_defs = calloc(n_sets ? n_sets : 1, sizeof *n_defs);
    bool *done = calloc(n_sets ? n_sets : 1, sizeof *done), *group = calloc(n_sets ? n_sets : 1, sizeof *group);
    int rc = defs && n_defs && done && group ? 0 : -1;
    for (size_t s = 0; rc == 0 && s < n_sets; s++)
        if (!(defs[s] = defines_of(&sets[s], &n_defs[s]))) rc = -1;
    size_t groups = 0;
    for (size_t s = 0; rc == 0 && s < n_sets; s++) {
        if (done[s]) continue;
        for (size_t t = 0; t < n_sets; t++)
            group[t] = !done[t] && same_defines(defs[s], n_defs[s], defs[t], n_defs[t]), done[t] |= group[t];
        scan_options so = {macros, n_macros, (const char *const *)defs[s], n_defs[s]};
        scan_result r;
        rc = scan_file(path, src, len, lang, &so, &r);
        if (rc != 0) {
            out->r.deep_line = r.deep_line;
            break;
        }
        rc = merge(out, &r, group, n_sets);
        scan_result_free(&r);
        groups++;
    }
    for (size_t s = 0; defs && s < n_sets; s++) free_defines(defs[s], n_defs[s]);
    free(defs), free(n_defs), free(done), free(group);
    if (rc == 0 && groups <= 1) {   /* one scan: every entry is in every set */
        free(out->in_set);
        out->in_set = NULL;
    }
    if (rc != 0) {
        unsigned deep = out->r.deep_line;
        scan_result_free(&out->r);
        out->r.deep_line = deep;
        free(out->in_set);
        out->in_set = NULL;
    }
    return rc;
}
