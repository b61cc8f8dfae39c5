/* Remote caches under the store (see cckey_store_add_remote in cckey.h):
 * whole entry files move between the folder and the remotes, and every
 * entry that comes in is checked as a local get checks a file (the same
 * code, on the bytes received), whatever the entry format holds. */
#include "store_internal.h"
#include "../core/internal.h"
#include "../remote/remote.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool read_all_at(int fd, void *buf, size_t len)
{
    uint8_t *p = buf;
    for (size_t off = 0; off < len;) {
        ssize_t n = pread(fd, p + off, len - off, (off_t)off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        off += (size_t)n;
    }
    return true;
}

cckey_status cckey_store_read_entry(cckey_store *s, const char *key, void **buf, size_t *len)
{
    *buf = NULL;
    char shard_dir[4096], path[4096];
    cckey_store_paths_of(s, key, shard_dir, path, sizeof path);
    int fd = cckey_store_open_entry(path);
    if (fd < 0) {
        if (fd == CCKEY_ENTRY_NOT_REGULAR || errno == ENOENT || errno == ENOTDIR || errno == ESTALE)
            return cckey_fail(CCKEY_ERR_NOT_FOUND, "no entry for this key");
        return cckey_fail(CCKEY_ERR_IO, "%s: %s", path, strerror(errno));
    }
    cckey_status st = cckey_entry_read(fd, key, NULL, NULL, NULL);
    struct stat sb;
    if (st == CCKEY_OK && fstat(fd, &sb) != 0) st = cckey_fail(CCKEY_ERR_IO, "%s: %s", path, strerror(errno));
    if (st == CCKEY_OK) {
        size_t n = (size_t)sb.st_size;
        *buf = malloc(n ? n : 1);
        if (!*buf) st = cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
        else if (!read_all_at(fd, *buf, n)) st = cckey_fail(CCKEY_ERR_IO, "%s: read failed", path);
        else *len = n;
        if (st != CCKEY_OK) free(*buf), *buf = NULL;
    }
    close(fd);
    return st;
}

/* One try of cckey_store_install, on bytes already checked. *errp: the
 * errno of an I/O failure; *seen: the installed file.
 *
 * No fsync, of the file or the folder. The entry is a copy of what a remote
 * holds, and every read of an entry file checks it whole (its size against
 * the header's lengths, the key, and the MD5 over every byte: see
 * cckey_entry_read). So if the machine stops before the data reaches the disk,
 * what a later look-up finds (no file, a short file, a file of zeros, or
 * stale blocks) fails those checks: a miss that removes it and fetches the
 * entry again, never a wrong binary (tests/test_store_crash.c, torn_installed_entry_...). The
 * two syncs would cost far more than the transfer on most disks. */
static cckey_status install_once(cckey_store *s, const char *key, const cckey_entry_got *e, int *errp,
                                 struct stat *seen)
{
    char shard_dir[4096], path[4096], tmp[4200];
    int fd = cckey_store_temp_open(s, key, shard_dir, path, tmp);
    if (fd < 0) {
        *errp = errno;
        return CCKEY_ERR_IO;
    }
    bool ok = cckey_store_write_all(fd, e->front, e->front_len) && cckey_store_write_all(fd, e->payload, e->len) &&
              fstat(fd, seen) == 0;
    int err = errno;
    if (close(fd) != 0 && ok) ok = false, err = errno;
    if (ok && rename(tmp, path) != 0) ok = false, err = errno;
    if (!ok) {
        unlink(tmp);
        *errp = err;
        return cckey_fail(CCKEY_ERR_IO, "writing %s: %s", path, strerror(err));
    }
    cckey_store_after_put(s, e->front_len + e->len);
    return CCKEY_OK;
}

/* cckey_store_install on an entry received in two buffers; *v: its parts. */
static cckey_status install_got(cckey_store *s, const char *key, const cckey_entry_got *e, cckey_entry_view *v,
                                struct stat *seen)
{
    if (s->read_only) return cckey_store_writable(s, "install");
    /* Checked in memory, from the bytes received: nothing that fails is
     * ever written, and nothing is read back. */
    cckey_status st = cckey_entry_check_parts(e, key, v);
    if (st != CCKEY_OK) return st;
    struct stat unused;
    /* As a put: a shard folder removed under us is written again. */
    for (int attempt = 0;; attempt++) {
        int err = 0;
        st = install_once(s, key, e, &err, seen ? seen : &unused);
        if (st != CCKEY_ERR_IO || attempt == 3 || !cckey_store_retryable(err)) return st;
    }
}

cckey_status cckey_store_install(cckey_store *s, const char *key, const void *entry, size_t n, size_t *payload_at,
                                 struct stat *seen)
{
    cckey_entry_got e = {(uint8_t *)entry, n, NULL, 0};
    cckey_entry_view v = {0};
    cckey_status st = install_got(s, key, &e, &v, seen);
    if (st == CCKEY_OK && payload_at) *payload_at = (size_t)(v.payload - (const uint8_t *)entry);
    return st;
}

typedef struct fetch {
    cckey_store *s;
    const char *key;
    cckey_remote_hit *hit;
} fetch;

/* Keep a checked entry in the folder, and hand its payload to the look-up:
 * the buffer it was received into where it has one of its own. */
static bool accept(void *user, cckey_entry_got *e, char *why, size_t why_len)
{
    fetch *f = user;
    cckey_entry_view v;
    /* A read-only handle keeps nothing: the same checks, in memory only. */
    cckey_status st = f->s->read_only ? cckey_entry_check_parts(e, f->key, &v)
                                      : install_got(f->s, f->key, e, &v, &f->hit->seen);
    if (st == CCKEY_OK) {
        f->hit->len = v.len;
        f->hit->rec.len = v.rec_len;
        f->hit->rec.version = v.version, f->hit->rec.variants = v.variants;
        f->hit->rec.bytes = malloc(v.rec_len ? v.rec_len : 1);
        if (e->len) f->hit->payload = e->payload, e->payload = NULL;
        else f->hit->payload = malloc(v.len ? v.len : 1);
        if (!f->hit->payload || !f->hit->rec.bytes) {
            cckey_store_remote_hit_free(f->hit);
            st = cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
        } else {
            if (!e->len && v.len) memcpy(f->hit->payload, v.payload, v.len);
            if (v.rec_len) memcpy(f->hit->rec.bytes, v.rec, v.rec_len);
        }
    }
    if (st != CCKEY_OK) snprintf(why, why_len, "entry refused: %s", cckey_last_error());
    return st == CCKEY_OK;
}

bool cckey_store_fetch_remote(cckey_store *s, const char *key, cckey_remote_hit *hit)
{
    *hit = (cckey_remote_hit){0};
    fetch f = {s, key, hit};
    return cckey_remotes_fetch(s->remotes, key, accept, &f);
}

void cckey_store_remote_hit_free(cckey_remote_hit *hit)
{
    free(hit->payload), free(hit->rec.bytes);
    hit->payload = NULL, hit->rec.bytes = NULL;
}

cckey_push *cckey_store_push_begin(cckey_store *s, const char *key, const uint8_t *hdr, const uint8_t *rec,
                                   uint32_t rec_len, const void *payload, size_t len)
{
    /* The entry file as put writes it, from the header put computed (a
     * second checksum over the payload would cost as much as the write),
     * sent from where its parts are. */
    cckey_entry_parts e = {{hdr, rec, payload}, {CCKEY_ENTRY_HEADER, rec_len, len}};
    return cckey_remotes_push_begin(s->remotes, key, &e);
}

void cckey_store_push_end(cckey_store *s, cckey_push *p) { cckey_remotes_push_end(s->remotes, p); }

void cckey_store_drop_remotes(cckey_store *s)
{
    if (!s->remotes) return;
    cckey_remote_counters c;
    cckey_remotes_counters(s->remotes, &c);
    if (!s->read_only && (c.hits || c.misses || c.errors || c.puts)) cckey_remote_totals_add(s->dir, &c);
    cckey_remotes_free(s->remotes);
    s->remotes = NULL;
}

cckey_status cckey_store_add_remote(cckey_store *s, const char *url, const cckey_remote_settings *settings)
{
    if (!s) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL store");
    pthread_mutex_lock(&s->lock);
    cckey_status st = cckey_remotes_add(&s->remotes, url, settings);
    pthread_mutex_unlock(&s->lock);
    return st;
}

cckey_status cckey_store_remote_counters(cckey_store *s, int since_open, cckey_remote_counters *out)
{
    if (!s || !out) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL store or counters");
    if (since_open) cckey_remotes_counters(s->remotes, out);
    else cckey_remote_totals_read(s->dir, out);
    return CCKEY_OK;
}
