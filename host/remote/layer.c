/* The remotes of one store handle, in order: who is asked, who is written,
 * what is counted and what is said. A remote that goes down is reported
 * once and then left alone, so a dead server costs one timeout, not one
 * per tuple. */
#include "remote.h"
#include "../core/internal.h"
#ifdef CCKEY_WITH_CRYPTO
#include "../entry/sign.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct remote {
    void *impl;
    const cckey_remote_ops *ops;
    char *display;
    bool read_only;
    atomic_bool down;
    atomic_bool error_said;   /* the first request error is said; later ones are counted */
    atomic_uint streak;       /* failed requests in a row */
    void (*warn)(void *, const char *);
    void *warn_user;
    uint8_t *secret;          /* signing secret, or NULL */
    size_t secret_len;
    uint64_t max_entry;       /* the largest entry file taken from it */
    atomic_uint_fast64_t count[CCKEY_RC_N];   /* this remote's own traffic (cckey_remotes_each) */
} remote;

struct cckey_remotes {
    remote *r;
    size_t n;
    atomic_uint_fast64_t hits, misses, errors, puts, bytes_in, bytes_out;
    atomic_bool local_said;   /* a local problem with remote hits was said */
};

void cckey_remote_sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {}
}

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t cckey_remote_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void say(remote *r, const char *what, const char *err)
{
    if (!r->warn) return;
    char msg[1024];
    snprintf(msg, sizeof msg, "remote %s: %s%s", r->display, err, what);
    r->warn(r->warn_user, msg);
}

/* Failed requests in a row after which a remote that answers, but only with
 * errors, is left alone too: each costs its retries' backoff. */
enum { DOWN_AFTER_ERRORS = 8 };

/* Count and report a failed request. */
static void failed(cckey_remotes *set, remote *r, cckey_remote_result res, const char *err)
{
    atomic_fetch_add(&set->errors, 1);
    atomic_fetch_add(&r->count[CCKEY_RC_ERRORS], 1);
    if (atomic_fetch_add(&r->streak, 1) + 1 == DOWN_AFTER_ERRORS && res != CCKEY_R_DOWN) {
        if (!atomic_exchange(&r->down, true)) say(r, "", "8 requests in a row failed; going on without it");
        return;
    }
    if (res == CCKEY_R_DOWN) {
        if (!atomic_exchange(&r->down, true)) say(r, "; going on without it", err);
    } else if (!atomic_exchange(&r->error_said, true)) {
        say(r, " (later errors of this remote are only counted)", err);
    }
}

cckey_status cckey_remotes_add(cckey_remotes **set, const char *url, const cckey_remote_settings *settings)
{
    if (!url) return cckey_fail(CCKEY_ERR_INVALID_ARG, "no remote URL given");
    cckey_remote_url u;
    char why[512];
    int parsed = cckey_remote_url_parse(&u, url, settings, why, sizeof why);
    if (parsed != 0) return cckey_fail(parsed == -2 ? CCKEY_ERR_UNAVAILABLE : CCKEY_ERR_INVALID_ARG, "%s", why);
    const char *missing = NULL;
#if !defined(CCKEY_WITH_REDIS)
    if (u.kind == CCKEY_REMOTE_REDIS) missing = "Redis support (hiredis)";
#endif
#if !defined(CCKEY_WITH_HTTP)
    if (u.kind != CCKEY_REMOTE_REDIS) missing = "HTTP support (libcurl)";
#endif
    if (missing) {
        cckey_status st = cckey_fail(CCKEY_ERR_UNAVAILABLE, "%s: this cckey was built without %s", u.display, missing);
        cckey_remote_url_free(&u);
        return st;
    }
    if (!*set && !(*set = calloc(1, sizeof **set))) {
        cckey_remote_url_free(&u);
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
    }
    cckey_remotes *s = *set;
    remote *grown = realloc(s->r, (s->n + 1) * sizeof *s->r);
    char *display = strdup(u.display);
    if (!grown || !display) {
        if (grown) s->r = grown;
        free(display);
        cckey_remote_url_free(&u);
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
    }
    s->r = grown;
    remote *r = &s->r[s->n];
    memset(r, 0, sizeof *r);
    r->read_only = u.read_only;
    r->max_entry = u.max_entry;
    r->display = display;
    r->warn = settings ? settings->warn : NULL;
    r->warn_user = settings ? settings->warn_user : NULL;
    if (settings && settings->secret && settings->secret_len) {
#ifndef CCKEY_WITH_CRYPTO
        free(display);
        cckey_remote_url_free(&u);
        return cckey_fail(CCKEY_ERR_UNAVAILABLE, "signed remotes need a cckey built with libcrypto");
#endif
        if (!(r->secret = malloc(settings->secret_len))) {
            free(display);
            cckey_remote_url_free(&u);
            return cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
        }
        memcpy(r->secret, settings->secret, settings->secret_len);
        r->secret_len = settings->secret_len;
    }
    r->impl = u.kind == CCKEY_REMOTE_REDIS ? cckey_remote_redis_open(&u, &r->ops) : cckey_remote_http_open(&u, &r->ops);
    if (!r->impl) {
        free(r->secret);
        free(display);
        cckey_remote_url_free(&u);
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
    }
    s->n++;
    return CCKEY_OK;
}

void cckey_remotes_free(cckey_remotes *set)
{
    if (!set) return;
    for (size_t i = 0; i < set->n; i++) {
        set->r[i].ops->close(set->r[i].impl);
        free(set->r[i].display);
        if (set->r[i].secret) memset(set->r[i].secret, 0, set->r[i].secret_len);
        free(set->r[i].secret);
    }
    free(set->r);
    free(set);
}

bool cckey_remotes_writable(const cckey_remotes *set)
{
    for (size_t i = 0; set && i < set->n; i++)
        if (!set->r[i].read_only) return true;
    return false;
}

static void names_of(const char *key, char shard[3], char name[CCKEY_NAME_LEN + 1])
{
    cckey_entry_shard_of(shard, key);
    cckey_entry_name_of(name, key);
}

/* The folder could not keep a hit (or receive a large one): a local
 * problem, said once for the handle, whichever remote it came from. */
static void local_problem(cckey_remotes *set, const char *err)
{
    if (atomic_exchange(&set->local_said, true) || !set->n || !set->r[0].warn) return;
    char msg[1024];
    snprintf(msg, sizeof msg, "the local cache folder cannot keep remote hits: %s (a local problem: the remotes "
                              "stay in use; said once)", err);
    set->r[0].warn(set->r[0].warn_user, msg);
}

bool cckey_remotes_fetch(cckey_remotes *set, const char *key, uint64_t cap, const cckey_spill *spill,
                         cckey_remote_accept accept, void *user)
{
    char shard[3], name[CCKEY_NAME_LEN + 1], err[512];
    names_of(key, shard, name);
    for (size_t i = 0; i < set->n; i++) {
        remote *r = &set->r[i];
        if (atomic_load(&r->down)) continue;
        cckey_rx rx;
        cckey_rx_init(&rx, key, cap && cap < r->max_entry ? cap : r->max_entry, spill);
        err[0] = '\0';
        uint64_t t0 = now_us();
        cckey_remote_result res = r->ops->get(r->impl, shard, name, &rx, err, sizeof err);
        atomic_fetch_add(&r->count[CCKEY_RC_TIME_US], now_us() - t0);
        cckey_accept_result v = CCKEY_REFUSED;
        if (res == CCKEY_R_HIT) {
            atomic_fetch_add(&set->bytes_in, rx.total);
            atomic_fetch_add(&r->count[CCKEY_RC_BYTES_IN], rx.total);
            v = accept(user, &rx, r->secret, r->secret_len, err, sizeof err);
        }
        bool local = res == CCKEY_R_HIT ? v == CCKEY_LOCAL_FAIL : rx.local;
        cckey_rx_free(&rx);
        if (res == CCKEY_R_MISS) {
            atomic_store(&r->streak, 0);
            atomic_fetch_add(&r->count[CCKEY_RC_MISSES], 1);
        } else if (v == CCKEY_TAKEN || v == CCKEY_TAKEN_NOT_KEPT) {
            if (v == CCKEY_TAKEN_NOT_KEPT) local_problem(set, err);
            atomic_store(&r->streak, 0);
            atomic_fetch_add(&set->hits, 1);
            atomic_fetch_add(&r->count[CCKEY_RC_HITS], 1);
            return true;
        } else if (local) {
            local_problem(set, err);   /* the next remote would fare no better */
            break;
        } else {
            failed(set, r, res == CCKEY_R_HIT ? CCKEY_R_ERROR : res, err);
        }
    }
    atomic_fetch_add(&set->misses, 1);
    return false;
}

size_t cckey_entry_parts_len(const cckey_entry_parts *e)
{
    size_t n = 0;
    for (int i = 0; i < CCKEY_PARTS; i++) n += e->n[i];
    return n;
}

/* One remote's half-done put. */
typedef struct pending {
    void *token;              /* put_end's, when begun */
    cckey_remote_result res;  /* HIT: begun (or done, where there is no put_begin) */
    void *signed_entry;       /* the signed copy sent to this remote, or NULL */
    bool as_is;               /* r's secret signed the entry already: sent unchanged */
    cckey_entry_parts sent;   /* what goes to this remote */
    uint64_t t0;              /* when it began, in microseconds */
    char err[512];
} pending;

struct cckey_push {
    char shard[3], name[CCKEY_NAME_LEN + 1];
    size_t len;   /* entry bytes, as counted in bytes_out */
    pending p[];  /* one per remote of the set */
};

/* What r is sent: e itself, or, where r has a secret and did not sign e
 * already, e joined and signed (the signature covers every byte, so it
 * needs them in one place). */
static bool to_send(remote *r, const char *key, const cckey_entry_parts *e, pending *pd)
{
    pd->sent = *e;
    if (!r->secret || pd->as_is) return true;
#ifndef CCKEY_WITH_CRYPTO
    (void)key;
    return false;   /* not reached: such a remote is refused when added */
#else
    size_t n = cckey_entry_parts_len(e), at = 0, signed_n;
    uint8_t *joined = malloc(n ? n : 1);
    if (!joined) {
        snprintf(pd->err, sizeof pd->err, "out of memory");
        return false;
    }
    for (int i = 0; i < CCKEY_PARTS; i++) {
        if (e->n[i]) memcpy(joined + at, e->p[i], e->n[i]);
        at += e->n[i];
    }
    cckey_status st = cckey_entry_sign(joined, n, key, r->secret, r->secret_len, &pd->signed_entry, &signed_n);
    free(joined);
    if (st != CCKEY_OK) {
        snprintf(pd->err, sizeof pd->err, "cannot sign the entry: %s", cckey_last_error());
        return false;
    }
    pd->sent = (cckey_entry_parts){{pd->signed_entry}, {signed_n}};
    return true;
#endif
}

/* Start (or, without put_begin, do) r's put. */
static void begin_one(remote *r, const char *key, const char *shard, const char *name, const cckey_entry_parts *e,
                      pending *pd)
{
    pd->res = CCKEY_R_ERROR;
    pd->t0 = now_us();
    if (!to_send(r, key, e, pd)) return;
    if (r->ops->put_begin)
        pd->res = r->ops->put_begin(r->impl, shard, name, &pd->sent, &pd->token, pd->err, sizeof pd->err);
    else
        pd->res = r->ops->put(r->impl, shard, name, &pd->sent, pd->err, sizeof pd->err);
}

/* Finish r's put: its answer counted and reported. */
static void end_one(cckey_remotes *set, remote *r, pending *pd, size_t len)
{
    if (pd->res == CCKEY_R_HIT && r->ops->put_begin) pd->res = r->ops->put_end(r->impl, pd->token, pd->err, sizeof pd->err);
    free(pd->signed_entry);
    pd->signed_entry = NULL;
    atomic_fetch_add(&r->count[CCKEY_RC_TIME_US], now_us() - pd->t0);
    if (pd->res != CCKEY_R_HIT) {
        failed(set, r, pd->res, pd->err);
        return;
    }
    atomic_store(&r->streak, 0);
    atomic_fetch_add(&set->puts, 1);
    atomic_fetch_add(&set->bytes_out, len);
    atomic_fetch_add(&r->count[CCKEY_RC_PUTS], 1);
    atomic_fetch_add(&r->count[CCKEY_RC_BYTES_OUT], len);
}

static bool takes_writes(remote *r) { return !r->read_only && !atomic_load(&r->down); }

cckey_push *cckey_remotes_push_begin(cckey_remotes *set, const char *key, const cckey_entry_parts *e)
{
    if (!set || !cckey_remotes_writable(set)) return NULL;
    cckey_push *p = calloc(1, sizeof *p + set->n * sizeof p->p[0]);
    if (!p) return NULL;
    names_of(key, p->shard, p->name);
    p->len = cckey_entry_parts_len(e);
    for (size_t i = 0; i < set->n; i++) {
        p->p[i].res = CCKEY_R_MISS;   /* MISS: not asked */
        if (takes_writes(&set->r[i])) begin_one(&set->r[i], key, p->shard, p->name, e, &p->p[i]);
    }
    return p;
}

void cckey_remotes_push_end(cckey_remotes *set, cckey_push *p)
{
    if (!p) return;
    for (size_t i = 0; i < set->n; i++)
        if (p->p[i].res != CCKEY_R_MISS) end_one(set, &set->r[i], &p->p[i], p->len);
    free(p);
}

/* 0: r's secret signed the entry; 1: unsigned; -1: another signature. */
static int signature_state(const remote *r, const char *key, const void *buf, size_t len)
{
#ifdef CCKEY_WITH_CRYPTO
    return cckey_entry_signature_state(buf, len, key, r->secret, r->secret_len);
#else
    (void)r, (void)key, (void)buf, (void)len;
    return -1;   /* not reached: such a remote is refused when added */
#endif
}

cckey_sig_state cckey_remotes_vouch(cckey_remotes *set, const char *key, const void *buf, size_t len)
{
    cckey_sig_state worst = CCKEY_SIG_OK;
    /* Every writable remote that signs, reachable or not: what an import
     * keeps must not depend on which server answered today. */
    for (size_t i = 0; set && i < set->n; i++) {
        const remote *r = &set->r[i];
        if (r->read_only || !r->secret) continue;
        int st = signature_state(r, key, buf, len);
        if (st < 0) return CCKEY_SIG_FOREIGN;
        if (st > 0) worst = CCKEY_SIG_UNSIGNED;
    }
    return worst;
}

unsigned cckey_remotes_push(cckey_remotes *set, const char *key, const void *buf, size_t len, unsigned flags)
{
    char shard[3], name[CCKEY_NAME_LEN + 1];
    names_of(key, shard, name);
    cckey_entry_parts e = {{buf}, {len}};
    unsigned held = 0;
    for (size_t i = 0; i < set->n; i++) {
        remote *r = &set->r[i];
        if (!takes_writes(r)) continue;
        pending pd = {0};
        if (flags & CCKEY_PUSH_SKIP_PRESENT) {
            cckey_remote_result res = r->ops->head(r->impl, shard, name, pd.err, sizeof pd.err);
            if (res == CCKEY_R_HIT) continue;
            if (res != CCKEY_R_MISS) {
                failed(set, r, res, pd.err);
                continue;
            }
        }
        int st = r->secret ? signature_state(r, key, buf, len) : 0;
        if (st < 0 || (st > 0 && !(flags & CCKEY_PUSH_SIGN_UNSIGNED))) {
            held++;   /* never signed here unasked: that would vouch for bytes nobody checked */
            continue;
        }
        pd.as_is = r->secret && st == 0;
        begin_one(r, key, shard, name, &e, &pd);
        end_one(set, r, &pd, len);
    }
    return held;
}

void cckey_remotes_counters(const cckey_remotes *set, cckey_remote_counters *out)
{
    memset(out, 0, sizeof *out);
    if (!set) return;
    out->hits = atomic_load(&set->hits);
    out->misses = atomic_load(&set->misses);
    out->errors = atomic_load(&set->errors);
    out->puts = atomic_load(&set->puts);
    out->bytes_in = atomic_load(&set->bytes_in);
    out->bytes_out = atomic_load(&set->bytes_out);
}

void cckey_remotes_each(const cckey_remotes *set, cckey_remote_each_fn fn, void *user)
{
    for (size_t i = 0; set && i < set->n; i++) {
        uint64_t c[CCKEY_RC_N];
        for (int k = 0; k < CCKEY_RC_N; k++) c[k] = atomic_load(&set->r[i].count[k]);
        fn(user, set->r[i].display, c);
    }
}
