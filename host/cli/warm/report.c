/* What became of each tuple of a warm: failures grouped by reason, the
 * summary, --check and --format jsonl (see warm_run.h). */
#include "warm_run.h"

#include "../cli.h"
#include "../json_out.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
size_t warm_mark_evicted(warm *w)
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

/* One tuple as the next JSON object of j: its manifest line, name, device,
 * key, the look-up's verdict and what became of it. */
static void tuple_json(const warm *w, const tuple *t, cli_json *j)
{
    const tuple *r = rep_of(w, t);
    const cckey_tuple *tp = &t->item.tuple;
    cli_json_object(j);
    cli_json_kint(j, "line", (long long)t->item.line);
    cli_json_key(j, "name");
    cli_json_strn(j, tp->name.ptr, tp->name.len);
    cli_json_key(j, "device");
    cli_json_strn(j, tp->device.ptr, tp->device.len);
    cli_json_kstr(j, "key", t->key);
    cli_json_kstr(j, "status", r->miss == CCKEY_MISS_NONE ? "hit" : "miss");
    if (r->miss != CCKEY_MISS_NONE) cli_json_kstr(j, "reason", miss_json[r->miss]);
    if (r->miss_detail) cli_json_kstr(j, "detail", r->miss_detail);
    const char *result = result_of(w, t);
    cli_json_kstr(j, "result", result);
    warm_json_builds(j, r->variants, r->state != T_COMPILED && r->miss == CCKEY_MISS_NONE, r->variant,
                     r->state == T_COMPILED ? r->deps_how : NULL);
    const char *err = t->why ? t->why : r->why;
    if (strcmp(result, "failed") == 0 && err) cli_json_kstr(j, "error", err);
    const char *inc[2];   /* NVRTC's toolkit headers */
    if (t->lang == CCKEY_LANG_CUDA) cli_json_kstrs(j, "toolkit_include", inc, warm_nvrtc_toolkit_include(inc, 2));
    cli_json_end(j);
}

/* --format jsonl: a tuple a line. */
static void put_tuples_jsonl(const warm *w)
{
    cli_json j;
    cli_json_init(&j, CLI_JSON_SPACED, false);
    for (size_t i = 0; i < w->n; i++) {
        tuple_json(w, &w->t[i], &j);
        if (cli_json_put(&j, stdout, "\n") != 0)
            cli_error("warm: out of memory writing line %zu's result", w->t[i].item.line);
    }
    cli_json_free(&j);
}

/* The document in j, whole, or an error. */
static void put_doc(cli_json *j)
{
    if (cli_json_put(j, stdout, "\n") != 0) cli_error("warm: out of memory writing the summary");
    cli_json_free(j);
}

/* --check: the tuples a warm would compile, and 3 when there are any. */
int warm_report_check(warm *w)
{
    size_t dup = 0, cached = 0, uncached = 0;
    for (size_t i = 0; i < w->n; i++) {
        const tuple *t = &w->t[i];
        if (t->is_dup) dup++;
        else if (t->miss == CCKEY_MISS_NONE) cached++;
        else uncached++;
    }
    if (w->fmt == CLI_JSONL) {
        put_tuples_jsonl(w);
    } else if (w->fmt == CLI_JSON) {
        cli_json j;
        cli_json_init(&j, CLI_JSON_INDENT, false);
        cli_json_object(&j);
        cli_json_kint(&j, "tuples", (long long)w->n);
        cli_json_kint(&j, "distinct_keys", (long long)(w->n - dup));
        cli_json_kint(&j, "cached", (long long)cached);
        cli_json_kint(&j, "uncached", (long long)uncached);
        cli_json_key(&j, "would_compile");
        cli_json_array(&j);
        for (size_t i = 0; i < w->n; i++) {
            if (rep_of(w, &w->t[i])->miss == CCKEY_MISS_NONE) continue;
            cli_json_inline(&j);
            tuple_json(w, &w->t[i], &j);
        }
        cli_json_end(&j);
        cli_json_end(&j);
        put_doc(&j);
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

int warm_summary(warm *w)
{
    size_t compiled = atomic_load(&w->n_compiled), cached = w->n_cached + atomic_load(&w->n_elsewhere);
    size_t failed = show_failures(w), dup = 0, evicted = 0;
    for (size_t i = 0; i < w->n; i++) dup += w->t[i].state == T_DUPLICATE, evicted += w->t[i].state == T_EVICTED;
    if (evicted)
        fprintf(stderr, "cckey: warm: the size limit of %llu bytes cannot hold the warmed set: %zu entr%s compiled or "
                "found in this run %s evicted again (a partial result; raise --max-size or the folder's max-size)\n",
                (unsigned long long)w->max_bytes, evicted, evicted == 1 ? "y" : "ies", evicted == 1 ? "was" : "were");
    if (w->fmt == CLI_JSONL) {
        put_tuples_jsonl(w);
        fflush(stdout);
        return failed || evicted ? CLI_FAIL : CLI_OK;
    }
    if (w->fmt == CLI_JSON) {
        cli_json j;   /* one summary object */
        cli_json_init(&j, CLI_JSON_INDENT, false);
        cli_json_object(&j);
        const char *name[] = {"tuples", "distinct_keys", "compiled", "builds", "cached", "failed", "evicted"};
        size_t v[] = {w->n, w->n - dup, compiled, w->n_groups, cached, failed, evicted};
        for (size_t i = 0; i < sizeof v / sizeof *v; i++) cli_json_kint(&j, name[i], (long long)v[i]);
        if (w->shard.n) {
            cli_json_key(&j, "shard");
            cli_json_inline(&j);
            cli_json_object(&j);
            cli_json_kint(&j, "index", w->shard.k);
            cli_json_kint(&j, "count", w->shard.n);
            cli_json_kint(&j, "manifest_tuples", (long long)w->n_manifest);
            cli_json_end(&j);
        }
        warm_deps_json(&w->deps, &j);
        cli_json_end(&j);
        put_doc(&j);
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
