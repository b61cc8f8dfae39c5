/* warm, before anything compiles: the manifest read, keyed, sharded and
 * looked up, and what is left grouped into builds (see warm_run.h). */
#include "warm_run.h"

#include "../cli.h"
#include "../parallel_for.h"
#include "../scan/scan.h"
#include "warm_vulkan.h"

#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void warm_fail(tuple *t, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    t->state = T_FAILED;
    free(t->why);
    t->why = strdup(buf);
}

static scan_lang lang_of(const manifest_item *it, char *err, size_t err_len)
{
    /* As C strings: a \u0000 ends the name, as it did when jansson read it. */
    if (it->language_kind != MJ_NONE) {
        char *name = it->language_kind == MJ_STRING ? strndup(it->language.ptr, it->language.len) : NULL;
        scan_lang lang = name ? scan_lang_from_name(name) : CCKEY_LANG_NONE;
        free(name);
        if (!lang) snprintf(err, err_len, "\"language\" must be one of opencl, cuda, hip, metal, glsl, hlsl");
        return lang;
    }
    char *path = it->source_file.ptr ? strndup(it->source_file.ptr, it->source_file.len) : NULL;
    scan_lang lang = path ? scan_lang_of_path(path) : CCKEY_LANG_NONE;
    free(path);
    return lang ? lang : CCKEY_LANG_OPENCL;
}

/* The folder of the tuple's source_file (the manifest's folder for inline
 * source), as a real path: the first include root. prev is the previous
 * tuple's, reused when the folder is the same. */
static char *source_root(const manifest *m, const manifest_item *it, const tuple *prev)
{
    char path[PATH_MAX * 2];
    if (it->source_file.ptr) {   /* never empty, never holds a NUL (the parser refuses both) */
        const char *rel = it->source_file.ptr;
        int n = (int)it->source_file.len;
        if (rel[0] == '/') snprintf(path, sizeof path, "%.*s", n, rel);
        else snprintf(path, sizeof path, "%s/%.*s", m->base_dir, n, rel);
        dirname(path);
    } else {
        snprintf(path, sizeof path, "%s", m->base_dir);
    }
    char real[PATH_MAX];
    const char *dir = realpath(path, real) ? real : path;
    if (prev && prev->root && strcmp(prev->root, dir) == 0) return strdup(prev->root);
    return strdup(dir);
}

/* Read the whole manifest; 0, or an exit status. */
int warm_load(warm *w, manifest_files *files)
{
    manifest m;
    if (manifest_open(&m, w->manifest) != 0) return CLI_USAGE;
    m.max_line = w->max_line;
    size_t cap = 0;
    int rc = CLI_OK;
    char err[1024];
    for (;;) {
        if (w->n == cap) {
            cap = cap ? cap * 2 : 256;
            tuple *t = realloc(w->t, cap * sizeof *t);
            if (!t) {
                cli_error("warm: out of memory");
                rc = CLI_FAIL;
                break;
            }
            w->t = t;
        }
        tuple *t = &w->t[w->n];
        memset(t, 0, sizeof *t);
        int r = manifest_next(&m, &t->item, files, err, sizeof err);
        if (r == MANIFEST_EOF) break;
        if (r != MANIFEST_ITEM) {
            fprintf(stderr, "%s\n", err);
            rc = r == MANIFEST_IO ? CLI_FAIL : CLI_USAGE;
            break;
        }
        w->n++;
        if (!(t->root = source_root(&m, &t->item, w->n > 1 ? &w->t[w->n - 2] : NULL))) {
            cli_error("warm: out of memory");
            rc = CLI_FAIL;
            break;
        }
        err[0] = '\0';
        t->lang = lang_of(&t->item, err, sizeof err);
        if (!t->lang) {
            fprintf(stderr, "%s:%zu: %s\n", m.label, t->item.line, err);
            rc = CLI_USAGE;
            break;
        }
    }
    manifest_close(&m);
    return rc;
}

static int by_key(const void *a, const void *b, void *arg)
{
    const tuple *t = arg;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    int c = strcmp(t[x].key, t[y].key);
    return c ? c : (x > y) - (x < y);
}

/* Builds are shared by tuples of one language, device, source and options:
 * fields 1, 3 and 4 of the key. An HLSL module holds the one entry point it
 * was compiled for, so there the name (field 2) counts too. */
static int by_build(const void *a, const void *b, void *arg)
{
    const tuple *t = arg;
    const tuple *x = &t[*(const size_t *)a], *y = &t[*(const size_t *)b];
    if (x->lang != y->lang) return x->lang < y->lang ? -1 : 1;
    int c = memcmp(x->key, y->key, 33);
    if (!c && x->lang == CCKEY_LANG_HLSL) c = memcmp(x->key + 33, y->key + 33, 33);
    if (!c) c = strcmp(x->key + 66, y->key + 66);
    if (!c) c = strcmp(x->root, y->root);   /* the same text may include other headers elsewhere */
    return c ? c : strcmp(x->key, y->key);
}

static bool same_build(const tuple *x, const tuple *y)
{
    return x->lang == y->lang && memcmp(x->key, y->key, 33) == 0 && strcmp(x->key + 66, y->key + 66) == 0 &&
           strcmp(x->root, y->root) == 0 && (x->lang != CCKEY_LANG_HLSL || memcmp(x->key + 33, y->key + 33, 33) == 0);
}

warm_compiler *warm_compiler_for(warm *w, scan_lang lang, const char **why)
{
    if (lang == CCKEY_LANG_OPENCL) {
        if (w->have_opencl < 0)
            w->have_opencl = warm_compiler_opencl(&w->opencl, w->opencl_why, sizeof w->opencl_why) == 0;
        *why = w->opencl_why;
        return w->have_opencl ? &w->opencl : NULL;
    }
    if (lang == CCKEY_LANG_CUDA) {
        if (w->have_cuda < 0) w->have_cuda = warm_compiler_cuda(&w->cuda, w->cuda_why, sizeof w->cuda_why) == 0;
        *why = w->cuda_why;
        return w->have_cuda ? &w->cuda : NULL;
    }
    if (lang == CCKEY_LANG_GLSL || lang == CCKEY_LANG_HLSL) {
        bool glsl = lang == CCKEY_LANG_GLSL;
        int *have = glsl ? &w->have_glsl : &w->have_hlsl;
        if (*have < 0)
            *have = (glsl ? warm_compiler_glsl : warm_compiler_hlsl)(glsl ? &w->glsl : &w->hlsl, w->vulkan_why,
                                                                      sizeof w->vulkan_why) == 0;
        *why = w->vulkan_why;
        return *have ? (glsl ? &w->glsl : &w->hlsl) : NULL;
    }
    *why = "cckey warm compiles OpenCL, CUDA, GLSL and HLSL kernels only";
    return NULL;
}

/* shaderc searches as glslc does: beside the including file, then the -I
 * folders (the source's first), never warm's working folder; and no other
 * preprocessor stands in for its. */
static void shader_search(warm_search *s)
{
    memmove(s->roots, s->roots + 1, (s->n_roots - 1) * sizeof *s->roots);   /* roots[0]: the working folder */
    s->n_roots--;
    s->text_only = true;
}

/* t's toolchain. Not thread-safe while compilers are still being loaded
 * (the look-ups run before the builds start). */
void warm_toolchain_make(warm *w, const tuple *t, toolchain *k)
{
    memset(k, 0, sizeof *k);
    const char *why;
    k->c = warm_compiler_for(w, t->lang, &why);
    k->dev = k->c ? k->c->find(k->c->impl, t->item.tuple.device.ptr, t->item.tuple.device.len) : -1;
    if (k->c && k->dev >= 0) k->c->version(k->c->impl, k->dev, k->version, sizeof k->version);
    const cckey_tuple *tp = &t->item.tuple;
    k->flags_ok = warm_flags_make(tp->options, tp->n_options, t->lang == CCKEY_LANG_CUDA, &k->flags, k->flags_why,
                                   sizeof k->flags_why) == 0;
    if (k->flags_ok && warm_search_make(&w->deps, &k->flags, t->root, &k->search, k->flags_why,
                                        sizeof k->flags_why) != 0) {
        warm_flags_free(&k->flags);
        k->flags_ok = false;
    }
    if (k->flags_ok && (t->lang == CCKEY_LANG_GLSL || t->lang == CCKEY_LANG_HLSL)) shader_search(&k->search);
}

/* The look-up that serves an entry only when its headers and toolchain are
 * what this run would compile with (see cckey_store_get_checked). */
cckey_lookup warm_toolchain_lookup(const toolchain *k, cckey_dep_memo *memo)
{
    bool here = k->c && k->dev >= 0;
    return (cckey_lookup){.compiler = here ? k->c->tool : NULL, .version = here ? k->version : NULL,
                          .options = k->flags_ok ? (const char *const *)k->flags.argv : NULL,
                          .n_options = k->flags.argc, .roots = k->search.roots, .n_roots = k->search.n_roots,
                          .memo = memo};
}

void warm_toolchain_free(toolchain *k)
{
    if (k->flags_ok) warm_flags_free(&k->flags);
}

/* Group the tuples still to compile, and resolve each group's device; a
 * group with no compiler or device fails here. */
int warm_plan(warm *w)
{
    size_t n_todo = 0;
    size_t *todo = malloc((w->n ? w->n : 1) * sizeof *todo);
    w->g = calloc(w->n ? w->n : 1, sizeof *w->g);
    if (!todo || !w->g) {
        free(todo);
        return -1;
    }
    for (size_t i = 0; i < w->n; i++)
        if (w->t[i].state == T_PENDING) todo[n_todo++] = i;
    qsort_r(todo, n_todo, sizeof *todo, by_build, w->t);
    for (size_t i = 0; i < n_todo;) {
        size_t j = i + 1;
        while (j < n_todo && same_build(&w->t[todo[i]], &w->t[todo[j]])) j++;
        tuple *first = &w->t[todo[i]];
        const char *why = "";
        warm_compiler *c = warm_compiler_for(w, first->lang, &why);
        int dev = c ? c->find(c->impl, first->item.tuple.device.ptr, first->item.tuple.device.len) : -1;
        if (!c || dev < 0) {
            char avail[2048] = "";
            if (c) c->names(c->impl, avail, sizeof avail);
            for (size_t k = i; k < j; k++) {
                tuple *t = &w->t[todo[k]];
                if (!c)
                    warm_fail(t, "cannot compile %s here: %s", scan_lang_name(t->lang), why);
                else
                    warm_fail(t, "no %s device here is \"%.*s\" (available: %s)", c->what,
                         (int)(t->item.tuple.device.len > 200 ? 200 : t->item.tuple.device.len),
                         (const char *)t->item.tuple.device.ptr, *avail ? avail : "none");
            }
        } else {
            group *g = &w->g[w->n_groups++];
            g->members = malloc((j - i) * sizeof *g->members);
            if (!g->members) {
                free(todo);
                return -1;
            }
            memcpy(g->members, todo + i, (j - i) * sizeof *todo);
            for (size_t k = i; k < j; k++) w->t[todo[k]].group = w->n_groups;
            g->n = j - i;
            g->compiler = c;
            g->dev = dev;
        }
        i = j;
    }
    free(todo);
    return 0;
}

/* Keep only this shard's tuples (see shard.h); the units are builds. */
int warm_take_shard(warm *w)
{
    w->n_manifest = w->n;
    if (!w->shard.n || !w->n) return 0;
    size_t *idx = malloc(w->n * sizeof *idx), *unit_of = malloc(w->n * sizeof *unit_of), n_units = 0;
    uint64_t *hash = malloc(w->n * sizeof *hash), *cost = malloc(w->n * sizeof *cost);
    bool *mine = calloc(w->n, sizeof *mine);
    int rc = -1;
    if (!idx || !unit_of || !hash || !cost || !mine) goto out;
    for (size_t i = 0; i < w->n; i++) idx[i] = i;
    qsort_r(idx, w->n, sizeof *idx, by_build, w->t);
    for (size_t i = 0; i < w->n; i++) {
        tuple *t = &w->t[idx[i]];
        if (i == 0 || !same_build(t, &w->t[idx[i - 1]])) {
            /* The unit's hash: its language and key fields 1, 3 and 4 (MD5
             * digests already, so any mixing of them spreads well). */
            uint8_t lang = (uint8_t)t->lang;
            uint64_t h = cli_shard_hash(0, &lang, 1);
            h = cli_shard_hash(h, t->key, 33);
            hash[n_units] = cli_shard_hash(h, t->key + 66, CCKEY_KEY_LEN - 66);
            cost[n_units] = (uint64_t)t->item.tuple.source.len + 1;
            n_units++;
        }
        unit_of[idx[i]] = n_units - 1;
    }
    if (cli_shard_assign(&w->shard, hash, cost, n_units, mine) != 0) goto out;
    size_t kept = 0;
    for (size_t i = 0; i < w->n; i++) {
        if (mine[unit_of[i]]) {
            w->t[kept++] = w->t[i];
        } else {
            manifest_item_clear(&w->t[i].item);
            free(w->t[i].root);
        }
    }
    w->n = kept;
    rc = 0;
out:
    free(idx), free(unit_of), free(hash), free(cost), free(mine);
    return rc;
}

/* Whether each distinct key is cached (locally, else on a remote), with its
 * headers and toolchain as this run would build it. */
void warm_look_up_in(warm *w, cckey_store *s, size_t i, bool again)
{
    tuple *t = &w->t[i];
    if (t->state == T_DUPLICATE) return;
    void *buf;
    size_t len;
    toolchain k;
    warm_toolchain_make(w, t, &k);
    if (!k.flags_ok) {   /* no build could honour them: never served */
        t->miss = CCKEY_MISS_ERROR, t->miss_detail = strdup(k.flags_why);
        warm_fail(t, "options: %s", k.flags_why);
        return;
    }
    cckey_lookup lk = warm_toolchain_lookup(&k, w->memo);
    lk.tuple = &t->item.tuple;
    cckey_lookup_info info;
    cckey_status st = cckey_store_get_info(s, t->key, &lk, &buf, &len, &info);
    t->miss = info.why, t->variants = info.variants, t->variant = info.variant;
    if (st == CCKEY_OK) {
        if (!w->force) t->state = T_CACHED;
        cckey_store_free_buffer(buf);
    } else if (t->miss != CCKEY_MISS_ABSENT) {
        /* Not served: compiled again, and the put replaces the entry. */
        free(t->miss_detail);
        t->miss_detail = strdup(cckey_last_error());   /* this thread's: taken now */
        if (st == CCKEY_ERR_COLLISION && !w->check && !again)
            cli_warn("warm: %s:%zu: %s (key %.40s...); compiling it", w->manifest, t->item.line, t->miss_detail,
                     t->key);
    }
    warm_toolchain_free(&k);
}

void warm_look_up(void *arg, size_t i)
{
    warm *w = arg;
    warm_look_up_in(w, w->probe, i, false);
}

/* Duplicates: a tuple whose key another has stands for it, and shares
 * its fate. */
static int mark_duplicates(warm *w)
{
    size_t *order = malloc((w->n ? w->n : 1) * sizeof *order);
    if (!order) return -1;
    for (size_t i = 0; i < w->n; i++) order[i] = i;
    qsort_r(order, w->n, sizeof *order, by_key, w->t);
    for (size_t k = 1; k < w->n; k++) {
        tuple *t = &w->t[order[k]], *prev = &w->t[order[k - 1]];
        if (strcmp(t->key, prev->key) != 0) continue;
        t->state = T_DUPLICATE;
        t->is_dup = true;
        t->dup_of = prev->is_dup ? prev->dup_of : order[k - 1];
    }
    free(order);
    return 0;
}

int warm_keys(warm *w)
{
    cckey_tuple *tuples = malloc((w->n ? w->n : 1) * sizeof *tuples);
    char (*keys)[CCKEY_KEY_LEN + 1] = malloc((w->n ? w->n : 1) * sizeof *keys);
    if (!tuples || !keys) {
        free(tuples), free(keys);
        cli_error("warm: out of memory");
        return CLI_FAIL;
    }
    for (size_t i = 0; i < w->n; i++) tuples[i] = w->t[i].item.tuple;
    cckey_status st = cckey_make_keys(keys, tuples, w->n, NULL);
    for (size_t i = 0; st == CCKEY_OK && i < w->n; i++) memcpy(w->t[i].key, keys[i], sizeof keys[i]);
    free(tuples), free(keys);
    if (st != CCKEY_OK) {
        cli_error("warm: %s: %s", cckey_strerror(st), cckey_last_error());
        return CLI_FAIL;
    }
    if (warm_take_shard(w) != 0 || mark_duplicates(w) != 0) {
        cli_error("warm: out of memory");
        return CLI_FAIL;
    }
    return CLI_OK;
}

void warm_look_up_all(warm *w, unsigned jobs)
{
    /* Compilers load here, on one thread; the look-ups then only read them. */
    for (size_t i = 0; i < w->n; i++) {
        const char *why;
        warm_compiler_for(w, w->t[i].lang, &why);
    }
    /* In parallel: a remote look-up waits on the network. */
    if (w->probe) cli_parallel_for(w->n, jobs, warm_look_up, w);
    for (size_t i = 0; i < w->n; i++) w->n_cached += w->t[i].state == T_CACHED;
}
