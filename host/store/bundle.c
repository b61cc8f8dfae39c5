/* Bundles: a store's entries in one portable stream, to ship a warmed cache
 * to a deployment or a container image (cckey_store_export/_import).
 *
 * Layout, little-endian:
 *   "CCKEYBND" | u32 version (1) | u32 0
 *   per entry:  'E' | the key (131 bytes) | u64 length | the entry file's bytes
 *   trailer:    'Z' | u64 entries | MD5 of every byte before the trailer
 * Entries are whole entry files, so each is checked on import exactly as a
 * local get checks it; the trailer catches a cut or damaged stream. */
#include "store_internal.h"
#include "../core/internal.h"
#include "../remote/remote.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUNDLE_MAGIC "CCKEYBND"
#define BUNDLE_VERSION 1u

typedef struct out_stream {
    int fd;
    cckey_md5_ctx md5;
    bool failed;
    int err;
} out_stream;

static void emit(out_stream *o, const void *p, size_t n)
{
    if (o->failed) return;
    cckey_md5_update(&o->md5, p, n);
    if (!cckey_store_write_all(o->fd, p, n)) o->failed = true, o->err = errno;
}

static void emit_entry(out_stream *o, const char *key, const void *entry, size_t n)
{
    uint8_t len[8];
    cckey_put_le64(len, n);
    emit(o, "E", 1);
    emit(o, key, CCKEY_KEY_LEN);
    emit(o, len, 8);
    emit(o, entry, n);
}

typedef struct export_all {
    cckey_store *s;
    out_stream *o;
    uint64_t n;
} export_all;

static int export_one(void *user, int kind, const char *path, const char *name, const struct stat *st)
{
    (void)path, (void)st;
    export_all *x = user;
    char key[CCKEY_KEY_LEN + 1];
    if (kind != CCKEY_WALK_ENTRY || !cckey_store_name_to_key(key, name)) return 0;
    void *entry;
    size_t n;
    /* A damaged or vanished entry is left out, not shipped. */
    if (cckey_store_read_entry(x->s, key, &entry, &n) != CCKEY_OK) return 0;
    emit_entry(x->o, key, entry, n);
    free(entry);
    x->n++;
    return x->o->failed ? -1 : 0;
}

cckey_status cckey_store_export(cckey_store *s, const char *const *keys, size_t n_keys, int fd, uint64_t *exported,
                                uint64_t *missing)
{
    if (!s || fd < 0 || (n_keys && !keys)) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL store, keys or bad fd");
    out_stream o = {.fd = fd};
    cckey_md5_init(&o.md5);
    uint8_t head[16] = BUNDLE_MAGIC;
    cckey_put_le32(head + 8, BUNDLE_VERSION);
    emit(&o, head, sizeof head);
    export_all x = {s, &o, 0};
    uint64_t absent = 0;
    if (!keys) {
        if (cckey_store_walk(s, export_one, &x) == -1 && !o.failed)
            return cckey_fail(CCKEY_ERR_IO, "%s: %s", s->dir, strerror(errno));
    }
    for (size_t i = 0; keys && i < n_keys && !o.failed; i++) {
        if (!cckey_store_key_ok(keys[i])) return cckey_fail(CCKEY_ERR_INVALID_ARG, "not a cckey key: %.140s", keys[i]);
        void *entry;
        size_t n;
        cckey_status st = cckey_store_read_entry(s, keys[i], &entry, &n);
        if (st == CCKEY_ERR_NOT_FOUND || st == CCKEY_ERR_CORRUPT) {
            absent++;
            continue;
        }
        if (st != CCKEY_OK) return st;
        emit_entry(&o, keys[i], entry, n);
        free(entry);
        x.n++;
    }
    uint8_t tail[1 + 8 + CCKEY_MD5_DIGEST] = {'Z'};
    cckey_put_le64(tail + 1, x.n);
    cckey_md5_update(&o.md5, tail, 9);
    cckey_md5_final(&o.md5, tail + 9);
    if (!o.failed && !cckey_store_write_all(fd, tail, sizeof tail)) o.failed = true, o.err = errno;
    if (o.failed) return cckey_fail(CCKEY_ERR_IO, "writing the bundle: %s", strerror(o.err));
    if (exported) *exported = x.n;
    if (missing) *missing = absent;
    return CCKEY_OK;
}

typedef struct in_stream {
    int fd;
    cckey_md5_ctx md5;
} in_stream;

/* Exactly n bytes, or false (end of stream or an error: errno, 0 at the end). */
static bool take(in_stream *in, void *p, size_t n, bool hash)
{
    uint8_t *b = p;
    for (size_t got = 0; got < n;) {
        ssize_t r = read(in->fd, b + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            if (r == 0) errno = 0;
            return false;
        }
        got += (size_t)r;
    }
    if (hash) cckey_md5_update(&in->md5, p, n);
    return true;
}

static cckey_status cut(void)
{
    if (errno) return cckey_fail(CCKEY_ERR_IO, "reading the bundle: %s", strerror(errno));
    return cckey_fail(CCKEY_ERR_CORRUPT, "the bundle ends early (cut short?)");
}

/* Where an entry goes once read: a foreign signature is refused before
 * anything is kept (see cckey_store_import in cckey.h). */
static cckey_status keep_entry(cckey_store *s, const char *key, const void *entry, size_t n, unsigned flags,
                               cckey_import_report *r)
{
    bool to_remotes = (flags & CCKEY_IMPORT_TO_REMOTES) && s->remotes;
    if (!cckey_store_key_ok(key)) {
        r->refused++;
        return CCKEY_OK;
    }
    if (to_remotes && cckey_remotes_vouch(s->remotes, key, entry, n) == CCKEY_SIG_FOREIGN) {
        r->foreign++;
        return CCKEY_OK;
    }
    cckey_status st = cckey_store_install(s, key, entry, n, NULL, NULL);
    if (st == CCKEY_ERR_CORRUPT || st == CCKEY_ERR_INVALID_ARG) {
        r->refused++;
        return CCKEY_OK;
    }
    if (st != CCKEY_OK) return st;
    r->imported++;
    unsigned push = CCKEY_PUSH_SKIP_PRESENT | (flags & CCKEY_IMPORT_SIGN_UNSIGNED ? CCKEY_PUSH_SIGN_UNSIGNED : 0);
    if (to_remotes && cckey_remotes_push(s->remotes, key, entry, n, push)) r->unsigned_held++;
    return CCKEY_OK;
}

/* One entry after its tag: installed, or counted as refused. */
static cckey_status import_entry(cckey_store *s, in_stream *in, unsigned flags, cckey_import_report *r)
{
    char key[CCKEY_KEY_LEN + 1] = "";
    uint8_t len[8];
    if (!take(in, key, CCKEY_KEY_LEN, true) || !take(in, len, 8, true)) return cut();
    uint64_t n = cckey_get_le64(len);
    if (n > ((uint64_t)1 << 40)) return cckey_fail(CCKEY_ERR_CORRUPT, "the bundle names a %llu-byte entry",
                                                    (unsigned long long)n);
    void *entry = malloc(n ? (size_t)n : 1);
    if (!entry) return cckey_fail(CCKEY_ERR_NO_MEMORY, "no memory for a %llu-byte entry", (unsigned long long)n);
    cckey_status st = take(in, entry, (size_t)n, true) ? keep_entry(s, key, entry, (size_t)n, flags, r) : cut();
    free(entry);
    return st;
}

cckey_status cckey_store_import(cckey_store *s, int fd, int to_remotes, cckey_import_report *out)
{
    if (!s || fd < 0) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL store or bad fd");
    if (s->read_only) return cckey_store_writable(s, "import");
    cckey_import_report r = {0};
    /* Any non-zero to_remotes has meant "to the remotes" since the first release. */
    unsigned flags = to_remotes ? (unsigned)to_remotes | CCKEY_IMPORT_TO_REMOTES : 0;
    in_stream in = {.fd = fd};
    cckey_md5_init(&in.md5);
    uint8_t head[16];
    if (!take(&in, head, sizeof head, true)) return errno ? cut() : cckey_fail(CCKEY_ERR_CORRUPT, "not a cckey bundle");
    if (memcmp(head, BUNDLE_MAGIC, 8) != 0) return cckey_fail(CCKEY_ERR_CORRUPT, "not a cckey bundle (bad magic)");
    if (cckey_get_le32(head + 8) != BUNDLE_VERSION)
        return cckey_fail(CCKEY_ERR_CORRUPT, "bundle format version %u, not %u", cckey_get_le32(head + 8),
                          BUNDLE_VERSION);
    cckey_status st = CCKEY_OK;
    for (;;) {
        uint8_t tag;
        if (!take(&in, &tag, 1, true)) {
            st = cut();
            break;
        }
        if (tag == 'E') {
            if ((st = import_entry(s, &in, flags, &r)) != CCKEY_OK) break;
            continue;
        }
        uint8_t tail[8 + CCKEY_MD5_DIGEST], sum[CCKEY_MD5_DIGEST];
        if (tag != 'Z') {
            st = cckey_fail(CCKEY_ERR_CORRUPT, "damaged bundle (unknown record)");
        } else if (!take(&in, tail, 8, true) || !take(&in, tail + 8, CCKEY_MD5_DIGEST, false)) {
            st = cut();
        } else {
            cckey_md5_final(&in.md5, sum);
            if (memcmp(sum, tail + 8, CCKEY_MD5_DIGEST) != 0)
                st = cckey_fail(CCKEY_ERR_CORRUPT, "damaged bundle (checksum mismatch)");
            else if (cckey_get_le64(tail) != r.imported + r.refused + r.foreign)
                st = cckey_fail(CCKEY_ERR_CORRUPT, "damaged bundle (entry count)");
        }
        break;
    }
    if (out) *out = r;
    return st;
}
