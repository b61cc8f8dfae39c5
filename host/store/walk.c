/* Walking a store folder: stats, verify, clear; and what a walk or a
 * look-up does with what it finds (a stale temporary file, a damaged entry). */
#include "store_internal.h"
#include "../core/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static bool is_shard_name(const char *n)
{
    static const char hex[] = "0123456789abcdef";
    return n[0] && n[1] && !n[2] && strchr(hex, n[0]) && strchr(hex, n[1]);
}

int cckey_store_walk(const cckey_store *s, cckey_walk_fn fn, void *user)
{
    DIR *top = opendir(s->dir);
    if (!top) return -1;
    struct dirent *de;
    int rc = 0;
    while (rc == 0 && (de = readdir(top))) {
        if (!is_shard_name(de->d_name)) continue;
        char shard[4096];
        snprintf(shard, sizeof shard, "%s/%s", s->dir, de->d_name);
        DIR *d = opendir(shard);
        if (!d) continue;   /* vanished, or not a folder */
        struct dirent *e;
        while (rc == 0 && (e = readdir(d))) {
            char key[CCKEY_KEY_LEN + 1];
            int kind = strncmp(e->d_name, CCKEY_TEMP_PREFIX, strlen(CCKEY_TEMP_PREFIX)) == 0 ? CCKEY_WALK_TEMP
                       : cckey_entry_key_of(key, e->d_name)                              ? CCKEY_WALK_ENTRY
                                                                                              : 0;
            if (!kind) continue;
            char path[4400];
            snprintf(path, sizeof path, "%s/%s", shard, e->d_name);
            struct stat st;
            if (lstat(path, &st) != 0) continue;
            if (!S_ISREG(st.st_mode)) {
                if (kind != CCKEY_WALK_ENTRY) continue;
                kind = CCKEY_WALK_ODD;
            }
            rc = fn(user, kind, path, e->d_name, &st);
        }
        closedir(d);
    }
    closedir(top);
    return rc;
}

static int count_one(void *user, int kind, const char *path, const char *name, const struct stat *st)
{
    (void)path, (void)name;
    cckey_store_usage *out = user;
    if (kind == CCKEY_WALK_ODD) return 0;
    if (kind == CCKEY_WALK_ENTRY) out->entries++, out->bytes += (uint64_t)st->st_size;
    else out->temp_files++, out->temp_bytes += (uint64_t)st->st_size;
    return 0;
}

cckey_status cckey_store_stats(cckey_store *s, cckey_store_usage *out)
{
    if (!s || !out) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL store or output");
    *out = (cckey_store_usage){.max_bytes = s->max_bytes, .max_age = s->max_age_s};
    if (cckey_store_walk(s, count_one, out) < 0) return cckey_fail(CCKEY_ERR_IO, "%s: %s", s->dir, strerror(errno));
    cckey_tally t = {0};
    cckey_counters_read(s->dir, &t);
    out->hits = atomic_load(&s->hits) + cckey_tally_get(&t, "hits");
    out->misses = atomic_load(&s->misses) + cckey_tally_get(&t, "misses");
    out->zeroed = t.zeroed;
    out->damaged = t.damaged;
    cckey_tally_free(&t);
    return CCKEY_OK;
}

cckey_status cckey_store_zero_counters(cckey_store *s)
{
    if (!s) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL store");
    if (s->read_only) return cckey_store_writable(s, "zeroing the counters");
    atomic_store(&s->hits, 0);
    atomic_store(&s->misses, 0);
    return cckey_counters_zero(s->dir);
}

/* An entry file's format version and build count, from its header alone;
 * zeros when it cannot be read or is no entry. */
static void header_info(const char *path, cckey_store_entry_info *e)
{
    int fd = cckey_store_open_entry(path);
    uint8_t hdr[CCKEY_ENTRY_HEADER];
    if (fd < 0) return;
    ssize_t n = pread(fd, hdr, sizeof hdr, 0);
    close(fd);
    if (n != (ssize_t)sizeof hdr || memcmp(hdr, CCKEY_ENTRY_MAGIC, 8) != 0) return;
    e->version = cckey_get_le32(hdr + 8);
    uint32_t v = e->version >= 4 ? cckey_get_le32(hdr + CCKEY_ENTRY_VARIANTS_AT) : 0;
    e->variants = v ? v : 1;
    /* Compressed (version 5): the header, the records and the payload's own length. */
    e->plain_bytes = e->version >= 5 ? CCKEY_ENTRY_HEADER + (uint64_t)cckey_get_le32(hdr + CCKEY_ENTRY_RECLEN_AT) +
                                           cckey_get_le64(hdr + 16)
                                     : e->bytes;
}

typedef struct info_walk {
    cckey_store_info_fn fn;
    void *user;
} info_walk;

static int info_one(void *user, int kind, const char *path, const char *name, const struct stat *st)
{
    info_walk *w = user;
    char key[CCKEY_KEY_LEN + 1];
    if (kind != CCKEY_WALK_ENTRY || !cckey_entry_key_of(key, name)) return 0;
    cckey_store_entry_info e = {.key = key, .bytes = (uint64_t)st->st_size, .used = (int64_t)st->st_mtim.tv_sec};
    header_info(path, &e);
    return w->fn(w->user, &e) != 0;
}

cckey_status cckey_store_list_info(cckey_store *s, cckey_store_info_fn fn, void *user)
{
    if (!s || !fn) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL store or function");
    info_walk w = {fn, user};
    if (cckey_store_walk(s, info_one, &w) < 0) return cckey_fail(CCKEY_ERR_IO, "%s: %s", s->dir, strerror(errno));
    return CCKEY_OK;
}

/* Remove what sits under an entry's name but is no regular file: the
 * symlink itself (never its target), a FIFO, an empty folder. */
static bool remove_odd(const char *path, const struct stat *st)
{
    return S_ISDIR(st->st_mode) ? rmdir(path) == 0 : unlink(path) == 0;
}

/* A damaged entry that cannot be removed (a read-only folder) is counted as
 * kept, not as removed. */
static void count_removal(cckey_store_report *r, bool removed)
{
    if (removed) r->removed++;
    else r->kept++;
}

static int verify_one(void *user, int kind, const char *path, const char *name, const struct stat *st)
{
    cckey_store_report *r = user;
    if (kind == CCKEY_WALK_TEMP) {
        if (cckey_store_temp_stale(name, st) && unlink(path) == 0) r->temps_removed++;
        return 0;
    }
    if (kind == CCKEY_WALK_ODD) {
        count_removal(r, remove_odd(path, st) || errno == ENOENT);
        return 0;
    }
    char key[CCKEY_KEY_LEN + 1];
    cckey_entry_key_of(key, name);
    int fd = cckey_store_open_entry(path);
    if (fd == CCKEY_ENTRY_NOT_REGULAR) {   /* replaced by one meanwhile */
        struct stat now;
        if (lstat(path, &now) == 0) count_removal(r, remove_odd(path, &now) || errno == ENOENT);
        return 0;
    }
    if (fd < 0) {
        if (errno != ENOENT) r->unreadable++;   /* ENOENT: evicted meanwhile */
        return 0;
    }
    cckey_status v = cckey_entry_read(fd, key, NULL, NULL, NULL);
    if (v == CCKEY_OK) r->ok++;
    else if (v == CCKEY_ERR_CORRUPT) {
        struct stat seen;
        bool gone = fstat(fd, &seen) == 0 && cckey_store_unlink_same(path, &seen);
        count_removal(r, gone);
    } else {
        r->unreadable++;
    }
    close(fd);
    return 0;
}

cckey_status cckey_store_verify(cckey_store *s, cckey_store_report *out)
{
    if (!s) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL store");
    if (s->read_only) return cckey_store_writable(s, "verify");
    cckey_store_report r = {0};
    if (cckey_store_walk(s, verify_one, &r) < 0) return cckey_fail(CCKEY_ERR_IO, "%s: %s", s->dir, strerror(errno));
    if (out) *out = r;
    return CCKEY_OK;
}

typedef struct clear_state {
    uint64_t removed;
    int err;
} clear_state;

static int clear_one(void *user, int kind, const char *path, const char *name, const struct stat *st)
{
    clear_state *c = user;
    if (kind == CCKEY_WALK_ODD) return 0;
    /* A live writer's temporary file stays: it is about to become an entry. */
    if (kind == CCKEY_WALK_TEMP && !cckey_store_temp_stale(name, st)) return 0;
    if (unlink(path) == 0) c->removed += kind == CCKEY_WALK_ENTRY;
    else if (errno != ENOENT && !c->err) c->err = errno;
    return 0;
}

cckey_status cckey_store_clear(cckey_store *s, uint64_t *removed)
{
    if (!s) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL store");
    if (s->read_only) return cckey_store_writable(s, "clear");
    clear_state c = {0};
    if (cckey_store_walk(s, clear_one, &c) < 0) return cckey_fail(CCKEY_ERR_IO, "%s: %s", s->dir, strerror(errno));
    /* Empty shard folders go too; rmdir refuses the ones still in use. */
    for (int i = 0; i < 256; i++) {
        char shard[4096];
        snprintf(shard, sizeof shard, "%s/%02x", s->dir, i);
        rmdir(shard);
    }
    pthread_mutex_lock(&s->lock);
    s->counted = false;
    pthread_mutex_unlock(&s->lock);
    if (removed) *removed = c.removed;
    if (c.err) return cckey_fail(CCKEY_ERR_IO, "%s: %s", s->dir, strerror(c.err));
    return CCKEY_OK;
}

bool cckey_store_unlink_same(const char *path, const struct stat *seen)
{
    struct stat now;
    if (lstat(path, &now) != 0) return errno == ENOENT;
    if (now.st_dev != seen->st_dev || now.st_ino != seen->st_ino) return true;   /* replaced: ours is gone */
    return unlink(path) == 0 || errno == ENOENT;
}

bool cckey_store_temp_stale(const char *name, const struct stat *st)
{
    if (time(NULL) - st->st_mtime > 3600) return true;
    /* ".tmp-HOST-PID-...": the pid means something only on this host. */
    const char *p = name + strlen(CCKEY_TEMP_PREFIX), *host = cckey_store_host_tag();
    size_t hl = strlen(host);
    if (strncmp(p, host, hl) != 0 || p[hl] != '-') return false;
    char *end;
    long pid = strtol(p + hl + 1, &end, 10);
    if (end == p + hl + 1 || *end != '-' || pid <= 0) return false;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}
