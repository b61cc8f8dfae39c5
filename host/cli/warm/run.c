/* warm's builds: each compiled once on a worker thread, claimed while it
 * compiles so that other warms of the folder wait for it (see warm_run.h,
 * claims.h). */
#include "warm_run.h"

#include "../cli.h"
#include "warm_vulkan.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void fail_group(warm *w, group *g, const char *what, const char *why)
{
    for (size_t k = 0; k < g->n; k++) warm_fail(&w->t[g->members[k]], "%s%s", what, why);
}

/* The group's build. Shaders are built under their source_file's name, so
 * that the compiler's messages say FILE:LINE. */
static int build(const tuple *first, const group *g, const warm_flags *flags, const char *const *names,
                 bool *present, warm_build *b)
{
    const cckey_tuple *tp = &first->item.tuple;
    const char *src = tp->source.ptr ? tp->source.ptr : "";
    if (first->lang != CCKEY_LANG_GLSL && first->lang != CCKEY_LANG_HLSL)
        return g->compiler->build(g->compiler->impl, g->dev, src, tp->source.len, flags, names, g->n, present, b);
    char file[PATH_MAX];
    const cckey_bytes *sf = &first->item.source_file;
    if (sf->ptr) snprintf(file, sizeof file, "%.*s", (int)sf->len, (const char *)sf->ptr);
    else snprintf(file, sizeof file, "%s", first->lang == CCKEY_LANG_GLSL ? "source.comp" : "source.hlsl");
    return warm_vulkan_build(g->compiler, g->dev, file, src, tp->source.len, flags, names, g->n, present, b);
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
    warm_toolchain_make(w, first, &k);
    warm_flags flags = {0};
    warm_deps deps = {0};
    char why[1024];
    const char **names = calloc(g->n, sizeof *names);
    bool *present = calloc(g->n, sizeof *present);
    char **owned = calloc(g->n, sizeof *owned);
    if (!k.flags_ok) {
        fail_group(w, g, "options: ", k.flags_why);
        goto out;
    }
    if (warm_flags_include(&k.flags, (const char *const *)&first->root, 1, cuda, &flags, why, sizeof why) != 0) {
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
    warm_build b;
    if (build(first, g, &flags, names, present, &b) != 0) {
        fail_group(w, g, "build failed: ", b.error);
    } else {
        cckey_entry_meta meta = {k.c->tool, k.version, (const char *const *)k.flags.argv, k.flags.argc, deps.r.deps,
                                 deps.r.n, NULL};
        cckey_put_options put = {.unverified = deps.unverified[0] ? deps.unverified : NULL};
        for (size_t i = 0; i < g->n; i++) {
            tuple *t = &w->t[g->members[i]];
            if (!owned[i] || strlen(owned[i]) != t->item.tuple.name.len) {
                warm_fail(t, "the entry point's name holds a NUL byte");
            } else if (!present[i]) {
                warm_fail(t, "the built program has no entry point \"%s\"", names[i]);
            } else if ((meta.tuple = &t->item.tuple,
                        cckey_store_put_ex(w->store, t->key, b.binary, b.binary_len, &meta, &put)) != CCKEY_OK) {
                warm_fail(t, "storing the binary: %s", cckey_last_error());
            } else {
                t->state = T_COMPILED;
                t->variants = put.variants, t->variant = 0, t->deps_how = deps.how;
            }
        }
    }
    g->log = b.log;
    b.log = NULL;
    warm_build_clear(&b);
out:
    for (size_t i = 0; i < g->n; i++) {
        int st = w->t[g->members[i]].state;
        atomic_fetch_add(st == T_COMPILED ? &w->n_compiled : &w->n_failed, 1);
    }
    for (size_t i = 0; owned && i < g->n; i++) free(owned[i]);
    free(owned), free(names), free(present);
    warm_deps_free(&deps);
    warm_flags_free(&flags);
    warm_toolchain_free(&k);
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
        warm_look_up_in(w, w->local, g->members[k], true);
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

/* What the bar counts from: read before any worker starts, since the
 * workers change states and groups. */
typedef struct progress_base {
    uint64_t total_bytes;
    size_t failed_early;   /* no compiler or device: failed in warm_plan */
    size_t settled;        /* cached, duplicates and those: no build */
} progress_base;

static progress_base progress_from(const warm *w)
{
    progress_base b = {0, 0, w->n};
    for (size_t i = 0; i < w->n_groups; i++) {
        b.total_bytes += w->t[w->g[i].members[0]].item.tuple.source.len;
        b.settled -= w->g[i].n;
    }
    for (size_t i = 0; i < w->n; i++) b.failed_early += w->t[i].state == T_FAILED;
    return b;
}

/* The bar while the workers build: tuples of the total, builds in flight. */
static void show_progress(warm *w, const progress_base *b, bool quiet)
{
    cli_progress bar;
    cli_progress_init(&bar, "warm");
    if (quiet) bar.enabled = false;
    char note[160];
    bar.note = note, bar.unit = "tuples", bar.items_total = w->n;
    while (atomic_load(&w->groups_done) < w->n_groups) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        snprintf(note, sizeof note, "%zu building, %zu compiled, %zu cached, %zu failed", atomic_load(&w->building),
                 atomic_load(&w->n_compiled), w->n_cached + atomic_load(&w->n_elsewhere),
                 b->failed_early + atomic_load(&w->n_failed));
        cli_progress_update(&bar, atomic_load(&w->bytes_done), b->total_bytes,
                            b->settled + atomic_load(&w->tuples_done) + atomic_load(&w->n_elsewhere));
    }
    cli_progress_finish(&bar);
}

void warm_build_all(warm *w, unsigned jobs, bool quiet)
{
    if (jobs > w->n_groups) jobs = (unsigned)w->n_groups;
    w->deferred = malloc((w->n_groups ? w->n_groups : 1) * sizeof *w->deferred);
    if (!w->deferred) {
        for (size_t i = 0; i < w->n_groups; i++)
            for (size_t k = 0; k < w->g[i].n; k++) warm_fail(&w->t[w->g[i].members[k]], "out of memory");
        return;
    }
    progress_base base = progress_from(w);
    pthread_t *th = calloc(jobs ? jobs : 1, sizeof *th);
    unsigned started = 0;
    for (unsigned i = 0; th && i < jobs; i++)
        if (pthread_create(&th[i], NULL, worker, w) == 0) started++;
    if (started == 0) worker(w);   /* no thread could start: build here */
    else show_progress(w, &base, quiet);
    for (unsigned i = 0; i < started; i++) pthread_join(th[i], NULL);
    free(th);
}
