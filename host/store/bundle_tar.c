/* Bundles as tar archives (libarchive): one regular file per entry, named
 * as in the folder (SHARD/NAME, see cckey_store_open), in POSIX pax format
 * (names are longer than ustar's 100 bytes), optionally zstd-compressed. So
 * `tar -tf` lists a bundle, `tar -xf` unpacks it into a store folder, and a
 * tar of a store folder imports.
 *
 * An archive is untrusted input. Its member names are never used as paths:
 * an entry is written where its key says, by the same install as a remote
 * hit, after the same checks as a look-up. Members with an absolute path, a
 * ".." component, links, devices, FIFOs and the like are refused unread;
 * folders and files that are no entry (CACHEDIR.TAG, cckey.conf, the stats
 * files of a tarred folder) are skipped. */
#include "store_internal.h"
#include "../core/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef CCKEY_WITH_ARCHIVE
#include "archive_api.h"

/* The largest member an import reads (as the first bundles did). */
#define MEMBER_MAX ((int64_t)1 << 40)

typedef struct tar_out {
    const cckey_archive_api *ar;
    struct archive *a;
    struct archive_entry *e;
    time_t when;
    uint64_t n;
} tar_out;

static cckey_status archive_failed(const cckey_archive_api *ar, struct archive *a, const char *what)
{
    int err = ar->error_number(a);
    return cckey_fail(err == ENOMEM ? CCKEY_ERR_NO_MEMORY : CCKEY_ERR_IO, "%s the bundle: %s", what,
                      ar->error_string(a) ? ar->error_string(a) : strerror(err));
}

/* One entry file as the member SHARD/NAME. */
static cckey_status write_member(tar_out *o, const char *key, const void *entry, size_t n)
{
    char shard[3], name[CCKEY_NAME_LEN + 1], path[CCKEY_NAME_LEN + 8];
    cckey_entry_shard_of(shard, key);
    cckey_entry_name_of(name, key);
    snprintf(path, sizeof path, "%s/%s", shard, name);
    const cckey_archive_api *ar = o->ar;
    ar->entry_clear(o->e);
    ar->entry_set_pathname(o->e, path);
    ar->entry_set_filetype(o->e, AE_IFREG);
    ar->entry_set_perm(o->e, 0644);
    ar->entry_set_size(o->e, (la_int64_t)n);
    ar->entry_set_mtime(o->e, o->when, 0);
    if (ar->write_header(o->a, o->e) != ARCHIVE_OK || ar->write_data(o->a, entry, n) != (la_ssize_t)n)
        return archive_failed(ar, o->a, "writing");
    o->n++;
    return CCKEY_OK;
}

/* key's entry into the archive when it is whole; *absent counts the keys
 * without one. */
static cckey_status export_key(cckey_store *s, tar_out *o, const char *key, uint64_t *absent)
{
    void *entry;
    size_t n;
    cckey_status st = cckey_store_read_entry(s, key, &entry, &n);
    if (st == CCKEY_ERR_NOT_FOUND || st == CCKEY_ERR_CORRUPT) {   /* damaged or vanished: left out */
        cckey_clear_error();
        if (absent) (*absent)++;
        return CCKEY_OK;
    }
    if (st != CCKEY_OK) return st;
    st = write_member(o, key, entry, n);
    free(entry);
    return st;
}

typedef struct export_walk {
    cckey_store *s;
    tar_out *o;
    cckey_status st;
} export_walk;

static int export_one(void *user, int kind, const char *path, const char *name, const struct stat *st)
{
    (void)path, (void)st;
    export_walk *x = user;
    char key[CCKEY_KEY_LEN + 1];
    if (kind != CCKEY_WALK_ENTRY || !cckey_entry_key_of(key, name)) return 0;
    x->st = export_key(x->s, x->o, key, NULL);
    return x->st != CCKEY_OK;
}

static cckey_status export_entries(cckey_store *s, tar_out *o, const char *const *keys, size_t n_keys,
                                   uint64_t *absent)
{
    if (keys) {
        cckey_status st = CCKEY_OK;
        for (size_t i = 0; i < n_keys && st == CCKEY_OK; i++) st = export_key(s, o, keys[i], absent);
        return st;
    }
    export_walk x = {s, o, CCKEY_OK};
    if (cckey_store_walk(s, export_one, &x) == -1) return cckey_fail(CCKEY_ERR_IO, "%s: %s", s->dir, strerror(errno));
    return x.st;
}

cckey_status cckey_bundle_write_tar(cckey_store *s, const char *const *keys, size_t n_keys, int fd, bool zstd,
                                    uint64_t *exported, uint64_t *missing)
{
    const char *no_archive = NULL;
    const cckey_archive_api *ar = cckey_archive_load(&no_archive);
    if (!ar) return cckey_fail(CCKEY_ERR_UNAVAILABLE, "tar bundles need libarchive: %s", no_archive);
    tar_out o = {ar, ar->write_new(), ar->entry_new(), time(NULL), 0};
    if (!o.a || !o.e) {
        ar->write_free(o.a), ar->entry_free(o.e);
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
    }
    uint64_t absent = 0;
    cckey_status st = CCKEY_OK;
    if (ar->write_set_format_pax_restricted(o.a) != ARCHIVE_OK ||
        (zstd && ar->write_add_filter_zstd(o.a) != ARCHIVE_OK) ||
        ar->write_set_bytes_in_last_block(o.a, 1) != ARCHIVE_OK || ar->write_open_fd(o.a, fd) != ARCHIVE_OK)
        st = archive_failed(ar, o.a, "starting");
    if (st == CCKEY_OK) st = export_entries(s, &o, keys, n_keys, &absent);
    /* Close writes the end of the archive (and of the zstd frame). */
    if (ar->write_close(o.a) != ARCHIVE_OK && st == CCKEY_OK) st = archive_failed(ar, o.a, "finishing");
    ar->entry_free(o.e);
    ar->write_free(o.a);
    if (st != CCKEY_OK) return st;
    if (exported) *exported = o.n;
    if (missing) *missing = absent;
    return CCKEY_OK;
}

/* The bytes import peeked at to tell the formats apart, then the rest. */
typedef struct tar_in {
    const cckey_archive_api *ar;
    int fd;
    const uint8_t *head;
    size_t head_len;
    bool head_given;
    uint8_t tail[1024];   /* the stream's last bytes so far: the end-of-archive mark, if whole */
    size_t tail_len;
    uint8_t buf[65536];
} tar_in;

static void keep_tail(tar_in *in, const uint8_t *p, size_t n)
{
    size_t cap = sizeof in->tail;
    if (n >= cap) {
        memcpy(in->tail, p + n - cap, cap), in->tail_len = cap;
        return;
    }
    size_t keep = in->tail_len + n > cap ? cap - n : in->tail_len;
    memmove(in->tail, in->tail + in->tail_len - keep, keep);
    memcpy(in->tail + keep, p, n);
    in->tail_len = keep + n;
}

static la_ssize_t read_cb(struct archive *a, void *user, const void **out)
{
    tar_in *in = user;
    if (!in->head_given) {
        in->head_given = true;
        *out = in->head;
        keep_tail(in, in->head, in->head_len);
        return (la_ssize_t)in->head_len;
    }
    for (;;) {
        ssize_t r = read(in->fd, in->buf, sizeof in->buf);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) in->ar->set_error(a, errno, "%s", strerror(errno));
        if (r > 0) keep_tail(in, in->buf, (size_t)r);
        *out = in->buf;
        return r;
    }
}

/* Whether a member's path is safe to think about: relative, no "..". */
static bool safe_path(const char *p)
{
    if (!p || !*p || *p == '/') return false;
    for (const char *c = p; *c;) {
        size_t n = strcspn(c, "/");
        if (n == 2 && c[0] == '.' && c[1] == '.') return false;
        c += n;
        while (*c == '/') c++;
    }
    return true;
}

/* What a member is: an entry (its key in key), something to skip, or
 * something to refuse. */
enum { MEMBER_ENTRY, MEMBER_SKIP, MEMBER_UNSAFE };
static int classify(const cckey_archive_api *ar, struct archive_entry *e, char key[CCKEY_KEY_LEN + 1])
{
    const char *path = ar->entry_pathname(e);
    if (!safe_path(path) || ar->entry_hardlink(e) || ar->entry_symlink(e)) return MEMBER_UNSAFE;
    mode_t type = ar->entry_filetype(e);
    if (type == AE_IFDIR) return MEMBER_SKIP;
    if (type != AE_IFREG) return MEMBER_UNSAFE;   /* devices, FIFOs, sockets */
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return cckey_entry_key_of(key, base) ? MEMBER_ENTRY : MEMBER_SKIP;
}

static cckey_status read_failed(const cckey_archive_api *ar, struct archive *a, uint64_t members);

/* The member's bytes (its header's size, at most MEMBER_MAX), then kept
 * as any bundle's entry. */
static cckey_status import_member(cckey_store *s, const cckey_archive_api *ar, struct archive *a, struct archive_entry *e, const char *key,
                                  unsigned flags, cckey_import_report *r)
{
    la_int64_t size = ar->entry_size(e);
    if (!ar->entry_size_is_set(e) || size < 0 || size > MEMBER_MAX) {
        r->refused++;
        return CCKEY_OK;
    }
    uint8_t *buf = malloc(size ? (size_t)size : 1);
    if (!buf) return cckey_fail(CCKEY_ERR_NO_MEMORY, "no memory for a %lld-byte entry", (long long)size);
    size_t got = 0;
    while (got < (size_t)size) {
        la_ssize_t k = ar->read_data(a, buf + got, (size_t)size - got);
        if (k <= 0) {
            free(buf);
            return k < 0 ? read_failed(ar, a, 1) : cckey_fail(CCKEY_ERR_CORRUPT, "the bundle ends early (cut short?)");
        }
        got += (size_t)k;
    }
    cckey_status st = cckey_bundle_keep(s, key, buf, got, flags, r);
    free(buf);
    return st;
}

/* libarchive's verdict on the archive's end: a cut stream, or damage. */
static cckey_status read_failed(const cckey_archive_api *ar, struct archive *a, uint64_t members)
{
    const char *why = ar->error_string(a) ? ar->error_string(a) : "unreadable";
    int err = ar->error_number(a);
    if (err == EIO || err == EBADF || err == EISDIR || err == ENOMEM)   /* the file, not the archive */
        return cckey_fail(err == ENOMEM ? CCKEY_ERR_NO_MEMORY : CCKEY_ERR_IO, "reading the bundle: %s", why);
    if (!members && !strstr(why, "runcated"))
        return cckey_fail(CCKEY_ERR_CORRUPT, "not a cckey bundle (neither a tar archive nor CCKEYBND: %s)", why);
    if (strstr(why, "runcated")) return cckey_fail(CCKEY_ERR_CORRUPT, "the bundle ends early (cut short?): %s", why);
    return cckey_fail(CCKEY_ERR_CORRUPT, "damaged bundle: %s", why);
}

/* libarchive ends a tar at its end-of-archive mark (two zero blocks) and,
 * as some writers omit the mark, also at a clean end of the stream between
 * members: where a bundle cut on a block boundary ends. cckey's bundles
 * always have the mark and nothing after it, so an uncompressed bundle
 * must end in 1,024 zero bytes. A compressed one is cut inside its frame,
 * which the decompressor reports. */
static cckey_status check_end(struct archive *a, const tar_in *in)
{
    if (in->ar->filter_count(a) > 1) return CCKEY_OK;   /* a decompressor below the tar reader */
    bool marked = in->tail_len == sizeof in->tail;
    for (size_t i = 0; marked && i < in->tail_len; i++) marked = in->tail[i] == 0;
    return marked ? CCKEY_OK : cckey_fail(CCKEY_ERR_CORRUPT, "the bundle ends early (cut short?): no end-of-archive mark");
}

static cckey_status read_members(cckey_store *s, struct archive *a, const tar_in *in, unsigned flags,
                                 cckey_import_report *r)
{
    const cckey_archive_api *ar = in->ar;
    struct archive_entry *e;
    uint64_t members = 0;
    for (;;) {
        int rc = ar->read_next_header(a, &e);
        if (rc == ARCHIVE_EOF) return check_end(a, in);
        if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) return read_failed(ar, a, members);
        members++;
        char key[CCKEY_KEY_LEN + 1];
        int kind = classify(ar, e, key);
        if (kind == MEMBER_UNSAFE) r->refused++, r->unsafe++;
        if (kind != MEMBER_ENTRY) continue;   /* never read, never written */
        cckey_status st = import_member(s, ar, a, e, key, flags, r);
        if (st != CCKEY_OK) return st;
    }
}

cckey_status cckey_bundle_read_tar(cckey_store *s, int fd, const uint8_t *head, size_t head_len, unsigned flags,
                                   cckey_import_report *r)
{
    const char *no_archive = NULL;
    const cckey_archive_api *ar = cckey_archive_load(&no_archive);
    if (!ar) return cckey_fail(CCKEY_ERR_UNAVAILABLE, "tar bundles need libarchive: %s", no_archive);
    struct archive *a = ar->read_new();
    tar_in *in = malloc(sizeof *in);
    if (!a || !in) {
        ar->read_free(a), free(in);
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
    }
    *in = (tar_in){.ar = ar, .fd = fd, .head = head, .head_len = head_len};
    /* Filters built into libarchive only: never an external program. */
    ar->read_support_format_tar(a);
    ar->read_support_filter_zstd(a);
    ar->read_support_filter_gzip(a);
    ar->read_support_filter_xz(a);
    cckey_status st = ar->read_open(a, in, NULL, read_cb, NULL) == ARCHIVE_OK ? read_members(s, a, in, flags, r)
                                                                                 : read_failed(ar, a, 0);
    ar->read_free(a);
    free(in);
    return st;
}

#else

cckey_status cckey_bundle_write_tar(cckey_store *s, const char *const *keys, size_t n_keys, int fd, bool zstd,
                                    uint64_t *exported, uint64_t *missing)
{
    (void)s, (void)keys, (void)n_keys, (void)fd, (void)zstd, (void)exported, (void)missing;
    return cckey_fail(CCKEY_ERR_UNAVAILABLE, "bundles need libarchive, and this library was built without it");
}

cckey_status cckey_bundle_read_tar(cckey_store *s, int fd, const uint8_t *head, size_t head_len, unsigned flags,
                                   cckey_import_report *r)
{
    (void)s, (void)fd, (void)head, (void)head_len, (void)flags, (void)r;
    return cckey_fail(CCKEY_ERR_UNAVAILABLE, "tar bundles need libarchive, and this library was built without it");
}

#endif
