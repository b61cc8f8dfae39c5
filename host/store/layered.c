/* Remote caches under the store (see cckey_store_add_remote in cckey.h):
 * whole entry files move between the folder and the remotes, and every
 * entry that comes in is checked as a local get checks a file (the same
 * code, on the bytes received), whatever the entry format holds. */
#include "store_internal.h"
#include "../core/internal.h"
#include "../remote/remote.h"
#ifdef CCKEY_WITH_CRYPTO
#include "../entry/sign.h"
#endif

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
    bool ok = cckey_entry_write_all(fd, e->front, e->front_len) && cckey_entry_write_all(fd, e->payload, e->len) &&
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

/* Write checked bytes into the folder. As a put: a shard folder removed
 * under us is written again. */
static cckey_status install_checked(cckey_store *s, const char *key, const cckey_entry_got *e, struct stat *seen)
{
    struct stat unused;
    for (int attempt = 0;; attempt++) {
        int err = 0;
        cckey_status st = install_once(s, key, e, &err, seen ? seen : &unused);
        if (st != CCKEY_ERR_IO || attempt == 3 || !cckey_store_retryable(err)) return st;
    }
}

cckey_status cckey_store_install(cckey_store *s, const char *key, const void *entry, size_t n, size_t *payload_at,
                                 struct stat *seen)
{
    if (s->read_only) return cckey_store_writable(s, "install");
    cckey_entry_got e = {(uint8_t *)entry, n, NULL, 0};
    cckey_entry_view v = {0};
    /* Checked in memory, from the bytes received: nothing that fails is
     * ever written, and nothing is read back. */
    cckey_status st = cckey_entry_check_parts(&e, key, &v);
    if (st == CCKEY_OK) st = install_checked(s, key, &e, seen);
    if (st == CCKEY_OK && payload_at) *payload_at = CCKEY_ENTRY_HEADER + (size_t)v.rec_len;
    free(v.owned);
    return st;
}

typedef struct fetch {
    cckey_store *s;
    const char *key;
    cckey_remote_hit *hit;
} fetch;

/* A remote that signs: the entry must end in a signature its secret made. */
static cckey_status check_signed(const char *key, const uint8_t *rec, uint32_t rec_len, const void *payload,
                                 size_t len, const void *secret, size_t secret_len)
{
    if (!secret) return CCKEY_OK;
#ifdef CCKEY_WITH_CRYPTO
    return cckey_records_check_signature(key, rec, rec_len, payload, len, secret, secret_len);
#else
    (void)key, (void)rec, (void)rec_len, (void)payload, (void)len, (void)secret_len;
    return cckey_fail(CCKEY_ERR_UNAVAILABLE, "no libcrypto");   /* not reached: refused when added */
#endif
}

/* The hit a look-up gets: the payload (taken where *payload is its own
 * buffer, else copied from v) and a copy of the records. */
static bool keep_hit(cckey_remote_hit *hit, const cckey_entry_view *v, uint8_t **payload)
{
    hit->len = v->len;
    hit->rec.len = v->rec_len;
    hit->rec.version = v->version, hit->rec.variants = v->variants;
    hit->rec.bytes = malloc(v->rec_len ? v->rec_len : 1);
    if (*payload) hit->payload = *payload, *payload = NULL;
    else if ((hit->payload = malloc(v->len ? v->len : 1)) && v->len) memcpy(hit->payload, v->payload, v->len);
    if (!hit->payload || !hit->rec.bytes) {
        cckey_store_remote_hit_free(hit);
        return false;
    }
    if (v->rec_len) memcpy(hit->rec.bytes, v->rec, v->rec_len);
    return true;
}

static cckey_accept_result refused(cckey_status st, char *why, size_t why_len)
{
    snprintf(why, why_len, "entry refused: %s", cckey_last_error());
    return st == CCKEY_ERR_CORRUPT ? CCKEY_REFUSED : CCKEY_LOCAL_FAIL;
}

/* An entry received into memory: checked, then kept in the folder where it
 * can be (a folder that cannot take it is a local problem: the hit is
 * served from memory all the same). */
static cckey_accept_result accept_memory(fetch *f, cckey_rx *rx, const void *secret, size_t secret_len, char *why,
                                         size_t why_len)
{
    cckey_entry_view v = {0};
    cckey_status st = cckey_entry_check_parts(&rx->e, f->key, &v);
    if (st == CCKEY_OK) st = check_signed(f->key, v.rec, v.rec_len, v.payload, v.len, secret, secret_len);
    if (st != CCKEY_OK) {
        free(v.owned);   /* decoded, then refused for its signature */
        return refused(st, why, why_len);
    }
    cckey_accept_result res = CCKEY_TAKEN;
    if (!f->s->read_only && install_checked(f->s, f->key, &rx->e, &f->hit->seen) != CCKEY_OK) {
        snprintf(why, why_len, "%s", cckey_last_error());
        memset(&f->hit->seen, 0, sizeof f->hit->seen);
        res = CCKEY_TAKEN_NOT_KEPT;
    }
    /* The payload to hand over: decoded here (a compressed entry), else
     * the buffer it was received into, where it has one of its own. */
    uint8_t *own = v.owned ? v.owned : rx->e.len ? rx->e.payload : NULL;
    bool kept = keep_hit(f->hit, &v, &own);
    if (!own && !v.owned) rx->e.payload = NULL;   /* taken */
    if (!kept) snprintf(why, why_len, "out of memory");
    return kept ? res : CCKEY_LOCAL_FAIL;
}

/* An entry spilled into a file: checked from the file, then renamed into
 * place where it was written into the folder. */
static cckey_accept_result accept_file(fetch *f, cckey_rx *rx, const void *secret, size_t secret_len, char *why,
                                       size_t why_len)
{
    void *payload;
    size_t len;
    cckey_records rec;
    cckey_status st = cckey_entry_read(rx->fd, f->key, &payload, &len, &rec);
    if (st != CCKEY_OK) return refused(st, why, why_len);
    st = check_signed(f->key, rec.bytes, rec.len, payload, len, secret, secret_len);
    if (st != CCKEY_OK) {
        free(payload), free(rec.bytes);
        return refused(st, why, why_len);
    }
    f->hit->payload = payload, f->hit->len = len, f->hit->rec = rec;
    if (f->s->read_only) return CCKEY_TAKEN;
    char shard_dir[4096], path[4096];
    cckey_store_paths_of(f->s, f->key, shard_dir, path, sizeof path);
    if (!rx->tmp[0] || rename(rx->tmp, path) != 0) {
        snprintf(why, why_len, "%s", rx->tmp[0] ? strerror(errno) : "no temporary file could be made in it");
        return CCKEY_TAKEN_NOT_KEPT;
    }
    rx->tmp[0] = '\0';
    if (fstat(rx->fd, &f->hit->seen) != 0) memset(&f->hit->seen, 0, sizeof f->hit->seen);
    cckey_store_after_put(f->s, rx->total);
    return CCKEY_TAKEN;
}

/* Keep a checked entry in the folder, and hand its payload to the look-up:
 * the buffer it was received into where it has one of its own. */
static cckey_accept_result accept(void *user, cckey_rx *rx, const void *secret, size_t secret_len, char *why,
                                  size_t why_len)
{
    fetch *f = user;
    return rx->fd >= 0 ? accept_file(f, rx, secret, secret_len, why, why_len)
                       : accept_memory(f, rx, secret, secret_len, why, why_len);
}

/* A large entry spills into a temporary file in its shard folder, so that
 * once checked it is renamed into place (accept_file), not copied. */
static int spill_open(void *user, const char *key, char tmp[4200])
{
    char shard_dir[4096], path[4096];
    return cckey_store_temp_open(user, key, shard_dir, path, tmp);
}

bool cckey_store_fetch_remote(cckey_store *s, const char *key, cckey_remote_hit *hit)
{
    *hit = (cckey_remote_hit){0};
    fetch f = {s, key, hit};
    cckey_spill spill = {spill_open, s};
    /* An entry the folder's size limit could not hold is not taken either. */
    return cckey_remotes_fetch(s->remotes, key, s->max_bytes, s->read_only ? NULL : &spill, accept, &f);
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
    cckey_remotes_free(s->remotes);   /* their counts went to the folder's counter files with the local ones */
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
    else {
        cckey_tally t = {0};
        cckey_counters_read(s->dir, &t);
        cckey_remote_totals_of(&t, out);
        cckey_tally_free(&t);
    }
    return CCKEY_OK;
}

void cckey_store_remote_tally(const cckey_store *s, cckey_tally *t) { cckey_remote_tally(s->remotes, t); }
