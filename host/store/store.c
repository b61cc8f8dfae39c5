/* The store: open, get, put. Layout and guarantees are in cckey.h. */
#include "store_internal.h"
#include "../core/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const cckey_store_hook_table *cckey_store_hooks;

static pthread_once_t host_once = PTHREAD_ONCE_INIT;
static char host_tag[9];

static void make_host_tag(void)
{
    char name[256] = "";
    gethostname(name, sizeof name - 1);
    uint8_t d[CCKEY_MD5_DIGEST];
    char hex[32];
    cckey_md5(name, strlen(name), d);
    cckey_hex(hex, d);
    memcpy(host_tag, hex, 8);
}

const char *cckey_store_host_tag(void)
{
    pthread_once(&host_once, make_host_tag);
    return host_tag;
}

/* mkdir -p: each missing component in turn. *created tells whether dir
 * itself was made here: when any component was, the last one was too. */
static int make_dirs(const char *dir, bool *created)
{
    char *p = strdup(dir);
    if (!p) return ENOMEM;
    int err = 0;
    for (char *q = p + 1;; q++) {
        if (*q == '/' || *q == '\0') {
            char c = *q;
            *q = '\0';
            bool made = mkdir(p, 0777) == 0;
            if (!made && errno != EEXIST) err = errno;
            *q = c;
            if (made) *created = true;
            if (!c || err) break;
        }
    }
    free(p);
    return err;
}

/* Backup tools know this file: a cache need not be backed up. Written only
 * into a folder the store itself created: --cache-dir ~ must not mark a
 * home folder as something backups may skip. */
static void tag_cache_dir(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/CACHEDIR.TAG", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) return;
    static const char tag[] = "Signature: 8a477f597d28d172789f06886806bc55\n"
                              "# This folder is a cckey kernel cache; see cckey cache --help.\n";
    ssize_t w = write(fd, tag, sizeof tag - 1);
    (void)w;
    close(fd);
}

/* Both opens: check dir, make it (unless read-only), fill a handle. */
static cckey_status open_handle(cckey_store **out, const char *dir, uint64_t max_bytes, bool read_only)
{
    if (!out) return cckey_fail(CCKEY_ERR_INVALID_ARG, "out is NULL");
    *out = NULL;
    if (!dir || !*dir) return cckey_fail(CCKEY_ERR_INVALID_ARG, "no store folder given");
    if (strlen(dir) > 3000) return cckey_fail(CCKEY_ERR_INVALID_ARG, "store folder path too long");
    bool created = false;
    int err = read_only ? 0 : make_dirs(dir, &created);
    struct stat st;
    if (err == 0 && stat(dir, &st) != 0) err = errno;
    /* Read-only, a folder that is not there holds nothing: every look-up misses. */
    bool missing = read_only && err == ENOENT;
    if (err && !missing) return cckey_fail(CCKEY_ERR_IO, "%s: %s", dir, strerror(err));
    if (!missing && !S_ISDIR(st.st_mode)) return cckey_fail(CCKEY_ERR_IO, "%s: not a folder", dir);
    cckey_store *s = calloc(1, sizeof *s);
    if (!s || !(s->dir = strdup(dir))) {
        free(s);
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
    }
    size_t n = strlen(s->dir);
    while (n > 1 && s->dir[n - 1] == '/') s->dir[--n] = '\0';
    s->read_only = read_only;
    /* No limit given: the folder's own (cckey.conf max_size), if any. */
    if (!read_only) s->max_bytes = max_bytes ? max_bytes : cckey_store_conf_max_bytes(s->dir);
    if (!read_only) s->max_age_s = cckey_store_conf_max_age(s->dir);   /* and its max_age */
    if (!read_only) s->compress = cckey_store_conf_compression(s->dir, &s->compress_level);
    pthread_mutex_init(&s->lock, NULL);
    if (created) tag_cache_dir(s->dir);
    *out = s;
    return CCKEY_OK;
}

cckey_status cckey_store_open(cckey_store **out, const char *dir, uint64_t max_bytes)
{
    return open_handle(out, dir, max_bytes, false);
}

cckey_status cckey_store_open_read_only(cckey_store **out, const char *dir)
{
    return open_handle(out, dir, 0, true);
}

cckey_status cckey_store_set_compression(cckey_store *s, cckey_compression method, int level)
{
    if (!s) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL store");
    if (method != CCKEY_COMPRESSION_NONE && method != CCKEY_COMPRESSION_ZSTD)
        return cckey_fail(CCKEY_ERR_INVALID_ARG, "unknown compression method %d", (int)method);
    if (method == CCKEY_COMPRESSION_ZSTD && !cckey_compress_level_ok(0))
        return cckey_fail(CCKEY_ERR_UNAVAILABLE, "this library was built without libzstd");
    if (method == CCKEY_COMPRESSION_ZSTD && !cckey_compress_level_ok(level))
        return cckey_fail(CCKEY_ERR_INVALID_ARG, "zstd has no compression level %d", level);
    s->compress = method == CCKEY_COMPRESSION_ZSTD;
    s->compress_level = level;
    return CCKEY_OK;
}

cckey_status cckey_store_writable(const cckey_store *s, const char *who)
{
    if (s && s->read_only) return cckey_fail(CCKEY_ERR_INVALID_ARG, "%s: the store was opened read-only", who);
    return CCKEY_OK;
}

void cckey_store_close(cckey_store *s)
{
    if (!s) return;
    cckey_store_flush_counters(s);
    cckey_store_drop_remotes(s);
    pthread_mutex_destroy(&s->lock);
    free(s->dir);
    free(s);
}

void cckey_store_free_buffer(void *buf) { free(buf); }

void cckey_store_paths_of(const cckey_store *s, const char *key, char *shard_dir, char *path, size_t cap)
{
    char shard[3], name[CCKEY_NAME_LEN + 1];
    cckey_entry_shard_of(shard, key);
    cckey_entry_name_of(name, key);
    snprintf(shard_dir, cap, "%s/%s", s->dir, shard);
    snprintf(path, cap, "%s/%s/%s", s->dir, shard, name);
}

int cckey_store_open_entry(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return errno == ELOOP ? CCKEY_ENTRY_NOT_REGULAR : -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return CCKEY_ENTRY_NOT_REGULAR;
    }
    return fd;
}

static bool absent(int fd)
{
    return fd == CCKEY_ENTRY_NOT_REGULAR || errno == ENOENT || errno == ENOTDIR || errno == ESTALE;
}

/* The build of an entry (records rec, payload *buf of *len bytes) that lk
 * may be served, its binary moved to the front of *buf; on a miss *buf is
 * freed and NULL. */
static cckey_status serve_build(const cckey_records *rec, const cckey_lookup *lk, void **buf, size_t *len,
                                cckey_lookup_info *info)
{
    cckey_variant v;
    cckey_status st = cckey_variants_choose(rec, *len, lk, &v, &info->variant, &info->variants, &info->why);
    if (st != CCKEY_OK) {
        free(*buf);   /* stale: a miss; the entry stays for the next put to replace or add to */
        *buf = NULL;
        info->variant = 0;
        return st;
    }
    if (v.at) memmove(*buf, (uint8_t *)*buf + v.at, (size_t)v.len);
    *len = (size_t)v.len;
    return CCKEY_OK;
}

/* The entry open on fd, checked, then its builds against lk. path: the
 * folder's file, which a writable handle removes when corrupt and marks
 * used on a hit. */
static cckey_status check_entry(cckey_store *s, int fd, const char *path, const char *key, const cckey_lookup *lk,
                                void **buf, size_t *len, cckey_lookup_info *info)
{
    cckey_records rec;
    cckey_status st = cckey_entry_read(fd, key, buf, len, &rec);
    if (st == CCKEY_ERR_IO && errno == ESTALE) {
        /* The entry was replaced or removed on the server while we read
         * it (NFS): a miss, not a failure. */
        info->why = CCKEY_MISS_ABSENT;
        return cckey_fail(CCKEY_ERR_NOT_FOUND, "entry went stale while read");
    }
    info->why = st == CCKEY_OK ? CCKEY_MISS_NONE : st == CCKEY_ERR_CORRUPT ? CCKEY_MISS_CORRUPT : CCKEY_MISS_ERROR;
    if (st == CCKEY_OK) st = serve_build(&rec, lk, buf, len, info);
    free(rec.bytes);
    if (s->read_only) return st;
    /* A fingerprint mismatch may be a planted binary: removed, so that a
     * later look-up without the tuple (cckey_store_get) cannot serve it. */
    if (st == CCKEY_ERR_CORRUPT || st == CCKEY_ERR_COLLISION) {
        struct stat seen;
        if (fstat(fd, &seen) == 0) cckey_store_unlink_same(path, &seen);
    } else if (st == CCKEY_OK) {
        /* Mark as used for the eviction order (see cckey.h). Both times set
         * to now, as that needs only write access, not ownership. */
        futimens(fd, NULL);
    }
    return st;
}

/* A remote hit, checked and now in the folder at path (NULL: a read-only
 * handle's, checked in memory and not kept): its builds against lk, as
 * check_entry does for a file (the bytes are not read again). */
static cckey_status remote_hit(const char *path, const cckey_lookup *lk, cckey_remote_hit *hit, void **buf,
                               size_t *len, cckey_lookup_info *info)
{
    *buf = hit->payload, *len = hit->len;
    hit->payload = NULL;
    cckey_status st = serve_build(&hit->rec, lk, buf, len, info);
    if (st == CCKEY_ERR_COLLISION && path) {
        cckey_store_unlink_same(path, &hit->seen);   /* as check_entry: never served later without the tuple */
    }
    cckey_store_remote_hit_free(hit);
    return st;
}

cckey_status cckey_store_get_uncounted(cckey_store *s, const char *key, const cckey_lookup *lk, void **buf, size_t *len,
                                       cckey_lookup_info *info)
{
    cckey_lookup_info unused;
    if (!info) info = &unused;
    *info = (cckey_lookup_info){.why = CCKEY_MISS_ERROR};
    if (buf) *buf = NULL;
    if (!s || !buf || !len) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL store, buffer or length");
    if (!cckey_entry_key_ok(key)) return cckey_fail(CCKEY_ERR_INVALID_ARG, "not a cckey key");
    if (lk && lk->n_roots && !lk->roots) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL roots");
    char shard_dir[4096], path[4096];
    cckey_store_paths_of(s, key, shard_dir, path, sizeof path);
    int fd = cckey_store_open_entry(path);
    if (fd < 0 && absent(fd)) {
        info->why = CCKEY_MISS_ABSENT;
        cckey_remote_hit hit;
        if (!s->remotes || !cckey_store_fetch_remote(s, key, &hit))
            return cckey_fail(CCKEY_ERR_NOT_FOUND, "no entry for this key");
        info->remote = 1;
        return remote_hit(s->read_only ? NULL : path, lk, &hit, buf, len, info);
    }
    if (fd < 0) return cckey_fail(CCKEY_ERR_IO, "%s: %s", path, strerror(errno));
    cckey_status st = check_entry(s, fd, path, key, lk, buf, len, info);
    close(fd);
    return st;
}

static void hook(int stage)
{
    const cckey_store_hook_table *h = cckey_store_hooks;
    if (__builtin_expect(h != NULL, 0)) h->stage(stage);
}

void cckey_store_sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

int cckey_store_temp_open(cckey_store *s, const char *key, char shard_dir[4096], char path[4096], char tmp[4200])
{
    cckey_store_paths_of(s, key, shard_dir, path, 4096);
    static atomic_uint serial;
    uint8_t rnd[CCKEY_MD5_DIGEST];
    char hex[32];
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    unsigned n = atomic_fetch_add(&serial, 1);
    uint64_t seed[4] = {(uint64_t)now.tv_sec, (uint64_t)now.tv_nsec, n, (uint64_t)(uintptr_t)&now};
    cckey_md5(seed, sizeof seed, rnd);
    cckey_hex(hex, rnd);
    snprintf(tmp, 4200, "%s/" CCKEY_TEMP_PREFIX "%s-%ld-%.12s", shard_dir, cckey_store_host_tag(),
             (long)getpid(), hex);

    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    /* The shard folder made only when missing (its first entry, or a
     * concurrent clear removed it just now), not tried before every put. */
    if (fd < 0 && errno == ENOENT) {
        if (mkdir(shard_dir, 0777) == 0) cckey_store_sync_dir(s->dir);
        else if (errno != EEXIST) {
            cckey_fail(CCKEY_ERR_IO, "%s: %s", shard_dir, strerror(errno));
            return -1;
        }
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    }
    if (fd < 0) cckey_fail(CCKEY_ERR_IO, "%s: %s", tmp, strerror(errno));
    return fd;
}

static cckey_status put_once(cckey_store *s, const char *key, const uint8_t *hdr, const uint8_t *rec, uint32_t rec_len,
                             const void *data, size_t len, char shard_dir[4096], char path[4096], int *errp);

cckey_status cckey_store_put(cckey_store *s, const char *key, const void *data, size_t len)
{
    return cckey_store_put_ex(s, key, data, len, NULL, NULL);
}

/* The new entry, written to a temporary file and renamed over the old. */
static cckey_status write_entry(cckey_store *s, const char *key, const uint8_t *rec, uint32_t rec_len,
                                const void *data, size_t len);

cckey_status cckey_store_put_meta(cckey_store *s, const char *key, const void *data, size_t len,
                                  const cckey_entry_meta *meta)
{
    return cckey_store_put_ex(s, key, data, len, meta, NULL);
}

cckey_status cckey_store_put_ex(cckey_store *s, const char *key, const void *data, size_t len,
                                const cckey_entry_meta *meta, cckey_put_options *opt)
{
    if (!s) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL store");
    if (s->read_only) return cckey_store_writable(s, "put");
    if (!data && len) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL data with a non-zero length");
    if (!cckey_entry_key_ok(key)) return cckey_fail(CCKEY_ERR_INVALID_ARG, "not a cckey key");
    const char *unverified = opt ? opt->unverified : NULL;
    if (opt) opt->variants = 0;
    uint8_t *rec;
    uint32_t rec_len;
    cckey_status st = cckey_records_encode(meta, unverified, &rec, &rec_len);
    if (st != CCKEY_OK) return st;
    /* A build with records joins the key's other builds; one without
     * (a plain put) replaces them all. */
    cckey_merged m = {rec, rec_len, NULL, len, 1};
    if (meta || unverified) {
        st = cckey_variants_merge(s, key, rec, rec_len, data, len, &m);
        free(rec);
    }
    if (st == CCKEY_OK) st = write_entry(s, key, m.rec, m.rec_len, m.payload ? m.payload : data, m.len);
    if (st == CCKEY_OK && opt) opt->variants = m.variants;
    free(m.rec), free(m.payload);
    return st;
}

static cckey_status write_entry(cckey_store *s, const char *key, const uint8_t *rec, uint32_t rec_len,
                                const void *data, size_t len)
{
    /* Compressed in memory first: the file (and what the remotes are sent)
     * is the frame where it is smaller, the payload as it is otherwise. A
     * write that fails midway removes its temporary file either way. */
    uint8_t *packed = NULL;
    size_t stored = len;
    if (!s->compress || !cckey_compress(s->compress_level, data, len, &packed, &stored)) stored = len;
    const void *body = packed ? packed : data;
    uint64_t total = (uint64_t)stored + CCKEY_ENTRY_HEADER + rec_len;
    if (s->max_bytes && total > s->max_bytes) {
        free(packed);
        return cckey_fail(CCKEY_ERR_INVALID_ARG, "entry of %llu bytes exceeds the store's limit of %llu",
                          (unsigned long long)total, (unsigned long long)s->max_bytes);
    }
    char shard_dir[4096], path[4096];
    cckey_status st;
    /* The header (and its checksum over every byte, uncompressed) once,
     * for the folder and the remotes alike. */
    uint8_t hdr[CCKEY_ENTRY_HEADER];
    cckey_entry_header_stored(hdr, key, rec, rec_len, data, len, packed ? CCKEY_ENCODING_ZSTD : CCKEY_ENCODING_NONE,
                              stored);
    /* The remotes are sent the entry first, and answer while the folder's
     * copy is written and synced: the two waits overlap instead of adding
     * up. Should the local write then fail, a remote holds an entry the
     * folder lacks: a whole, checksummed entry under its own key, which is
     * what every other machine's remote hit is, so nothing is lost by it. */
    struct cckey_push *push = s->remotes ? cckey_store_push_begin(s, key, hdr, rec, rec_len, body, stored) : NULL;
    /* On a shared (network) folder another machine may remove the shard
     * folder with our temporary file in it, or the server may answer ESTALE
     * or EBUSY: write the entry again, a few times, before giving up. */
    for (int attempt = 0;; attempt++) {
        int err = 0;
        st = put_once(s, key, hdr, rec, rec_len, body, stored, shard_dir, path, &err);
        if (st == CCKEY_OK || attempt == 3 || !cckey_store_retryable(err)) break;
    }
    if (st == CCKEY_OK) {
        cckey_store_sync_dir(shard_dir);
        hook(CCKEY_STORE_STAGE_RENAMED);
        cckey_store_after_put(s, total);
    }
    cckey_store_push_end(s, push);
    free(packed);
    return st;
}

bool cckey_store_retryable(int err) { return err == ENOENT || err == ESTALE || err == EBUSY || err == EINTR; }

/* One write of the entry to a temporary file, renamed over path. */
static cckey_status put_once(cckey_store *s, const char *key, const uint8_t *hdr, const uint8_t *rec, uint32_t rec_len,
                             const void *data, size_t len, char shard_dir[4096], char path[4096], int *errp)
{
    char tmp[4200];
    int fd = cckey_store_temp_open(s, key, shard_dir, path, tmp);
    if (fd < 0) {
        *errp = errno;
        return CCKEY_ERR_IO;
    }
    hook(CCKEY_STORE_STAGE_OPENED);
    bool ok = cckey_entry_write_all(fd, hdr, CCKEY_ENTRY_HEADER) && cckey_entry_write_all(fd, rec, rec_len);
    for (size_t off = 0; ok && off < len; off += CCKEY_STORE_CHUNK) {
        size_t step = len - off < CCKEY_STORE_CHUNK ? len - off : CCKEY_STORE_CHUNK;
        ok = cckey_entry_write_all(fd, (const uint8_t *)data + off, step);
        hook(CCKEY_STORE_STAGE_CHUNK);
    }
    ok = ok && fsync(fd) == 0;
    int err = errno;
    if (close(fd) != 0 && ok) ok = false, err = errno;
    if (ok) hook(CCKEY_STORE_STAGE_SYNCED);
    if (!ok || rename(tmp, path) != 0) {
        if (ok) err = errno;
        unlink(tmp);
        *errp = err;
        return cckey_fail(CCKEY_ERR_IO, "writing %s: %s", path, strerror(err));
    }
    return CCKEY_OK;
}
