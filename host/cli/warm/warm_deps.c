/* A build's dependencies as `cckey warm` records them (see warm_deps.h):
 * the text scan where it is exact, the preprocessor where it is not, and a
 * build marked unverified where neither can be sure. */
#include "warm_deps.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

void warm_remove_tree(const char *dir) { nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS); }

void warm_deps_end(warm_deps_cfg *cfg)
{
    if (cfg->tmp[0]) warm_remove_tree(cfg->tmp);
    cfg->tmp[0] = '\0';
    pthread_mutex_destroy(&cfg->lock);
}

/* One more build stored unverified; the first one's reason kept. */
static void note_unverified(warm_deps_cfg *cfg, const warm_deps *d)
{
    if (atomic_fetch_add(&cfg->n_unverified, 1) != 0) return;
    pthread_mutex_lock(&cfg->lock);
    snprintf(cfg->first_unverified, sizeof cfg->first_unverified, "%.500s (%.250s)", d->unverified,
             d->unverified_why);
    pthread_mutex_unlock(&cfg->lock);
}

bool warm_deps_report(warm_deps_cfg *cfg, char *buf, size_t len)
{
    size_t n = atomic_load(&cfg->n_unverified);
    if (n)
        snprintf(buf, len, "warm: %zu build%s read includes that nothing could resolve (first: %s); stored "
                 "unverified, never served, compiled again on each run: install clang or give --preprocessor",
                 n, n == 1 ? "" : "s", cfg->first_unverified);
    return n != 0;
}

void warm_source_name(char *buf, size_t size, const void *file, size_t len, const char *manifest, size_t line)
{
    if (file) snprintf(buf, size, "%.*s", (int)len, (const char *)file);
    else snprintf(buf, size, "%s:%zu (inline source)", manifest, line);
}

void warm_deps_free(warm_deps *d)
{
    cckey_deps_result_free(&d->r);
    memset(d, 0, sizeof *d);
}

/* The preprocessor's view, joined with the text's. */
static int preprocess(warm_deps_cfg *cfg, cckey_deps_request *rq, const warm_flags *build, bool cuda,
                      const char *nvrtc_version, warm_deps *out, char *why, size_t why_len)
{
    warm_pp_argv a;
    warm_pp_result pp;
    if (warm_pp_argv_make(cfg, build, cuda, nvrtc_version, &a) != 0) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    int rc = warm_pp_run(cfg, &a, rq->source, rq->len, rq->source_name, &pp, why, why_len);
    warm_pp_argv_free(&a);
    if (rc != 0) return -1;
    rq->includes = pp.inc, rq->n_includes = pp.n_inc;
    rq->read = (const char *const *)pp.read, rq->n_read = pp.n_read;
    rq->preprocessed = 1;
    cckey_deps_result_free(&out->r);
    if (cckey_deps_find(rq, &out->r) != CCKEY_OK) {
        snprintf(why, why_len, "%s", cckey_last_error());
        rc = -1;
    }
    warm_pp_result_free(&pp);
    return rc;
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void warm_deps_json(warm_deps_cfg *cfg, cli_json *w)
{
    cli_json_key(w, "headers");
    cli_json_inline(w);
    cli_json_object(w);
    cli_json_kint(w, "text", (long long)atomic_load(&cfg->n_text));
    cli_json_kint(w, "preprocessor", (long long)atomic_load(&cfg->n_pp));
    cli_json_kint(w, "unverified", (long long)atomic_load(&cfg->n_unverified));
    cli_json_key(w, "seconds");
    cli_json_fixed(w, (double)atomic_load(&cfg->ns) / 1e9, 3);
    cli_json_end(w);
}

static int find_timed(warm_deps_cfg *cfg, const warm_search *s, const warm_flags *build, bool cuda,
                      const char *nvrtc_version, const char *src, size_t len, const char *name, cckey_dep_memo *memo,
                      warm_deps *out, char *why, size_t why_len);

int warm_deps_find(warm_deps_cfg *cfg, const warm_search *s, const warm_flags *build, bool cuda,
                   const char *nvrtc_version, const char *src, size_t len, const char *name, cckey_dep_memo *memo,
                   warm_deps *out, char *why, size_t why_len)
{
    uint64_t t0 = now_ns();
    int rc = find_timed(cfg, s, build, cuda, nvrtc_version, src, len, name, memo, out, why, why_len);
    atomic_fetch_add(&cfg->ns, now_ns() - t0);
    if (rc == 0 && strcmp(out->how, "text") == 0) atomic_fetch_add(&cfg->n_text, 1);
    if (rc == 0 && strcmp(out->how, "preprocessor") == 0) atomic_fetch_add(&cfg->n_pp, 1);
    return rc;
}

static int find_timed(warm_deps_cfg *cfg, const warm_search *s, const warm_flags *build, bool cuda,
                      const char *nvrtc_version, const char *src, size_t len, const char *name, cckey_dep_memo *memo,
                      warm_deps *out, char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    cckey_deps_request rq = {.source = src, .len = len, .roots = s->roots, .n_roots = s->n_roots,
                             .pre_includes = s->pre, .n_pre_includes = s->n_pre, .source_name = name, .memo = memo};
    if (cckey_deps_find(&rq, &out->r) != CCKEY_OK) {
        snprintf(why, why_len, "%s", cckey_last_error());
        return -1;
    }
    /* -iquote: quoted includes search folders that angled ones skip, which
     * one list of roots cannot say; the preprocessor can. */
    bool sure = out->r.complete && !s->quote_dirs;
    const char *what = !out->r.complete ? out->r.why : "-iquote folders";
    out->how = "text";
    if (sure && (cfg->mode != WARM_DEPS_PREPROCESSOR || !cfg->pp[0] || s->text_only)) return 0;
    if (!cfg->pp[0] || s->text_only) {
        out->how = "unverified";
        out->unverified_why = s->text_only ? "clang's preprocessor is not the shader compiler's" : cfg->pp_why;
        snprintf(out->unverified, sizeof out->unverified, "%s", what);
        note_unverified(cfg, out);
        return 0;
    }
    if (preprocess(cfg, &rq, build, cuda, nvrtc_version, out, why, why_len) != 0) {
        warm_deps_free(out);
        return -1;
    }
    out->how = "preprocessor";
    if (!out->r.complete) {   /* __has_include(MACRO): no preprocessor output shows it */
        out->how = "unverified", out->unverified_why = "the preprocessor does not say what it found";
        snprintf(out->unverified, sizeof out->unverified, "%s", out->r.why);
        note_unverified(cfg, out);
    }
    return 0;
}

void warm_json_builds(cli_json *w, uint32_t variants, bool hit, uint32_t variant, const char *deps_how)
{
    if (variants) cli_json_kint(w, "variants", variants);
    if (hit) cli_json_kint(w, "variant", variant);
    if (deps_how) cli_json_kstr(w, "deps", deps_how);
}
