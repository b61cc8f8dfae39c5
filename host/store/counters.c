/* Hit and miss counters of a store folder, kept without locks across
 * processes, as ccache keeps its statistics: each process adds its counts
 * to a file of its own, DIR/stats/HOST-PID, that no other process writes,
 * and a reader sums every file there. A file is replaced by rename, so a
 * reader sees its old totals or its new ones, never half. Counts reach the
 * folder when a handle is closed; a process killed first loses its own. */
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

/* The handles of one process share its file. */
static pthread_mutex_t file_lock = PTHREAD_MUTEX_INITIALIZER;

cckey_status cckey_store_get_info(cckey_store *s, const char *key, const cckey_lookup *lk, void **buf, size_t *len,
                                  cckey_lookup_info *info)
{
    cckey_status st = cckey_store_get_uncounted(s, key, lk, buf, len, info);
    if (!s || s->read_only) return st;   /* a read-only handle writes no counters either */
    if (st == CCKEY_OK) atomic_fetch_add_explicit(&s->hits, 1, memory_order_relaxed);
    else if (st == CCKEY_ERR_NOT_FOUND || st == CCKEY_ERR_CORRUPT || st == CCKEY_ERR_STALE ||
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

static void parse_counts(FILE *f, uint64_t *hits, uint64_t *misses)
{
    char name[32];
    unsigned long long v;
    while (fscanf(f, "%31s %llu", name, &v) == 2) {
        if (strcmp(name, "hits") == 0) *hits += v;
        else if (strcmp(name, "misses") == 0) *misses += v;
    }
}

void cckey_store_flush_counters(cckey_store *s)
{
    uint64_t h = atomic_exchange(&s->hits, 0), m = atomic_exchange(&s->misses, 0);
    if (!h && !m) return;
    char dir[4200], path[4300], tmp[4300];
    snprintf(dir, sizeof dir, "%s/stats", s->dir);
    snprintf(path, sizeof path, "%s/%s-%ld", dir, cckey_store_host_tag(), (long)getpid());
    snprintf(tmp, sizeof tmp, "%s/%s%s-%ld", dir, CCKEY_TEMP_PREFIX, cckey_store_host_tag(), (long)getpid());
    pthread_mutex_lock(&file_lock);
    if (mkdir(dir, 0777) == 0 || errno == EEXIST) {
        FILE *in = fopen(path, "r");
        if (in) {   /* an earlier handle of this process (or of a recycled pid) */
            parse_counts(in, &h, &m);
            fclose(in);
        }
        FILE *out = fopen(tmp, "w");
        if (out) {
            bool ok = fprintf(out, "hits %llu\nmisses %llu\n", (unsigned long long)h, (unsigned long long)m) > 0;
            ok = fclose(out) == 0 && ok;
            if (!ok || rename(tmp, path) != 0) unlink(tmp);
        }
    }
    pthread_mutex_unlock(&file_lock);
}

void cckey_store_read_counters(cckey_store *s, uint64_t *hits, uint64_t *misses)
{
    *hits = atomic_load(&s->hits);
    *misses = atomic_load(&s->misses);
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/stats", s->dir);
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;   /* ., .. and unfinished writes */
        char path[4500];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        parse_counts(f, hits, misses);
        fclose(f);
    }
    closedir(d);
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
    if (kind != CCKEY_WALK_ENTRY || !cckey_store_name_to_key(key, name)) return 0;
    return l->fn(l->user, key, (uint64_t)st->st_size, (int64_t)st->st_mtim.tv_sec) != 0;
}

cckey_status cckey_store_list(cckey_store *s, cckey_store_entry_fn fn, void *user)
{
    if (!s || !fn) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL store or function");
    lister l = {fn, user};
    if (cckey_store_walk(s, list_one, &l) < 0) return cckey_fail(CCKEY_ERR_IO, "%s: %s", s->dir, strerror(errno));
    return CCKEY_OK;
}
