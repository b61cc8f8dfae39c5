/* Remote caches under the store (see cckey_store_add_remote in cckey.h):
 * whole entry files move between the folder and the remotes, and every
 * entry that comes in is checked on disk exactly as a local get checks it,
 * whatever the entry format holds. */
#include "store_internal.h"
#include "../core/internal.h"
#include "../remote/remote.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
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

/* One try of cckey_store_install; *errp: the errno of an I/O failure. */
static cckey_status install_once(cckey_store *s, const char *key, const void *entry, size_t n, void **payload,
                                 size_t *len, int *errp)
{
    char shard_dir[4096], path[4096], tmp[4200];
    int fd = cckey_store_temp_open(s, key, shard_dir, path, tmp);
    if (fd < 0) {
        *errp = errno;
        return CCKEY_ERR_IO;
    }
    bool ok = cckey_store_write_all(fd, entry, n) && fsync(fd) == 0;
    int err = errno;
    if (close(fd) != 0 && ok) ok = false, err = errno;
    if (!ok) {
        unlink(tmp);
        *errp = err;
        return cckey_fail(CCKEY_ERR_IO, "writing %s: %s", tmp, strerror(err));
    }
    int rfd = open(tmp, O_RDONLY | O_CLOEXEC);
    cckey_status st = rfd < 0 ? cckey_fail(CCKEY_ERR_IO, "%s: %s", tmp, strerror(errno))
                              : cckey_entry_read(rfd, key, payload, len, NULL);
    if (rfd >= 0) close(rfd);
    if (st == CCKEY_OK && rename(tmp, path) != 0) {
        *errp = errno;
        st = cckey_fail(CCKEY_ERR_IO, "renaming to %s: %s", path, strerror(errno));
        if (payload) cckey_store_free_buffer(*payload), *payload = NULL;
    }
    if (st != CCKEY_OK) {
        unlink(tmp);
        return st;
    }
    cckey_store_sync_dir(shard_dir);
    cckey_store_after_put(s, n);
    return CCKEY_OK;
}

cckey_status cckey_store_install(cckey_store *s, const char *key, const void *entry, size_t n, void **payload,
                                 size_t *len)
{
    if (s->read_only) return cckey_store_writable(s, "install");
    /* As a put: a shard folder removed under us is written again. */
    for (int attempt = 0;; attempt++) {
        int err = 0;
        cckey_status st = install_once(s, key, entry, n, payload, len, &err);
        if (st != CCKEY_ERR_IO || attempt == 3 || !cckey_store_retryable(err)) return st;
    }
}

typedef struct fetch {
    cckey_store *s;
    const char *key;
    void **buf;
    size_t *len;
} fetch;

static bool accept(void *user, const void *entry, size_t n, char *why, size_t why_len)
{
    fetch *f = user;
    cckey_status st = cckey_store_install(f->s, f->key, entry, n, f->buf, f->len);
    if (st != CCKEY_OK) snprintf(why, why_len, "entry refused: %s", cckey_last_error());
    return st == CCKEY_OK;
}

bool cckey_store_fetch_remote(cckey_store *s, const char *key, void **buf, size_t *len)
{
    fetch f = {s, key, buf, len};
    return cckey_remotes_fetch(s->remotes, key, accept, &f);
}

/* Read-only: the entry's bytes in an anonymous in-memory file, checked
 * there; the file is kept for the look-up's record checks. */
typedef struct held {
    const char *key;
    int fd;
} held;

static bool accept_in_memory(void *user, const void *entry, size_t n, char *why, size_t why_len)
{
    held *h = user;
    int fd = memfd_create("cckey-entry", MFD_CLOEXEC);
    cckey_status st = fd < 0 ? cckey_fail(CCKEY_ERR_IO, "memfd_create: %s", strerror(errno))
                      : !cckey_store_write_all(fd, entry, n) ? cckey_fail(CCKEY_ERR_IO, "write: %s", strerror(errno))
                                                             : cckey_entry_read(fd, h->key, NULL, NULL, NULL);
    if (st != CCKEY_OK) {
        if (fd >= 0) close(fd);
        snprintf(why, why_len, "entry refused: %s", cckey_last_error());
        return false;
    }
    h->fd = fd;
    return true;
}

int cckey_store_fetch_remote_fd(cckey_store *s, const char *key)
{
    held h = {key, -1};
    return cckey_remotes_fetch(s->remotes, key, accept_in_memory, &h) ? h.fd : -1;
}

void cckey_store_push_written(cckey_store *s, const char *key, const uint8_t *rec, uint32_t rec_len,
                              const void *payload, size_t len)
{
    if (!cckey_remotes_writable(s->remotes)) return;
    /* The entry file as put wrote it, made again in memory (reading the
     * file back would cost a read and a checksum per put). */
    uint8_t *entry = malloc(CCKEY_ENTRY_HEADER + rec_len + len);
    if (!entry) return;
    cckey_entry_header(entry, key, rec, rec_len, payload, len);
    if (rec_len) memcpy(entry + CCKEY_ENTRY_HEADER, rec, rec_len);
    if (len) memcpy(entry + CCKEY_ENTRY_HEADER + rec_len, payload, len);
    cckey_remotes_push(s->remotes, key, entry, CCKEY_ENTRY_HEADER + rec_len + len, false);
    free(entry);
}

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
