/* The size limit: least recently used entries go first (policy in cckey.h). */
#include "store_internal.h"
#include "../core/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RECOUNT_EVERY 256

typedef struct victim {
    int64_t used_ns;
    uint64_t size;
    char *path;
} victim;

typedef struct census {
    victim *v;
    size_t n, cap;
    uint64_t bytes;
    bool oom;
} census;

static int note(void *user, int kind, const char *path, const char *name, const struct stat *st)
{
    census *c = user;
    if (kind == CCKEY_WALK_ODD) return 0;
    if (kind == CCKEY_WALK_TEMP) {
        if (cckey_store_temp_stale(name, st)) unlink(path);
        return 0;
    }
    c->bytes += (uint64_t)st->st_size;
    if (c->oom) return 0;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 256;
        victim *v = realloc(c->v, cap * sizeof *v);
        if (!v) {
            c->oom = true;
            return 0;
        }
        c->v = v, c->cap = cap;
    }
    char *p = strdup(path);
    if (!p) {
        c->oom = true;
        return 0;
    }
    c->v[c->n++] = (victim){(int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
                            (uint64_t)st->st_size, p};
    return 0;
}

static int oldest_first(const void *a, const void *b)
{
    const victim *x = a, *y = b;
    if (x->used_ns != y->used_ns) return x->used_ns < y->used_ns ? -1 : 1;
    return strcmp(x->path, y->path);
}

/* Recount the folder and evict down to 90% of the limit when it is over.
 * Returns the bytes left. Entries that vanish under us (another process's
 * eviction, a clear) simply count as gone. */
static uint64_t recount_and_evict(cckey_store *s, uint64_t *removed)
{
    census c = {0};
    if (cckey_store_walk(s, note, &c) < 0) return 0;
    uint64_t left = c.bytes;
    if (left > s->max_bytes) {
        uint64_t target = s->max_bytes / 10 * 9;
        qsort(c.v, c.n, sizeof *c.v, oldest_first);
        for (size_t i = 0; i < c.n && left > target; i++)
            if (unlink(c.v[i].path) == 0 || errno == ENOENT) {
                left -= c.v[i].size;
                if (removed) ++*removed;
            }
    }
    for (size_t i = 0; i < c.n; i++) free(c.v[i].path);
    free(c.v);
    return left;
}

void cckey_store_after_put(cckey_store *s, uint64_t bytes)
{
    if (!s->max_bytes) return;
    pthread_mutex_lock(&s->lock);
    s->approx_bytes += bytes;
    s->puts_since_count++;
    bool go = !s->evicting &&
              (!s->counted || s->approx_bytes > s->max_bytes || s->puts_since_count >= RECOUNT_EVERY);
    uint64_t before = s->approx_bytes;
    if (go) s->evicting = true;
    pthread_mutex_unlock(&s->lock);
    if (!go) return;
    uint64_t left = recount_and_evict(s, NULL);
    pthread_mutex_lock(&s->lock);
    /* Puts by other threads while we walked still count. */
    s->approx_bytes = left + (s->approx_bytes - before);
    s->counted = true;
    s->puts_since_count = 0;
    s->evicting = false;
    pthread_mutex_unlock(&s->lock);
}

cckey_status cckey_store_trim(cckey_store *s, uint64_t *removed)
{
    if (removed) *removed = 0;
    if (!s) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL store");
    if (s->read_only) return cckey_store_writable(s, "trim");
    if (!s->max_bytes) return cckey_fail(CCKEY_ERR_INVALID_ARG, "%s has no size limit (set max_size in its cckey.conf)", s->dir);
    uint64_t n = 0, left = recount_and_evict(s, &n);
    pthread_mutex_lock(&s->lock);
    s->approx_bytes = left;
    s->counted = true;
    s->puts_since_count = 0;
    pthread_mutex_unlock(&s->lock);
    if (removed) *removed = n;
    return CCKEY_OK;
}
