/* The folder's running remote counters, kept with the local ones in its
 * counter files (counter_files.c): "remote.NAME" for all remotes together,
 * "remote@URL.NAME" for each remote by its URL (no secrets). The store's
 * bookkeeping: the remotes only count their own traffic. */
#include "store_internal.h"
#include "../core/internal.h"
#include "../remote/remote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EACH_PREFIX "remote@"

/* The counter names, in the order of CCKEY_RC_*. */
static const char *const names[CCKEY_RC_N] = {"hits", "misses", "errors", "puts", "bytes_in", "bytes_out", "time_us"};

static void add_one(void *user, const char *display, const uint64_t count[CCKEY_RC_N])
{
    cckey_tally *t = user;
    char name[700];
    for (int k = 0; k < CCKEY_RC_N; k++) {
        if (!count[k]) continue;
        int n = snprintf(name, sizeof name, EACH_PREFIX "%.600s.%s", display, names[k]);
        for (int i = 0; i < n; i++)
            if ((unsigned char)name[i] <= ' ' || name[i] == 0x7f) name[i] = '_';   /* one word per name */
        cckey_tally_add(t, name, count[k]);
    }
}

void cckey_remote_tally(const cckey_remotes *set, cckey_tally *t)
{
    cckey_remote_counters c;
    cckey_remotes_counters(set, &c);
    const uint64_t all[] = {c.hits, c.misses, c.errors, c.puts, c.bytes_in, c.bytes_out};
    char name[64];
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        if (all[k]) snprintf(name, sizeof name, "remote.%s", names[k]), cckey_tally_add(t, name, all[k]);
    cckey_remotes_each(set, add_one, t);
}

static void set_field(cckey_remote_counters *c, int k, uint64_t v)
{
    uint64_t *f[CCKEY_RC_N] = {&c->hits, &c->misses, &c->errors, &c->puts, &c->bytes_in, &c->bytes_out, &c->time_ms};
    *f[k] += k == CCKEY_RC_TIME_US ? v / 1000 : v;
}

void cckey_remote_totals_of(const cckey_tally *t, cckey_remote_counters *out)
{
    memset(out, 0, sizeof *out);
    char name[64];
    for (int k = 0; k < CCKEY_RC_N; k++) {
        snprintf(name, sizeof name, "remote.%s", names[k]);
        set_field(out, k, cckey_tally_get(t, name));
    }
}

/* The field index of a per-remote counter name, and the URL's length in it;
 * -1 when name is no such counter. */
static int split_name(const char *name, size_t *url_len)
{
    size_t p = strlen(EACH_PREFIX);
    const char *dot = strrchr(name, '.');
    if (strncmp(name, EACH_PREFIX, p) != 0 || !dot || (size_t)(dot - name) <= p) return -1;
    *url_len = (size_t)(dot - name) - p;
    for (int k = 0; k < CCKEY_RC_N; k++)
        if (strcmp(dot + 1, names[k]) == 0) return k;
    return -1;
}

/* Every remote named in t, once each, in the order first seen. */
static cckey_status each_remote(const cckey_tally *t, cckey_remote_totals_fn fn, void *user)
{
    bool *done = calloc(t->n ? t->n : 1, sizeof *done);
    if (!done) return cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
    int stop = 0;
    for (size_t i = 0; i < t->n && !stop; i++) {
        size_t len, len2;
        if (done[i] || split_name(t->names[i], &len) < 0) continue;
        cckey_remote_counters c = {0};
        for (size_t j = i; j < t->n; j++) {
            int k = split_name(t->names[j], &len2);
            if (k < 0 || len2 != len || strncmp(t->names[i], t->names[j], strlen(EACH_PREFIX) + len) != 0) continue;
            done[j] = true;
            set_field(&c, k, t->values[j]);
        }
        char url[700];
        snprintf(url, sizeof url, "%.*s", (int)len, t->names[i] + strlen(EACH_PREFIX));
        stop = fn(user, url, &c);
    }
    free(done);
    return CCKEY_OK;
}

cckey_status cckey_store_remote_totals(cckey_store *s, cckey_remote_totals_fn fn, void *user)
{
    if (!s || !fn) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL store or function");
    cckey_tally t = {0};
    cckey_counters_read(s->dir, &t);
    cckey_status st = each_remote(&t, fn, user);
    cckey_tally_free(&t);
    return st;
}
