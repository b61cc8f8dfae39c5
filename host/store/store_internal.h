/* The store's internals: paths, builds, counters, the folder walk, the
 * remotes layered under it. The entry format itself is entry/entry.h. */
#ifndef CCKEY_STORE_INTERNAL_H
#define CCKEY_STORE_INTERNAL_H

#include "cckey_store.h"
#include "../entry/entry.h"
#include "../md5/md5.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

/* The entry format (header, records, builds, checksum) is entry/entry.h.
 * A put keeps at most this many builds under one key (see the format). */
#define CCKEY_MAX_VARIANTS 8u

/* A file's state now: whether it exists, and its size and content MD5. */
typedef struct cckey_file_digest {
    bool exists;
    uint64_t size;
    uint8_t md5[16];
} cckey_file_digest;
/* The state of root/rel (rel alone when root is NULL), through the memo
 * (may be NULL). *content (when not NULL) receives the bytes read (malloc'ed,
 * NUL-terminated) when the file exists. CCKEY_ERR_IO when it exists but
 * cannot be read. */
cckey_status cckey_dep_read(cckey_dep_memo *m, const char *root, const char *rel, size_t rel_len,
                            cckey_file_digest *out, char **content);
#define cckey_dep_digest(m, root, rel, rel_len, out) cckey_dep_read(m, root, rel, rel_len, out, NULL)

/* CCKEY_OK when the records match the look-up (toolchain and every
 * dependency); CCKEY_ERR_STALE with the first difference otherwise, and in
 * *why (not NULL) which kind of record differed. */
cckey_status cckey_records_match(const uint8_t *rec, uint32_t len, const cckey_lookup *lk, uint32_t version,
                                 cckey_miss *why);

/* The build a look-up serves: the newest whose records match lk (lk NULL:
 * the newest). CCKEY_OK with *v, *index and *n (the builds held); else the
 * newest build's miss, in *why and cckey_last_error(); a collision or an
 * error in any build checked is returned as it is. */
cckey_status cckey_variants_choose(const cckey_records *r, uint64_t plen, const cckey_lookup *lk, cckey_variant *v,
                                   uint32_t *index, uint32_t *n, cckey_miss *why);
/* A put's entry: the new build (records rec, binary data) in front of the
 * builds already held under key that it does not replace, within the limits
 * (see the format above). *rec_out and *payload_out are malloc'ed, or
 * *payload_out is NULL when data alone is the payload. */
typedef struct cckey_merged {
    uint8_t *rec;
    uint32_t rec_len;
    uint8_t *payload;
    size_t len;
    uint32_t variants;
} cckey_merged;
cckey_status cckey_variants_merge(cckey_store *s, const char *key, const uint8_t *rec, uint32_t rec_len,
                                  const void *data, size_t len, cckey_merged *out);

struct cckey_store {
    char *dir;
    uint64_t max_bytes;
    int64_t max_age_s;        /* cckey.conf max_age: entries unused this long go; 0: none */
    bool read_only;           /* cckey_store_open_read_only: never write */
    pthread_mutex_t lock;     /* guards the fields below */
    bool counted;             /* approx_bytes holds a recount */
    uint64_t approx_bytes;    /* folder size as this handle believes it */
    unsigned puts_since_count;
    bool evicting;
    struct cckey_remotes *remotes;   /* remote caches under this folder, or NULL */
    bool compress;            /* puts compress payloads (zstd) at compress_level */
    int compress_level;
    _Atomic uint64_t hits, misses;   /* look-ups since the last flush (counters.c) */
};

/* Hit and miss counters (counters.c): cckey_store_get counts around this;
 * close flushes to DIR/stats; reading sums the folder's and this handle's. */
cckey_status cckey_store_get_uncounted(cckey_store *s, const char *key, const cckey_lookup *lk, void **buf,
                                       size_t *len, cckey_lookup_info *info);
/* CCKEY_OK, or CCKEY_ERR_INVALID_ARG when s is read-only (who: the call). */
cckey_status cckey_store_writable(const cckey_store *s, const char *who);
void cckey_store_flush_counters(cckey_store *s);

/* Named counts (counter_files.c): summed by name; "zeroed_at" is the time
 * of the latest zeroing (zeroed), not a count. */
typedef struct cckey_tally {
    char **names;
    uint64_t *values;
    size_t n, cap;
    int64_t zeroed;     /* seconds since 1970; 0: never zeroed */
    unsigned damaged;   /* counter files that were damaged (their good lines counted) */
} cckey_tally;
bool cckey_tally_add(cckey_tally *t, const char *name, uint64_t v);   /* false: out of memory */
uint64_t cckey_tally_get(const cckey_tally *t, const char *name);
void cckey_tally_free(cckey_tally *t);

/* This handle's remote counts added to t (layered.c). */
void cckey_store_remote_tally(const cckey_store *s, cckey_tally *t);
/* The remotes' counts as the folder's counter files keep them
 * (remote_totals.c): set's counters added to t, as "remote.NAME" for all
 * remotes together and "remote@URL.NAME" per remote; or the all-remotes
 * totals read from t. */
struct cckey_remotes;
void cckey_remote_tally(const struct cckey_remotes *set, cckey_tally *t);
void cckey_remote_totals_of(const cckey_tally *t, cckey_remote_counters *out);
/* The folder's counter files, DIR/stats/0..15 (counter_files.c). */
#define CCKEY_COUNTER_FILES 16
/* Add t's counts to one of them, under its lock; false when none could be
 * updated (the counts are dropped: counters never fail a look-up). */
bool cckey_counters_add(const char *dir, const cckey_tally *t);
/* Sum them (and an older version's files not folded in yet) into t. */
void cckey_counters_read(const char *dir, cckey_tally *t);
/* Zero them all, recording now as the time they were zeroed. */
cckey_status cckey_counters_zero(const char *dir);

/* Temporary files in a shard folder start with this. */
#define CCKEY_TEMP_PREFIX ".tmp-"

/* DIR/cckey.conf's max_size, 0 when none (folder_conf.c). */
uint64_t cckey_store_conf_max_bytes(const char *dir);
/* DIR/cckey.conf's max_age in seconds, 0 when none or unreadable (folder_conf.c). */
int64_t cckey_store_conf_max_age(const char *dir);
/* DIR/cckey.conf's compression (none or zstd) and compression_level: true
 * with *level (0: zstd's default) when the folder compresses. */
bool cckey_store_conf_compression(const char *dir, int *level);

/* The stages of a put's write (see put_once in store.c). */
enum { CCKEY_STORE_STAGE_OPENED = 1, CCKEY_STORE_STAGE_CHUNK, CCKEY_STORE_STAGE_SYNCED,
       CCKEY_STORE_STAGE_RENAMED };
/* The store's test seam, as data: NULL in a release process; the testing
 * library (host/testing/store_stages.c) points it at a table whose stage
 * put calls at each stage of a write, so a test can kill the writer at a
 * chosen point. A release put pays one load and a branch never taken. */
typedef struct cckey_store_hook_table {
    void (*stage)(int stage);
} cckey_store_hook_table;
extern const cckey_store_hook_table *cckey_store_hooks;
/* Payload bytes written between two CHUNK calls of the hook. */
#define CCKEY_STORE_CHUNK (1u << 20)

/* Remove path only if it is still the file described by seen: a concurrent
 * writer may have renamed a good entry over the bad one since we opened it.
 * A small window remains between the check and the unlink; losing it costs a
 * miss, never a wrong payload. */
bool cckey_store_unlink_same(const char *path, const struct stat *seen);   /* true: removed or gone */

/* Whether a temporary file's writer is gone: the pid in its name no longer
 * exists, or the file is older than an hour. */
bool cckey_store_temp_stale(const char *name, const struct stat *st);
/* Eight hex digits naming this host in temporary file names. */
const char *cckey_store_host_tag(void);

/* Open the entry file at path for reading. Never follows a symlink and
 * never waits on a FIFO (O_NOFOLLOW | O_NONBLOCK): anything but a regular
 * file is no entry. The descriptor, or -1 with errno set (ENOENT and the
 * like), or CCKEY_ENTRY_NOT_REGULAR. */
#define CCKEY_ENTRY_NOT_REGULAR (-2)
int cckey_store_open_entry(const char *path);

/* One visit of the walk. kind: entry, temporary file, or something that is
 * not a regular file (a symlink, FIFO, folder...) under an entry's name. */
enum { CCKEY_WALK_ENTRY = 1, CCKEY_WALK_TEMP = 2, CCKEY_WALK_ODD = 3 };
typedef int (*cckey_walk_fn)(void *user, int kind, const char *path, const char *name,
                             const struct stat *st);
/* Visit every entry and temporary file in the store's shard folders, in no
 * particular order. Files that vanish in between are skipped. A non-zero
 * return from fn stops the walk and is returned. -1 when the store folder
 * cannot be read (errno set). */
int cckey_store_walk(const cckey_store *s, cckey_walk_fn fn, void *user);

/* DIR/xy and DIR/xy/NAME for a key (cap bytes each). */
void cckey_store_paths_of(const cckey_store *s, const char *key, char *shard_dir, char *path, size_t cap);
/* Open a new temporary file in key's shard folder (made when missing), and
 * fill the folder, entry and temporary paths. -1 with cckey_last_error(). */
int cckey_store_temp_open(cckey_store *s, const char *key, char shard_dir[4096], char path[4096], char tmp[4200]);
/* Whether a failed write is worth doing again on a shared folder (the shard
 * folder vanished, ESTALE, EBUSY). */
bool cckey_store_retryable(int err);
void cckey_store_sync_dir(const char *dir);

/* The whole entry file of key, checked as a get checks it (*buf malloc'ed). */
cckey_status cckey_store_read_entry(cckey_store *s, const char *key, void **buf, size_t *len);
/* Keep an entry file's bytes under key: checked in memory as a get checks
 * a file, then written to a temporary file and renamed into place (no
 * fsync: see layered.c). *payload_at (may be NULL): where the payload starts
 * in entry; *seen (may be NULL): the installed file. CCKEY_ERR_CORRUPT when
 * the bytes fail, and then nothing is written. */
cckey_status cckey_store_install(cckey_store *s, const char *key, const void *entry, size_t n, size_t *payload_at,
                                 struct stat *seen);

/* Remote layering (layered.c): on a local miss, and after a local put. A
 * remote hit, checked and installed (by a read-only handle: checked only):
 * its payload and records (malloc'ed), and the file it became (zeros when
 * not installed). */
typedef struct cckey_remote_hit {
    void *payload;
    size_t len;
    cckey_records rec;
    struct stat seen;
} cckey_remote_hit;
bool cckey_store_fetch_remote(cckey_store *s, const char *key, cckey_remote_hit *hit);
void cckey_store_remote_hit_free(cckey_remote_hit *hit);
/* A put's entry to the writable remotes, in two halves around the local
 * write (see write_entry in store.c). The parts must stay valid until
 * push_end, which is always called (NULL: nothing pending). */
struct cckey_push;
struct cckey_push *cckey_store_push_begin(cckey_store *s, const char *key, const uint8_t *hdr, const uint8_t *rec,
                                          uint32_t rec_len, const void *payload, size_t len);
void cckey_store_push_end(cckey_store *s, struct cckey_push *p);
void cckey_store_drop_remotes(cckey_store *s);

/* Bundles (bundle.c, bundle_tar.c, bundle_legacy.c). An entry read from
 * a bundle: installed (checked as a look-up checks a file) and sent on, or
 * counted in r as refused. */
cckey_status cckey_bundle_keep(cckey_store *s, const char *key, const void *entry, size_t n, unsigned flags,
                               cckey_import_report *r);
/* The tar archive of keys[0..n_keys) (NULL: every entry) to fd. */
cckey_status cckey_bundle_write_tar(cckey_store *s, const char *const *keys, size_t n_keys, int fd, bool zstd,
                                    uint64_t *exported, uint64_t *missing);
/* A tar bundle whose first head_len bytes were read already into head. */
cckey_status cckey_bundle_read_tar(cckey_store *s, int fd, const uint8_t *head, size_t head_len, unsigned flags,
                                   cckey_import_report *r);
/* A CCKEYBND bundle whose 16-byte head was read already. */
cckey_status cckey_bundle_read_legacy(cckey_store *s, int fd, const uint8_t head[16], unsigned flags,
                                      cckey_import_report *r);

/* Called after a put of `bytes` on disk: recounts and evicts when needed. */
void cckey_store_after_put(cckey_store *s, uint64_t bytes);

#endif
