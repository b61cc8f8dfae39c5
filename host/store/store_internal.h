/* The store's internals: entry format, paths, the folder walk. */
#ifndef CCKEY_STORE_INTERNAL_H
#define CCKEY_STORE_INTERNAL_H

#include "cckey.h"
#include "../md5/md5.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

/* Entry header, little-endian:
 *   0   8  magic "CCKEYBIN"
 *   8   4  format version
 *   12  4  header size (CCKEY_ENTRY_HEADER)
 *   16  8  payload length
 *   24  16 MD5 of the header (this field zeroed) followed by the payload
 *   40  131 the key
 *   171 21 zeros
 * The checksum covers the header too, so a flipped byte anywhere is caught. */
#define CCKEY_ENTRY_MAGIC "CCKEYBIN"
#define CCKEY_ENTRY_VERSION 1u
#define CCKEY_ENTRY_HEADER 192u
#define CCKEY_ENTRY_SUM_AT 24u
#define CCKEY_ENTRY_KEY_AT 40u

/* Entry file name: the key with ':' -> '-'. Temporary files start with this. */
#define CCKEY_TEMP_PREFIX ".tmp-"
#define CCKEY_NAME_LEN CCKEY_KEY_LEN

struct cckey_store {
    char *dir;
    uint64_t max_bytes;
    pthread_mutex_t lock;     /* guards the fields below */
    bool counted;             /* approx_bytes holds a recount */
    uint64_t approx_bytes;    /* folder size as this handle believes it */
    unsigned puts_since_count;
    bool evicting;
    struct cckey_remotes *remotes;   /* remote caches under this folder, or NULL */
    _Atomic uint64_t hits, misses;   /* look-ups since the last flush (counters.c) */
};

/* Hit and miss counters (counters.c): cckey_store_get counts around this;
 * close flushes to DIR/stats; reading sums the folder's and this handle's. */
cckey_status cckey_store_get_uncounted(cckey_store *s, const char *key, void **buf, size_t *len);
void cckey_store_flush_counters(cckey_store *s);
void cckey_store_read_counters(cckey_store *s, uint64_t *hits, uint64_t *misses);

/* DIR/cckey.conf's max_size, 0 when none (folder_conf.c). */
uint64_t cckey_store_conf_max_bytes(const char *dir);

/* Test hook (test builds only): called by put at each stage of a write
 * (see put's stages), so a test can kill the writer at a chosen point. */
enum { CCKEY_STORE_STAGE_OPENED = 1, CCKEY_STORE_STAGE_CHUNK, CCKEY_STORE_STAGE_SYNCED,
       CCKEY_STORE_STAGE_RENAMED };
#ifdef CCKEY_TESTING
extern void (*cckey_store_test_hook)(int stage);
#endif
/* Payload bytes written between two CHUNK calls of the hook. */
#define CCKEY_STORE_CHUNK (1u << 20)

/* A key as cckey_make_key writes it: lowercase hex fields joined by ':'. */
bool cckey_store_key_ok(const char *key);
/* File name of a key (CCKEY_NAME_LEN characters and a NUL). */
void cckey_store_key_to_name(char name[CCKEY_NAME_LEN + 1], const char *key);
/* The key of an entry file name; false if the name is not an entry's. */
bool cckey_store_name_to_key(char key[CCKEY_KEY_LEN + 1], const char *name);
/* The shard folder name of a key: two hex digits and a NUL. */
void cckey_store_shard_of(char shard[3], const char *key);

/* Fill a header for key and payload (computes the checksum). */
void cckey_entry_header(uint8_t hdr[CCKEY_ENTRY_HEADER], const char *key, const void *payload, uint64_t len);

/* Read and check the entry open on fd, which must be named for key. On
 * CCKEY_OK *payload (malloc'ed, non-NULL) and *len hold the payload; when
 * payload is NULL only the checks run. CCKEY_ERR_CORRUPT says why in
 * cckey_last_error(). */
cckey_status cckey_entry_read(int fd, const char *key, void **payload, size_t *len);

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
bool cckey_store_write_all(int fd, const void *data, size_t len);
/* Whether a failed write is worth doing again on a shared folder (the shard
 * folder vanished, ESTALE, EBUSY). */
bool cckey_store_retryable(int err);
void cckey_store_sync_dir(const char *dir);

/* The whole entry file of key, checked as a get checks it (*buf malloc'ed). */
cckey_status cckey_store_read_entry(cckey_store *s, const char *key, void **buf, size_t *len);
/* Keep an entry file's bytes under key: written to a temporary file, checked
 * there as a get checks it, then renamed into place. payload (may be NULL)
 * receives the payload on success. CCKEY_ERR_CORRUPT when the bytes fail. */
cckey_status cckey_store_install(cckey_store *s, const char *key, const void *entry, size_t n, void **payload,
                                 size_t *len);

/* Remote layering (layered.c): on a local miss, and after a local put. */
bool cckey_store_fetch_remote(cckey_store *s, const char *key, void **buf, size_t *len);
void cckey_store_push_written(cckey_store *s, const char *key, const void *payload, size_t len);
void cckey_store_drop_remotes(cckey_store *s);

/* Called after a put of `bytes` on disk: recounts and evicts when needed. */
void cckey_store_after_put(cckey_store *s, uint64_t bytes);

/* Little-endian helpers. */
static inline void cckey_put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void cckey_put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint32_t cckey_get_le32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
static inline uint64_t cckey_get_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

#endif
