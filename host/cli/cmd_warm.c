/* cckey warm: compile every tuple of a manifest whose key is not cached yet,
 * with the real compiler for its device, and store the binaries under their
 * keys. Tuples that share device, source and options share one build. */
#include "manifest.h"
#include "parallel_for.h"
#include "remote_opts.h"
#include "shard.h"
#include "scan/scan.h"
#include "warm/claims.h"
#include "warm/warm.h"
#include "warm/warm_deps.h"
#include "warm/warm_vulkan.h"

#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { T_PENDING, T_CACHED, T_COMPILED, T_FAILED, T_DUPLICATE, T_EVICTED };

/* Failures listed in full before the rest are only counted (see -v). */
#define SHOWN_FAILURES 50

typedef struct tuple {
    manifest_item item;
    char key[CCKEY_KEY_LEN + 1];
    char *root;           /* the source's folder (real path): the first include root */
    cckey_lang lang;
    int state;
    char *why;            /* T_FAILED: the reason */
    bool is_dup;          /* another tuple has the same key and stands for it: */
    size_t dup_of;        /* that one */
    cckey_miss miss;      /* what the look-up found (CCKEY_MISS_NONE: a hit) */
    char *miss_detail;    /* its detail, for a miss other than absent */
    uint32_t variants;    /* the builds its entry holds (after the put, when compiled) */
    uint32_t variant;     /* the build a hit served: 0 the newest */
    const char *deps_how; /* compiled: how its headers were found (warm_deps.h) */
    size_t group;         /* 1 + the index of its build group; 0 for none */
} tuple;

typedef struct group {
    size_t *members;      /* tuple indices */
    size_t n;
    cckey_compiler *compiler;
    int dev;
    char *log;            /* the compiler's log, kept for the summary */
    bool log_shown;
} group;

typedef struct warm {
    const char *manifest;
    size_t max_line;   /* manifest lines longer than this are refused */
    tuple *t;
    size_t n;
    group *g;
    size_t n_groups;
    cckey_store *store;
    cckey_compiler opencl, cuda, glsl, hlsl;
    char opencl_why[512], cuda_why[512], vulkan_why[512];
    int have_opencl, have_cuda, have_glsl, have_hlsl;   /* -1 unknown, 0 no, 1 yes */
    atomic_size_t next_group, groups_done, tuples_done, n_compiled, n_failed;
    atomic_size_t n_elsewhere;   /* stored by another warm while this one waited for its claim */
    atomic_size_t building;      /* builds compiling now */
    warm_claims claims;          /* builds other warms of this folder are compiling */
    pthread_mutex_t defer_mu;    /* guards deferred: builds another warm had claimed when tried */
    size_t *deferred, n_deferred, next_deferred;
    cckey_store *local;          /* the folder alone (read-only): what another warm just stored */
    atomic_uint_fast64_t bytes_done;
    cckey_dep_memo *memo;     /* header digests, shared by look-ups and builds */
    warm_deps_cfg deps;       /* how builds' headers are found (--deps, --preprocessor) */
    uint64_t max_bytes;
    size_t n_cached;          /* found in the store (checked) before building */
    bool verbose;
    cli_shard shard;
    size_t n_manifest;    /* tuples in the manifest, before sharding */
    unsigned jobs;
    cli_format fmt;       /* of the summary */
    bool check;           /* --check: look up only; store is read-only */
    bool force;           /* --force: compile every tuple, cached or not */
    cckey_store *probe;   /* where look-ups go: store, a read-only handle of its
                             folder (--force --format jsonl), or NULL (none) */
    warm_deps_mode deps_mode;   /* --deps */
    const char *pp;             /* --preprocessor, NULL: clang on PATH */
} warm;

/* Exit status of --check when any tuple is not cached. */
enum { WARM_NOT_WARM = 3 };

/* What a tuple's build reads and is checked against: the toolchain (when
 * its compiler and device are here), the flags and the folders searched. */
typedef struct toolchain {
    cckey_compiler *c;
    int dev;
    char version[512];
    cckey_flags flags;
    bool flags_ok;
    char flags_why[512];
    warm_search search;
} toolchain;

static void fail(tuple *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(tuple *t, const char *fmt, ...)
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

static cckey_lang lang_of(const manifest_item *it, char *err, size_t err_len)
{
    /* As C strings: a \u0000 ends the name, as it did when jansson read it. */
    if (it->language_kind != MJ_NONE) {
        char *name = it->language_kind == MJ_STRING ? strndup(it->language.ptr, it->language.len) : NULL;
        cckey_lang lang = name ? cckey_lang_from_name(name) : CCKEY_LANG_NONE;
        free(name);
        if (!lang) snprintf(err, err_len, "\"language\" must be one of opencl, cuda, hip, metal, glsl, hlsl");
        return lang;
    }
    char *path = it->source_file.ptr ? strndup(it->source_file.ptr, it->source_file.len) : NULL;
    cckey_lang lang = path ? cckey_lang_of_path(path) : CCKEY_LANG_NONE;
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
static int load(warm *w, manifest_files *files)
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

static cckey_compiler *compiler_for(warm *w, cckey_lang lang, const char **why)
{
    if (lang == CCKEY_LANG_OPENCL) {
        if (w->have_opencl < 0)
            w->have_opencl = cckey_compiler_opencl(&w->opencl, w->opencl_why, sizeof w->opencl_why) == 0;
        *why = w->opencl_why;
        return w->have_opencl ? &w->opencl : NULL;
    }
    if (lang == CCKEY_LANG_CUDA) {
        if (w->have_cuda < 0) w->have_cuda = cckey_compiler_cuda(&w->cuda, w->cuda_why, sizeof w->cuda_why) == 0;
        *why = w->cuda_why;
        return w->have_cuda ? &w->cuda : NULL;
    }
    if (lang == CCKEY_LANG_GLSL || lang == CCKEY_LANG_HLSL) {
        bool glsl = lang == CCKEY_LANG_GLSL;
        int *have = glsl ? &w->have_glsl : &w->have_hlsl;
        if (*have < 0)
            *have = (glsl ? cckey_compiler_glsl : cckey_compiler_hlsl)(glsl ? &w->glsl : &w->hlsl, w->vulkan_why,
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
static void toolchain_make(warm *w, const tuple *t, toolchain *k)
{
    memset(k, 0, sizeof *k);
    const char *why;
    k->c = compiler_for(w, t->lang, &why);
    k->dev = k->c ? k->c->find(k->c->impl, t->item.tuple.device.ptr, t->item.tuple.device.len) : -1;
    if (k->c && k->dev >= 0) k->c->version(k->c->impl, k->dev, k->version, sizeof k->version);
    const cckey_tuple *tp = &t->item.tuple;
    k->flags_ok = cckey_flags_make(tp->options, tp->n_options, t->lang == CCKEY_LANG_CUDA, &k->flags, k->flags_why,
                                   sizeof k->flags_why) == 0;
    if (k->flags_ok && warm_search_make(&w->deps, &k->flags, t->root, &k->search, k->flags_why,
                                        sizeof k->flags_why) != 0) {
        cckey_flags_free(&k->flags);
        k->flags_ok = false;
    }
    if (k->flags_ok && (t->lang == CCKEY_LANG_GLSL || t->lang == CCKEY_LANG_HLSL)) shader_search(&k->search);
}

/* The look-up that serves an entry only when its headers and toolchain are
 * what this run would compile with (see cckey_store_get_checked). */
static cckey_lookup toolchain_lookup(const toolchain *k, cckey_dep_memo *memo)
{
    bool here = k->c && k->dev >= 0;
    return (cckey_lookup){.compiler = here ? k->c->tool : NULL, .version = here ? k->version : NULL,
                          .options = k->flags_ok ? (const char *const *)k->flags.argv : NULL,
                          .n_options = k->flags.argc, .roots = k->search.roots, .n_roots = k->search.n_roots,
                          .memo = memo};
}

static void toolchain_free(toolchain *k)
{
    if (k->flags_ok) cckey_flags_free(&k->flags);
}

/* Group the tuples still to compile, and resolve each group's device; a
 * group with no compiler or device fails here. */
static int plan(warm *w)
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
        cckey_compiler *c = compiler_for(w, first->lang, &why);
        int dev = c ? c->find(c->impl, first->item.tuple.device.ptr, first->item.tuple.device.len) : -1;
        if (!c || dev < 0) {
            char avail[2048] = "";
            if (c) c->names(c->impl, avail, sizeof avail);
            for (size_t k = i; k < j; k++) {
                tuple *t = &w->t[todo[k]];
                if (!c)
                    fail(t, "cannot compile %s here: %s", cckey_lang_name(t->lang), why);
                else
                    fail(t, "no %s device here is \"%.*s\" (available: %s)", c->what,
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

static void fail_group(warm *w, group *g, const char *what, const char *why)
{
    for (size_t k = 0; k < g->n; k++) fail(&w->t[g->members[k]], "%s%s", what, why);
}

/* The group's build. Shaders are built under their source_file's name, so
 * that the compiler's messages say FILE:LINE. */
static int build(const tuple *first, const group *g, const cckey_flags *flags, const char *const *names,
                 bool *present, cckey_build *b)
{
    const cckey_tuple *tp = &first->item.tuple;
    const char *src = tp->source.ptr ? tp->source.ptr : "";
    if (first->lang != CCKEY_LANG_GLSL && first->lang != CCKEY_LANG_HLSL)
        return g->compiler->build(g->compiler->impl, g->dev, src, tp->source.len, flags, names, g->n, present, b);
    char file[PATH_MAX];
    const cckey_bytes *sf = &first->item.source_file;
    if (sf->ptr) snprintf(file, sizeof file, "%.*s", (int)sf->len, (const char *)sf->ptr);
    else snprintf(file, sizeof file, "%s", first->lang == CCKEY_LANG_GLSL ? "source.comp" : "source.hlsl");
    return cckey_vulkan_build(g->compiler, g->dev, file, src, tp->source.len, flags, names, g->n, present, b);
}

/* Compile the group's source once, with its folder as the first include
 * folder, and store the binary under each member's key with what the build
 * read (headers, toolchain), read just before it ran. */
static void run_group(warm *w, group *g)
{
    tuple *first = &w->t[g->members[0]];
    const cckey_tuple *tp = &first->item.tuple;
    bool cuda = first->lang == CCKEY_LANG_CUDA;
    toolchain k;
    toolchain_make(w, first, &k);
    cckey_flags flags = {0};
    warm_deps deps = {0};
    char why[1024];
    const char **names = calloc(g->n, sizeof *names);
    bool *present = calloc(g->n, sizeof *present);
    char **owned = calloc(g->n, sizeof *owned);
    if (!k.flags_ok) {
        fail_group(w, g, "options: ", k.flags_why);
        goto out;
    }
    if (cckey_flags_include(&k.flags, (const char *const *)&first->root, 1, cuda, &flags, why, sizeof why) != 0) {
        fail_group(w, g, "options: ", why);
        goto out;
    }
    char name[1024];
    warm_source_name(name, sizeof name, first->item.source_file.ptr, first->item.source_file.len, w->manifest,
                     first->item.line);
    if (warm_deps_find(&w->deps, &k.search, &flags, cuda, k.version, tp->source.ptr ? tp->source.ptr : "",
                       tp->source.len, name, w->memo, &deps, why, sizeof why) != 0) {
        fail_group(w, g, "reading its includes: ", why);
        goto out;
    }
    if (!names || !present || !owned) {
        fail_group(w, g, "out of memory", "");
        goto out;
    }
    for (size_t i = 0; i < g->n; i++) {
        const cckey_bytes *nm = &w->t[g->members[i]].item.tuple.name;
        owned[i] = strndup(nm->len ? nm->ptr : "", nm->len);
        names[i] = owned[i] ? owned[i] : "";
    }
    cckey_build b;
    if (build(first, g, &flags, names, present, &b) != 0) {
        fail_group(w, g, "build failed: ", b.error);
    } else {
        cckey_entry_meta meta = {k.c->tool, k.version, (const char *const *)k.flags.argv, k.flags.argc, deps.r.deps,
                                 deps.r.n, NULL};
        cckey_put_options put = {.unverified = deps.unverified[0] ? deps.unverified : NULL};
        for (size_t i = 0; i < g->n; i++) {
            tuple *t = &w->t[g->members[i]];
            if (!owned[i] || strlen(owned[i]) != t->item.tuple.name.len) {
                fail(t, "the entry point's name holds a NUL byte");
            } else if (!present[i]) {
                fail(t, "the built program has no entry point \"%s\"", names[i]);
            } else if ((meta.tuple = &t->item.tuple,
                        cckey_store_put_ex(w->store, t->key, b.binary, b.binary_len, &meta, &put)) != CCKEY_OK) {
                fail(t, "storing the binary: %s", cckey_last_error());
            } else {
                t->state = T_COMPILED;
                t->variants = put.variants, t->variant = 0, t->deps_how = deps.how;
            }
        }
    }
    g->log = b.log;
    b.log = NULL;
    cckey_build_clear(&b);
out:
    for (size_t i = 0; i < g->n; i++) {
        int st = w->t[g->members[i]].state;
        atomic_fetch_add(st == T_COMPILED ? &w->n_compiled : &w->n_failed, 1);
    }
    for (size_t i = 0; owned && i < g->n; i++) free(owned[i]);
    free(owned), free(names), free(present);
    warm_deps_free(&deps);
    cckey_flags_free(&flags);
    toolchain_free(&k);
}

/* Keep only this shard's tuples (see shard.h); the units are builds. */
static int take_shard(warm *w)
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
static void look_up_in(warm *w, cckey_store *s, size_t i, bool again)
{
    tuple *t = &w->t[i];
    if (t->state == T_DUPLICATE) return;
    void *buf;
    size_t len;
    toolchain k;
    toolchain_make(w, t, &k);
    if (!k.flags_ok) {   /* no build could honour them: never served */
        t->miss = CCKEY_MISS_ERROR, t->miss_detail = strdup(k.flags_why);
        fail(t, "options: %s", k.flags_why);
        return;
    }
    cckey_lookup lk = toolchain_lookup(&k, w->memo);
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
    toolchain_free(&k);
}

static void look_up(void *arg, size_t i)
{
    warm *w = arg;
    look_up_in(w, w->probe, i, false);
}

/* ---- builds claimed while they compile (warm/claims.h) ------------------- */

/* A build's claim name: an MD5 of what makes it one build (by_build). */
static void claim_id(const warm *w, const group *g, char id[CCKEY_HEX_LEN + 1])
{
    const tuple *t = &w->t[g->members[0]];
    uint8_t lang = (uint8_t)t->lang;
    cckey_digest d;
    cckey_digest_init(&d);
    cckey_digest_update(&d, &lang, 1);
    cckey_digest_update(&d, t->key, 33);
    if (t->lang == CCKEY_LANG_HLSL) cckey_digest_update(&d, t->key + 33, 33);
    cckey_digest_update(&d, t->key + 66, CCKEY_KEY_LEN - 66);
    cckey_digest_update(&d, t->root, strlen(t->root) + 1);
    cckey_digest_final(&d, id, NULL);
}

/* With the build's claim held after a wait: what the other warm stored in
 * the folder meanwhile is a hit now, and only the rest are built. */
static void drop_stored(warm *w, group *g)
{
    if (w->force || !w->local) return;
    size_t kept = 0;
    for (size_t k = 0; k < g->n; k++) {
        tuple *t = &w->t[g->members[k]];
        /* A miss keeps what the first look-up found (--format jsonl's
         * reason): the second sees only what that one left. */
        tuple before = *t;
        t->miss_detail = NULL;
        look_up_in(w, w->local, g->members[k], true);
        if (t->state == T_CACHED) {
            free(before.miss_detail);
            atomic_fetch_add(&w->n_elsewhere, 1);
            continue;
        }
        free(t->miss_detail);
        t->miss = before.miss, t->miss_detail = before.miss_detail;
        t->variants = before.variants, t->variant = before.variant;
        g->members[kept++] = g->members[k];
    }
    g->n = kept;
}

static void build_group(warm *w, group *g)
{
    size_t n = g->n, bytes = w->t[g->members[0]].item.tuple.source.len;
    atomic_fetch_add(&w->building, 1);
    if (g->n) run_group(w, g);
    atomic_fetch_sub(&w->building, 1);
    atomic_fetch_add(&w->bytes_done, bytes);
    atomic_fetch_add(&w->tuples_done, n);
    atomic_fetch_add(&w->groups_done, 1);
}

/* Build group i unless another warm holds its claim (then false: it is
 * deferred). wait: take the claim however long its holder compiles. */
static bool claim_and_build(warm *w, size_t i, bool wait)
{
    group *g = &w->g[i];
    char id[CCKEY_HEX_LEN + 1];
    claim_id(w, g, id);
    warm_claim cl;
    warm_claim_result r = wait ? warm_claim_wait(&w->claims, id, &cl)
                               : warm_claim_try(&w->claims, id, &cl, NULL, 0);
    if (r == WARM_CLAIM_BUSY) {
        pthread_mutex_lock(&w->defer_mu);
        w->deferred[w->n_deferred++] = i;
        pthread_mutex_unlock(&w->defer_mu);
        return false;
    }
    /* Taken at once: the look-up before is as fresh as a look-up now, save
     * for a holder that finished just before; a second local look-up
     * settles that too, and costs microseconds. */
    if (r == WARM_CLAIM_TAKEN) drop_stored(w, g);
    build_group(w, g);
    warm_claim_release(&cl);
    return true;
}

static bool next_deferred(warm *w, size_t *i)
{
    pthread_mutex_lock(&w->defer_mu);
    bool any = w->next_deferred < w->n_deferred;
    if (any) *i = w->deferred[w->next_deferred++];
    pthread_mutex_unlock(&w->defer_mu);
    return any;
}

/* Each build in turn; those another warm is compiling come last, and wait
 * for it, so that its binaries serve here instead of a second build. */
static void *worker(void *arg)
{
    warm *w = arg;
    size_t i;
    while ((i = atomic_fetch_add(&w->next_group, 1)) < w->n_groups) claim_and_build(w, i, false);
    while (next_deferred(w, &i)) claim_and_build(w, i, true);
    return NULL;
}

/* One line for n tuples that failed alike, t the first of them. */
static void show_failure(warm *w, tuple *t, size_t n)
{
    int nl = (int)(t->item.tuple.name.len > 200 ? 200 : t->item.tuple.name.len);
    int dl = (int)(t->item.tuple.device.len > 200 ? 200 : t->item.tuple.device.len);
    const char *why = t->why ? t->why : "failed";
    if (n > 1)
        fprintf(stderr, "cckey: warm: %zu tuples: %s (first: %s:%zu: %.*s on \"%.*s\")\n", n, why, w->manifest,
                t->item.line, nl, (const char *)t->item.tuple.name.ptr, dl, (const char *)t->item.tuple.device.ptr);
    else
        fprintf(stderr, "cckey: warm: %s:%zu: %.*s on \"%.*s\": %s\n", w->manifest, t->item.line, nl,
                (const char *)t->item.tuple.name.ptr, dl, (const char *)t->item.tuple.device.ptr, why);
    group *g = t->group ? &w->g[t->group - 1] : NULL;
    if (g && !g->log_shown && g->log && *g->log) {
        fprintf(stderr, "    compiler log:\n");
        cli_put_log(g->log);
        g->log_shown = true;
    }
}

/* Tuples fail alike when their reasons are the same text and, for a
 * compiler's error, they were one build: its log is shown once, and two
 * builds' logs are never folded into one. */
static size_t log_of(const warm *w, const tuple *t)
{
    const group *g = t->group ? &w->g[t->group - 1] : NULL;
    return g && g->log && *g->log ? t->group : 0;
}

static int alike(const warm *w, const tuple *x, const tuple *y)
{
    int c = strcmp(x->why ? x->why : "", y->why ? y->why : "");
    size_t a = log_of(w, x), b = log_of(w, y);
    return c ? c : (a > b) - (a < b);
}

static int by_reason(const void *a, const void *b, void *arg)
{
    const warm *w = arg;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    int c = alike(w, &w->t[x], &w->t[y]);
    return c ? c : (x > y) - (x < y);
}

static int by_first(const void *a, const void *b)
{
    size_t x = ((const size_t *)a)[0], y = ((const size_t *)b)[0];
    return (x > y) - (x < y);
}

/* The failures: one line for each reason, in the order of their first
 * tuples ("30 tuples: no OpenCL device here is ..."), SHOWN_FAILURES lines
 * at most; -v lists every tuple on its own line, --format jsonl has each
 * too. Returns how many failed. */
static size_t show_failures(warm *w)
{
    size_t n = 0, runs = 0, shown = 0;
    for (size_t i = 0; i < w->n; i++) n += w->t[i].state == T_FAILED;
    size_t *f = malloc((n ? n : 1) * sizeof *f), (*run)[2] = malloc((n ? n : 1) * sizeof *run);
    if (!f || !run) {
        free(f), free(run);
        if (n) cli_error("warm: %zu tuples failed (out of memory listing them)", n);
        return n;
    }
    for (size_t i = 0, k = 0; i < w->n; i++)
        if (w->t[i].state == T_FAILED) f[k++] = i;
    if (!w->verbose) qsort_r(f, n, sizeof *f, by_reason, w);
    for (size_t i = 0; i < n; i++) {
        if (w->verbose || !i || alike(w, &w->t[f[i]], &w->t[f[i - 1]])) run[runs][0] = f[i], run[runs++][1] = 0;
        run[runs - 1][1]++;
    }
    qsort(run, runs, sizeof *run, by_first);
    for (size_t r = 0; r < runs && (r < SHOWN_FAILURES || w->verbose); r++) {
        show_failure(w, &w->t[run[r][0]], run[r][1]);
        shown += run[r][1];
    }
    if (shown < n)
        fprintf(stderr, "cckey: warm: ... and %zu more failed tuples (-v lists them all)\n", n - shown);
    free(f), free(run);
    return n;
}

/* --max-size smaller than what was warmed: later puts evicted earlier
 * entries. Those tuples are not cached at the end, and the summary says so
 * rather than calling the run complete. */
static size_t mark_evicted(warm *w)
{
    size_t n = 0;
    cckey_store_usage u;
    /* The limit in force: --max-size, else the folder's own. */
    if (cckey_store_stats(w->store, &u) != CCKEY_OK || !u.max_bytes) return 0;
    w->max_bytes = u.max_bytes;
    for (size_t i = 0; i < w->n; i++) {
        tuple *t = &w->t[i];
        if (t->state != T_COMPILED && t->state != T_CACHED) continue;
        void *buf;
        size_t len;
        if (cckey_store_get(w->store, t->key, &buf, &len) == CCKEY_OK) {
            cckey_store_free_buffer(buf);
            continue;
        }
        t->state = T_EVICTED;
        n++;
    }
    return n;
}

/* ---- what became of each tuple (--format jsonl, --check) ---------------- */

static const tuple *rep_of(const warm *w, const tuple *t) { return t->is_dup ? &w->t[t->dup_of] : t; }

/* Reasons for a miss, indexed by cckey_miss: as JSON, and in words. */
static const char *const miss_json[] = {"hit", "absent", "header_changed", "toolchain_changed", "corrupt",
                                        "unknown_record", "error", "collision", "unverified"};
static const char *const miss_words[] = {"cached", "not in the store", "a header changed", "the toolchain changed",
                                         "the entry is corrupt", "the entry needs a newer cckey",
                                         "the look-up failed", "the entry is for another tuple (MD5 collision?)",
                                         "its headers were not all known when it was built"};
_Static_assert(sizeof miss_json / sizeof *miss_json == CCKEY_MISS_UNVERIFIED + 1, "a reason for every cckey_miss");
_Static_assert(sizeof miss_words / sizeof *miss_words == CCKEY_MISS_UNVERIFIED + 1, "a reason for every cckey_miss");

static const char *result_of(const warm *w, const tuple *t)
{
    const tuple *r = rep_of(w, t);
    if (t->state == T_FAILED || r->state == T_FAILED) return "failed";
    if (w->check) return r->miss == CCKEY_MISS_NONE ? "cached" : "not_compiled";
    switch (r->state) {
    case T_CACHED: return "cached";
    case T_COMPILED: return "compiled";
    case T_EVICTED: return "evicted";
    default: return "not_compiled";
    }
}

/* One tuple as a JSON object, then end: its manifest line, name, device,
 * key, the look-up's verdict and what became of it. */
static void put_tuple_json(const warm *w, const tuple *t, const char *end)
{
    const tuple *r = rep_of(w, t);
    const cckey_tuple *tp = &t->item.tuple;
    printf("{\"line\": %zu, \"name\": ", t->item.line);
    cli_put_json_string(stdout, tp->name.ptr, tp->name.len);
    fputs(", \"device\": ", stdout);
    cli_put_json_string(stdout, tp->device.ptr, tp->device.len);
    printf(", \"key\": \"%s\", \"status\": \"%s\"", t->key, r->miss == CCKEY_MISS_NONE ? "hit" : "miss");
    if (r->miss != CCKEY_MISS_NONE) printf(", \"reason\": \"%s\"", miss_json[r->miss]);
    if (r->miss_detail) {
        fputs(", \"detail\": ", stdout);
        cli_put_json_string(stdout, r->miss_detail, strlen(r->miss_detail));
    }
    const char *result = result_of(w, t);
    printf(", \"result\": \"%s\"", result);
    warm_json_builds(r->variants, r->state != T_COMPILED && r->miss == CCKEY_MISS_NONE, r->variant,
                     r->state == T_COMPILED ? r->deps_how : NULL);
    const char *err = t->why ? t->why : r->why;
    if (strcmp(result, "failed") == 0 && err) {
        fputs(", \"error\": ", stdout);
        cli_put_json_string(stdout, err, strlen(err));
    }
    const char *inc[2], *field = ", \"toolkit_include\": ";   /* NVRTC's toolkit headers */
    if (t->lang == CCKEY_LANG_CUDA) cli_put_json_strings(stdout, field, inc, cckey_nvrtc_toolkit_include(inc, 2));
    printf("}%s", end);
}

/* --check: the tuples a warm would compile, and 3 when there are any. */
static int report_check(warm *w)
{
    size_t dup = 0, cached = 0, uncached = 0;
    for (size_t i = 0; i < w->n; i++) {
        const tuple *t = &w->t[i];
        if (t->is_dup) dup++;
        else if (t->miss == CCKEY_MISS_NONE) cached++;
        else uncached++;
    }
    if (w->fmt == CLI_JSONL) {
        for (size_t i = 0; i < w->n; i++) put_tuple_json(w, &w->t[i], "\n");
    } else if (w->fmt == CLI_JSON) {
        printf("{\n  \"tuples\": %zu,\n  \"distinct_keys\": %zu,\n  \"cached\": %zu,\n  \"uncached\": %zu,\n"
               "  \"would_compile\": [", w->n, w->n - dup, cached, uncached);
        const char *sep = "\n    ";
        for (size_t i = 0; i < w->n; i++) {
            if (rep_of(w, &w->t[i])->miss == CCKEY_MISS_NONE) continue;
            fputs(sep, stdout);
            put_tuple_json(w, &w->t[i], "");
            sep = ",\n    ";
        }
        printf("%s]\n}\n", uncached ? "\n  " : "");
    } else {
        for (size_t i = 0; i < w->n; i++) {
            const tuple *t = &w->t[i], *r = rep_of(w, t);
            if (r->miss == CCKEY_MISS_NONE) continue;
            const cckey_tuple *tp = &t->item.tuple;
            printf("%s:%zu: %.*s on \"%.*s\": %s%s%s%s\n", w->manifest, t->item.line,
                   (int)(tp->name.len > 200 ? 200 : tp->name.len), (const char *)tp->name.ptr,
                   (int)(tp->device.len > 200 ? 200 : tp->device.len), (const char *)tp->device.ptr,
                   miss_words[r->miss], r->miss_detail ? " (" : "", r->miss_detail ? r->miss_detail : "",
                   r->miss_detail ? ")" : "");
        }
        printf("warm --check: %zu tuple%s (%zu distinct key%s): %zu cached, %zu not cached%s\n", w->n,
               w->n == 1 ? "" : "s", w->n - dup, w->n - dup == 1 ? "" : "s", cached, uncached,
               uncached ? " (would be compiled)" : "");
    }
    fflush(stdout);
    return uncached ? WARM_NOT_WARM : CLI_OK;
}

static int summary(warm *w)
{
    size_t compiled = atomic_load(&w->n_compiled), cached = w->n_cached + atomic_load(&w->n_elsewhere);
    size_t failed = show_failures(w), dup = 0, evicted = 0;
    for (size_t i = 0; i < w->n; i++) dup += w->t[i].state == T_DUPLICATE, evicted += w->t[i].state == T_EVICTED;
    if (evicted)
        fprintf(stderr, "cckey: warm: the size limit of %llu bytes cannot hold the warmed set: %zu entr%s compiled or "
                "found in this run %s evicted again (a partial result; raise --max-size or the folder's max-size)\n",
                (unsigned long long)w->max_bytes, evicted, evicted == 1 ? "y" : "ies", evicted == 1 ? "was" : "were");
    if (w->fmt == CLI_JSONL) {
        for (size_t i = 0; i < w->n; i++) put_tuple_json(w, &w->t[i], "\n");
        fflush(stdout);
        return failed || evicted ? CLI_FAIL : CLI_OK;
    }
    if (w->fmt == CLI_JSON) {
        /* One summary object. */
        const char *sep = "\n  ", *end = "\n";
        printf("{%s\"tuples\": %zu,%s\"distinct_keys\": %zu,%s\"compiled\": %zu,%s\"builds\": %zu,%s"
               "\"cached\": %zu,%s\"failed\": %zu,%s\"evicted\": %zu", sep, w->n, sep, w->n - dup, sep, compiled, sep,
               w->n_groups, sep, cached, sep, failed, sep, evicted);
        if (w->shard.n)
            printf(",%s\"shard\": {\"index\": %u, \"count\": %u, \"manifest_tuples\": %zu}", sep, w->shard.k,
                   w->shard.n, w->n_manifest);
        warm_deps_json(&w->deps, sep);
        printf("%s}\n", end);
        fflush(stdout);
        return failed || evicted ? CLI_FAIL : CLI_OK;
    }
    if (w->shard.n)
        printf("warm: shard %u/%u: %zu of the manifest's %zu tuples\n", w->shard.k, w->shard.n, w->n, w->n_manifest);
    printf("warm: %zu tuple%s (%zu distinct key%s): %zu compiled in %zu build%s, %zu already cached, %zu failed",
           w->n, w->n == 1 ? "" : "s", w->n - dup, w->n - dup == 1 ? "" : "s", compiled, w->n_groups,
           w->n_groups == 1 ? "" : "s", cached, failed);
    if (evicted) printf(", %zu evicted by --max-size", evicted);
    printf("\n");
    fflush(stdout);
    return failed || evicted ? CLI_FAIL : CLI_OK;
}

static int run(warm *w, unsigned jobs, bool quiet)
{
    manifest_files files = {0};
    int rc = load(w, &files);
    if (rc != CLI_OK) goto out;

    /* Keys, then what is cached already. */
    cckey_tuple *tuples = malloc((w->n ? w->n : 1) * sizeof *tuples);
    char (*keys)[CCKEY_KEY_LEN + 1] = malloc((w->n ? w->n : 1) * sizeof *keys);
    size_t *order = malloc((w->n ? w->n : 1) * sizeof *order);
    if (!tuples || !keys || !order) {
        free(tuples), free(keys), free(order);
        cli_error("warm: out of memory");
        rc = CLI_FAIL;
        goto out;
    }
    for (size_t i = 0; i < w->n; i++) tuples[i] = w->t[i].item.tuple;
    cckey_status st = cckey_make_keys(keys, tuples, w->n, NULL);
    for (size_t i = 0; st == CCKEY_OK && i < w->n; i++) memcpy(w->t[i].key, keys[i], sizeof keys[i]);
    free(tuples), free(keys);
    if (st != CCKEY_OK) {
        free(order);
        cli_error("warm: %s: %s", cckey_strerror(st), cckey_last_error());
        rc = CLI_FAIL;
        goto out;
    }
    if (take_shard(w) != 0) {
        free(order);
        cli_error("warm: out of memory");
        rc = CLI_FAIL;
        goto out;
    }
    for (size_t i = 0; i < w->n; i++) order[i] = i;
    qsort_r(order, w->n, sizeof *order, by_key, w->t);
    for (size_t k = 0; k < w->n; k++) {
        tuple *t = &w->t[order[k]];
        if (k && strcmp(t->key, w->t[order[k - 1]].key) == 0) {
            tuple *prev = &w->t[order[k - 1]];
            t->state = T_DUPLICATE;
            t->is_dup = true;
            t->dup_of = prev->is_dup ? prev->dup_of : order[k - 1];
        }
    }
    free(order);
    /* Compilers load here, on one thread; the look-ups then only read them. */
    for (size_t i = 0; i < w->n; i++) {
        const char *why;
        compiler_for(w, w->t[i].lang, &why);
    }
    /* In parallel: a remote look-up waits on the network. */
    if (w->probe) cli_parallel_for(w->n, jobs, look_up, w);
    for (size_t i = 0; i < w->n; i++) w->n_cached += w->t[i].state == T_CACHED;
    if (w->check) {
        rc = report_check(w);
        goto out;
    }

    if (plan(w) != 0) {
        cli_error("warm: out of memory");
        rc = CLI_FAIL;
        goto out;
    }
    uint64_t total_bytes = 0;
    for (size_t i = 0; i < w->n_groups; i++) total_bytes += w->t[w->g[i].members[0]].item.tuple.source.len;
    if (jobs > w->n_groups) jobs = (unsigned)w->n_groups;
    /* No compiler or device: failed in plan(). Counted before the workers
     * start, since they write the states of the tuples they build. */
    size_t failed_early = 0;
    for (size_t i = 0; i < w->n; i++) failed_early += w->t[i].state == T_FAILED;
    /* Tuples settled before any build (cached, duplicates, failed early),
     * counted before the workers change the groups. */
    size_t settled = w->n;
    for (size_t i = 0; i < w->n_groups; i++) settled -= w->g[i].n;
    w->deferred = malloc((w->n_groups ? w->n_groups : 1) * sizeof *w->deferred);
    pthread_t *th = w->deferred ? calloc(jobs ? jobs : 1, sizeof *th) : NULL;
    unsigned started = 0;
    for (unsigned i = 0; th && i < jobs; i++)
        if (pthread_create(&th[i], NULL, worker, w) == 0) started++;
    if (started == 0) worker(w);   /* no thread could start: build here */
    cli_progress bar;
    cli_progress_init(&bar, "warm");
    if (quiet) bar.enabled = false;
    char note[160];
    bar.note = note, bar.unit = "tuples", bar.items_total = w->n;
    while (started && atomic_load(&w->groups_done) < w->n_groups) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        snprintf(note, sizeof note, "%zu building, %zu compiled, %zu cached, %zu failed", atomic_load(&w->building),
                 atomic_load(&w->n_compiled), w->n_cached + atomic_load(&w->n_elsewhere),
                 failed_early + atomic_load(&w->n_failed));
        cli_progress_update(&bar, atomic_load(&w->bytes_done), total_bytes,
                            settled + atomic_load(&w->tuples_done) + atomic_load(&w->n_elsewhere));
    }
    for (unsigned i = 0; i < started; i++) pthread_join(th[i], NULL);
    free(th);
    cli_progress_finish(&bar);
    /* A duplicate shares the fate of the tuple that stands for it. */
    for (size_t i = 0; i < w->n; i++) {
        const tuple *rep = &w->t[w->t[i].dup_of];
        if (w->t[i].state == T_DUPLICATE && rep->state == T_FAILED) fail(&w->t[i], "%s", rep->why ? rep->why : "failed");
    }
    mark_evicted(w);
    char note_buf[1400];
    if (warm_deps_report(&w->deps, note_buf, sizeof note_buf)) cli_warn("%s", note_buf);
    rc = summary(w);
out:
    for (size_t i = 0; i < w->n; i++) {
        manifest_item_clear(&w->t[i].item);
        free(w->t[i].why);
        free(w->t[i].miss_detail);
        free(w->t[i].root);
    }
    for (size_t i = 0; i < w->n_groups; i++) free(w->g[i].members), free(w->g[i].log);
    free(w->t), free(w->g), free(w->deferred);
    manifest_files_clear(&files);
    return rc;
}

/* After the options: check them, open the store with its remotes, run. */
/* The handles: --check looks up through a read-only one, so nothing is
 * written, locally or remotely; --force --format jsonl looks up (the local
 * folder only) through a read-only one, to say what it replaces. */
static int open_store(warm *w, const char *dir, uint64_t max_bytes, cli_remotes *remotes)
{
    char why[512];
    if (warm_deps_init(&w->deps, w->deps_mode, w->pp, why, sizeof why) != 0) {
        cli_error("warm: %s", why);
        return CLI_USAGE;
    }
    cckey_status st = w->check ? cckey_store_open_read_only(&w->store, dir) : cckey_store_open(&w->store, dir, max_bytes);
    if (st == CCKEY_OK && w->force && w->fmt == CLI_JSONL) st = cckey_store_open_read_only(&w->probe, dir);
    else if (!w->force) w->probe = w->store;
    if (st != CCKEY_OK || cckey_dep_memo_new(&w->memo) != CCKEY_OK) {
        cli_error("warm: %s", cckey_last_error());
        return CLI_FAIL;
    }
    /* Claims and the folder-only handle that looks behind them; without
     * either, builds go on unclaimed, as they would on a folder that takes
     * no locks. */
    if (!w->check && cckey_store_open_read_only(&w->local, dir) != CCKEY_OK) w->local = NULL;
    w->claims.off = true;
    if (!w->check && w->local) warm_claims_init(&w->claims, dir);
    return cli_remotes_attach(remotes, w->store, dir, "warm");
}

static int start(int argc, char **argv, const char *dir, uint64_t max_bytes, unsigned jobs, bool quiet,
                 const char *shard, unsigned shards, size_t max_line, cli_remotes *remotes, cli_format fmt,
                 bool verbose, bool check, bool force, const warm *deps_opts)
{
    if (argc - optind != 1) {
        cli_error("warm: give exactly one manifest (see 'cckey warm --help')");
        return CLI_USAGE;
    }
    if (!dir || !*dir) {
        cli_error("warm: no cache folder: give --cache-dir DIR (or set CCKEY_CACHE_DIR or HOME)");
        return CLI_USAGE;
    }
    /* PoCL would keep its own copy of every program warm builds (its kernel
     * cache: 968 KB beside a 1,692 KB store for the example suite), which
     * the store makes redundant. PoCL reads only the environment, before it
     * loads. NVRTC has no such cache, and warm loads no module into the
     * driver, so the CUDA JIT cache is never touched. */
    setenv("POCL_KERNEL_CACHE", "0", 0);
    warm w = {.manifest = argv[optind], .max_line = max_line, .have_opencl = -1, .have_cuda = -1, .have_glsl = -1,
              .have_hlsl = -1, .fmt = fmt, .verbose = verbose, .check = check, .force = force,
              .deps_mode = deps_opts->deps_mode, .pp = deps_opts->pp, .defer_mu = PTHREAD_MUTEX_INITIALIZER};
    char why[512];
    if (shards && !shard) {
        cli_error("warm: --shards is for --shard auto");
        return CLI_USAGE;
    }
    if (shard && cli_shard_parse(shard, shards, &w.shard, why, sizeof why) != 0) {
        cli_error("warm: %s", why);
        return CLI_USAGE;
    }
    int rc = open_store(&w, dir, max_bytes, remotes);
    if (rc == CLI_OK) {
        if (!jobs) {
            long n = sysconf(_SC_NPROCESSORS_ONLN);
            jobs = n > 0 ? (unsigned)n : 1;
        }
        rc = run(&w, jobs, quiet);
        if (fmt == CLI_TEXT) cli_remotes_report(w.store, "warm");
    }
    /* The Vulkan devices go before exit: lavapipe frees what it keeps per
     * pipeline only with its device. */
    if (w.have_glsl > 0 || w.have_hlsl > 0) cckey_warm_vulkan_release();
    cckey_dep_memo_free(w.memo);
    warm_deps_end(&w.deps);
    if (w.probe != w.store) cckey_store_close(w.probe);
    cckey_store_close(w.local);
    pthread_mutex_destroy(&w.defer_mu);
    cckey_store_close(w.store);
    return rc;
}

int cckey_cmd_warm(int argc, char **argv)
{
    enum { OPT_DIR = 256, OPT_MAX, OPT_SHARD, OPT_SHARDS, OPT_MAX_LINE, OPT_FORMAT, OPT_JSON, OPT_CHECK, OPT_FORCE,
           OPT_DEPS, OPT_PP };
    static const struct option longopts[] = {
        {"cache-dir", required_argument, NULL, OPT_DIR}, {"max-size", required_argument, NULL, OPT_MAX},
        {"jobs", required_argument, NULL, 'j'},          {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},             {"help", no_argument, NULL, 'h'},
        {"shard", required_argument, NULL, OPT_SHARD},   {"shards", required_argument, NULL, OPT_SHARDS},
                {"format", required_argument, NULL, OPT_FORMAT}, {"json", no_argument, NULL, OPT_JSON},
        {"check", no_argument, NULL, OPT_CHECK},         {"force", no_argument, NULL, OPT_FORCE},
        CLI_REMOTE_LONGOPTS,                             {"max-line", required_argument, NULL, OPT_MAX_LINE},
        {"deps", required_argument, NULL, OPT_DEPS},     {"preprocessor", required_argument, NULL, OPT_PP},
        {NULL, 0, NULL, 0}};
    const char *dir = NULL;
    char default_dir[4096];
    cli_format fmt = CLI_TEXT;
    uint64_t max_bytes = 0;
    unsigned long jobs = 0;
    bool quiet = false, verbose = false, check = false, force = false;
    const char *shard = NULL;
    unsigned long shards = 0;
    cli_remotes remotes = {0};
    warm deps_opts = {.deps_mode = WARM_DEPS_AUTO};
    int c, taken;
    size_t max_line = MANIFEST_DEFAULT_MAX_LINE;
    optind = 1;
    while ((c = cli_getopt("warm", argc, argv, "j:qvh", longopts)) != -1) {
        if ((taken = cli_remotes_option(&remotes, c, optarg)) != 0) {
            if (taken > 0) continue;
            cli_remotes_free(&remotes);
            cli_error("warm: out of memory");
            return CLI_FAIL;
        }
        switch (c) {
        case OPT_SHARD: shard = optarg; break;
        case OPT_SHARDS:
            if (!cli_parse_uint(optarg, 1, 1000000, &shards)) {
                cli_error("warm: --shards wants a number from 1 to 1000000, not \"%s\"", optarg);
                cli_remotes_free(&remotes);
                return CLI_USAGE;
            }
            break;
        case OPT_DIR: dir = optarg; break;
        case OPT_MAX:
            if (cckey_size_parse(optarg, &max_bytes) != CCKEY_OK || max_bytes == 0) {
                cli_error("warm: --max-size wants a size such as 500M or 2G, not \"%s\"", optarg);
                return CLI_USAGE;
            }
            break;
        case OPT_MAX_LINE:
            if (!manifest_parse_max_line(optarg, &max_line)) {
                cli_error("warm: --max-line wants a size of at least 1K, such as 64M or 2G, not \"%s\"", optarg);
                return CLI_USAGE;
            }
            break;
        case 'j':
            if (!cli_parse_uint(optarg, 1, 1024, &jobs)) {
                cli_error("warm: --jobs wants a number from 1 to 1024, not \"%s\"", optarg);
                return CLI_USAGE;
            }
            break;
        case 'q': quiet = cli_quiet = true; break;
        case 'v': verbose = true; break;
        case OPT_FORMAT:
            if (!cli_format_parse("warm", optarg, CLI_FMT_ALL, &fmt)) {
                cli_remotes_free(&remotes);
                return CLI_USAGE;
            }
            break;
        case OPT_JSON: fmt = CLI_JSON; break;
        case OPT_CHECK: check = true; break;
        case OPT_FORCE: force = true; break;
        case OPT_DEPS:
            if (!warm_deps_mode_parse(optarg, &deps_opts.deps_mode)) {
                cli_error("warm: --deps wants auto, text or preprocessor, not \"%s\"", optarg);
                cli_remotes_free(&remotes);
                return CLI_USAGE;
            }
            break;
        case OPT_PP: deps_opts.pp = optarg; break;
        case 'h': cli_remotes_free(&remotes); cckey_warm_usage(stdout); return CLI_OK;
        default: cli_remotes_free(&remotes); return CLI_USAGE;
        }
    }
    if (check && force) {
        cli_error("warm: --check compiles nothing and --force compiles everything: give one of them");
        cli_remotes_free(&remotes);
        return CLI_USAGE;
    }
    dir = cli_cache_dir(dir, default_dir, sizeof default_dir);
    int rc = start(argc, argv, dir, max_bytes, (unsigned)jobs, quiet, shard, (unsigned)shards, max_line, &remotes,
                   fmt, verbose, check, force, &deps_opts);
    cli_remotes_free(&remotes);
    return rc;
}
