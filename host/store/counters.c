/* Hit and miss counters of a store handle: counted in memory by each
 * look-up, added to the folder's counter files (counter_files.c) when the
 * handle is closed; a process killed first loses its own. A look-up that
 * misses the folder and is served by a remote is a local miss (and the
 * remote's hit). */
#include "store_internal.h"
#include "../core/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

cckey_status cckey_store_get_info(cckey_store *s, const char *key, const cckey_lookup *lk, void **buf, size_t *len,
                                  cckey_lookup_info *info)
{
    cckey_lookup_info own;
    if (!info) info = &own;   /* where it came from decides what it counts as */
    cckey_status st = cckey_store_get_uncounted(s, key, lk, buf, len, info);
    if (!s || s->read_only) return st;   /* a read-only handle writes no counters either */
    if (st == CCKEY_OK && !info->remote) atomic_fetch_add_explicit(&s->hits, 1, memory_order_relaxed);
    else if (st == CCKEY_OK || st == CCKEY_ERR_NOT_FOUND || st == CCKEY_ERR_CORRUPT || st == CCKEY_ERR_STALE ||
             st == CCKEY_ERR_COLLISION)
        atomic_fetch_add_explicit(&s->misses, 1, memory_order_relaxed);
    return st;
}

cckey_status cckey_store_get_explained(cckey_store *s, const char *key, const cckey_lookup *lk, void **buf,
                                       size_t *len, cckey_miss *why)
{
    cckey_lookup_info info;
    cckey_status st = cckey_store_get_info(s, key, lk, buf, len, &info);
    if (why) *why = info.why;
    return st;
}

cckey_status cckey_store_get_checked(cckey_store *s, const char *key, const cckey_lookup *lk, void **buf,
                                     size_t *len)
{
    return cckey_store_get_explained(s, key, lk, buf, len, NULL);
}

cckey_status cckey_store_get(cckey_store *s, const char *key, void **buf, size_t *len)
{
    return cckey_store_get_checked(s, key, NULL, buf, len);
}

void cckey_store_flush_counters(cckey_store *s)
{
    if (s->read_only) return;
    cckey_tally t = {0};
    uint64_t h = atomic_exchange(&s->hits, 0), m = atomic_exchange(&s->misses, 0);
    if (h) cckey_tally_add(&t, "hits", h);
    if (m) cckey_tally_add(&t, "misses", m);
    if (s->remotes) cckey_store_remote_tally(s, &t);
    if (t.n) cckey_counters_add(s->dir, &t);
    cckey_tally_free(&t);
}

typedef struct lister {
    cckey_store_entry_fn fn;
    void *user;
} lister;

static int list_one(void *user, int kind, const char *path, const char *name, const struct stat *st)
{
    (void)path;
    lister *l = user;
    char key[CCKEY_KEY_LEN + 1];
    if (kind != CCKEY_WALK_ENTRY || !cckey_entry_key_of(key, name)) return 0;
    return l->fn(l->user, key, (uint64_t)st->st_size, (int64_t)st->st_mtim.tv_sec) != 0;
}

cckey_status cckey_store_list(cckey_store *s, cckey_store_entry_fn fn, void *user)
{
    if (!s || !fn) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL store or function");
    lister l = {fn, user};
    if (cckey_store_walk(s, list_one, &l) < 0) return cckey_fail(CCKEY_ERR_IO, "%s: %s", s->dir, strerror(errno));
    return CCKEY_OK;
}
