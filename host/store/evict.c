/* The size limit, least recently used entries first, and the age limit,
 * entries unused for max_age (policy in cckey_store.h). Both are applied
 * on the same recounts, so an age limit costs writers no extra walks. */
#include "store_internal.h"
#include "../core/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

/* Remove census entry i (sorted oldest first): its bytes leave the count. */
static void evict_one(census *c, size_t i, uint64_t *left, uint64_t *removed)
{
    if (unlink(c->v[i].path) == 0 || errno == ENOENT) {
        *left -= c->v[i].size;
        if (removed) ++*removed;
    }
}

/* Recount the folder, remove the entries older than max_age (0: no age
 * limit) and evict down to 90% of max_bytes (0: no size limit) when it is
 * over. Returns the bytes left, or -1 when the folder cannot be walked.
 * Entries that vanish under us (another process's eviction, a clear)
 * simply count as gone. */
static int64_t recount_and_evict(cckey_store *s, uint64_t max_bytes, int64_t max_age, uint64_t *removed)
{
    census c = {0};
    if (cckey_store_walk(s, note, &c) < 0) return -1;
    uint64_t left = c.bytes;
    if (c.n) qsort(c.v, c.n, sizeof *c.v, oldest_first);   /* an empty folder has no array */
    size_t i = 0;
    if (max_age > 0) {
        int64_t cut_ns = ((int64_t)time(NULL) - max_age) * 1000000000;
        for (; i < c.n && c.v[i].used_ns < cut_ns; i++) evict_one(&c, i, &left, removed);
    }
    uint64_t target = max_bytes / 10 * 9;
    if (max_bytes && left > max_bytes)
        for (; i < c.n && left > target; i++) evict_one(&c, i, &left, removed);
    for (size_t k = 0; k < c.n; k++) free(c.v[k].path);
    free(c.v);
    return (int64_t)left;
}

void cckey_store_after_put(cckey_store *s, uint64_t bytes)
{
    if (!s->max_bytes && !s->max_age_s) return;
    pthread_mutex_lock(&s->lock);
    s->approx_bytes += bytes;
    s->puts_since_count++;
    bool over = s->max_bytes && s->approx_bytes > s->max_bytes;
    bool go = !s->evicting && (!s->counted || over || s->puts_since_count >= RECOUNT_EVERY);
    uint64_t before = s->approx_bytes;
    if (go) s->evicting = true;
    pthread_mutex_unlock(&s->lock);
    if (!go) return;
    int64_t left = recount_and_evict(s, s->max_bytes, s->max_age_s, NULL);
    pthread_mutex_lock(&s->lock);
    /* Puts by other threads while we walked still count. */
    s->approx_bytes = (left < 0 ? 0 : (uint64_t)left) + (s->approx_bytes - before);
    s->counted = true;
    s->puts_since_count = 0;
    s->evicting = false;
    pthread_mutex_unlock(&s->lock);
}

/* Apply the limits given now, and take the recount as this handle's. */
static cckey_status trim_to(cckey_store *s, uint64_t max_bytes, int64_t max_age, uint64_t *removed)
{
    uint64_t n = 0;
    int64_t left = recount_and_evict(s, max_bytes, max_age, &n);
    if (removed) *removed = n;
    if (left < 0) return cckey_fail(CCKEY_ERR_IO, "%s: %s", s->dir, strerror(errno));
    pthread_mutex_lock(&s->lock);
    s->approx_bytes = (uint64_t)left;
    s->counted = true;
    s->puts_since_count = 0;
    pthread_mutex_unlock(&s->lock);
    return CCKEY_OK;
}

cckey_status cckey_store_trim(cckey_store *s, uint64_t *removed)
{
    if (removed) *removed = 0;
    if (!s) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL store");
    if (s->read_only) return cckey_store_writable(s, "trim");
    if (!s->max_bytes && !s->max_age_s)
        return cckey_fail(CCKEY_ERR_INVALID_ARG, "%s has no size or age limit (set max_size or max_age in its "
                          "cckey.conf)", s->dir);
    return trim_to(s, s->max_bytes, s->max_age_s, removed);
}

cckey_status cckey_store_trim_older(cckey_store *s, int64_t max_age_s, uint64_t *removed)
{
    if (removed) *removed = 0;
    if (!s) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL store");
    if (s->read_only) return cckey_store_writable(s, "trim");
    if (max_age_s <= 0) return cckey_fail(CCKEY_ERR_INVALID_ARG, "an age must be positive, not %lld", (long long)max_age_s);
    return trim_to(s, 0, max_age_s, removed);
}
