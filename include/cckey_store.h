/*
 * cckey_store.h — a store of compiled kernels on disk, addressed by the keys
 * of cckey.h, with dependency records (an entry cannot serve a stale binary),
 * remote caches layered under the local folder, and bundles.
 *
 * The same ABI policy as cckey.h: structs the library fills end in reserved
 * fields, set to 0, that later releases may give a meaning without changing
 * their size. Every fallible function returns a cckey_status; names and
 * thread-safety rules are those of cckey.h.
 */
#ifndef CCKEY_STORE_H
#define CCKEY_STORE_H

#include "cckey.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* A store of compiled kernels on disk, addressed by key                     */
/* ------------------------------------------------------------------------ */

/*
 * One folder holds one store. Entries live in DIR/xy/NAME, where NAME is the
 * key with each ':' replaced by '-' and xy is the first byte, in hex, of
 * md5(key) (the key's own prefix is the device digest, so a one-device cache
 * would otherwise fall into one folder). An entry is a 192-byte header (magic,
 * format version 4, full key, payload length, the number of builds it holds,
 * a checksum over the whole entry: MD5 over the header, the records and the
 * MD5s of the payload's 4 KiB pieces), a section of typed records (what each
 * build read: see cckey_store_put_meta) and the payload. Entries of format
 * versions 3 and 2 (one build; version 2 with one MD5 over the payload) are
 * still read; version 1 entries are misses. Puts write version 4.
 *
 * Builds (variants, as ccache's manifests): one key may hold several builds,
 * each with the headers and toolchain it was built with, newest first. A
 * checked look-up serves the newest build whose records match, so editing a
 * header, warming, and restoring it hits the first build again. A put with
 * records (cckey_store_put_meta, cckey_store_put_ex) adds its build in front
 * of the ones it does not replace (a build with exactly the same records is
 * replaced), keeping at most 8 builds and, under a size limit, the older ones
 * only while the entry stays within an eighth of the limit: the oldest go
 * first. A put without records (cckey_store_put) replaces every build. Two
 * processes adding builds to one key at once may lose one of the two builds
 * (a later miss), never mix them. Remotes and bundles move whole entries,
 * every build with them.
 *
 * Many threads and processes may use one folder at once: a write goes to a
 * temporary file in the entry's folder, is fsync'ed and renamed over the
 * entry (then the folder is fsync'ed), so a reader sees the old entry, the
 * new one, or none, and a writer killed at any moment leaves at most a
 * temporary file that is never served. An entry that fails its checks
 * (truncated, a flipped byte, another key, another format version) is
 * never served: the look-up that finds it removes it and reports a miss.
 * Entries are opened without following symlinks or waiting on FIFOs:
 * anything under an entry's name that is no regular file is a miss too.
 * CACHEDIR.TAG (so that backup tools skip the cache) is written only into
 * a folder that cckey_store_open created itself.
 *
 * Size limit: least recently used first. A successful get sets the entry's
 * modification time to now; when a handle's puts push the folder past
 * max_bytes (the sizes of the entry files), it removes the entries with the
 * oldest modification times until the folder is at 90% of the limit. The
 * limit is soft: each handle counts its own writes between full recounts
 * (every 256 puts and whenever its count passes the limit), so writers in
 * several processes can overshoot it briefly.
 */

/** A store handle. Opaque; safe to share between threads. */
typedef struct cckey_store cckey_store;

/** What a store folder holds (cckey_store_stats). */
typedef struct cckey_store_usage {
    uint64_t entries;     /**< entry files (not checked; see cckey_store_verify) */
    uint64_t bytes;       /**< their total size, headers included */
    uint64_t max_bytes;   /**< this handle's limit; 0 for none */
    uint64_t temp_files;  /**< unfinished writes: live, or left by a killed writer */
    uint64_t temp_bytes;  /**< their total size */
    uint64_t hits;        /**< cckey_store_get look-ups that found an entry, by every
                               process, since the folder's first (see below) */
    uint64_t misses;      /**< look-ups that found none, or a damaged one (a remote
                               may have served them: see cckey_store_remote_counters) */
    int64_t zeroed;       /**< when the counters were last zeroed (seconds since 1970;
                               0: never, see cckey_store_zero_counters) */
    uint32_t damaged;     /**< counter files found damaged: their readable lines are
                               counted, and the next writer rewrites them whole */
    uint32_t reserved32;  /**< 0 */
    int64_t max_age;      /**< this handle's age limit in seconds (cckey.conf max_age); 0: none */
    uint64_t reserved[2]; /**< 0; room to grow without changing the size */
} cckey_store_usage;

/** What cckey_store_verify found. */
typedef struct cckey_store_report {
    uint64_t ok;             /**< entries that passed every check */
    uint64_t removed;        /**< entries that failed a check (or were no regular
                                  file: a symlink, FIFO, folder) and were removed */
    uint64_t temps_removed;  /**< temporary files of dead writers removed */
    uint64_t kept;           /**< entries that failed a check but could not be
                                  removed (a read-only folder, say) */
    uint64_t unreadable;     /**< entries that could not be read, so not checked */
    uint64_t reserved[3];    /**< 0; room to grow without changing the size */
} cckey_store_report;

/**
 * Open (and create, with missing parents) the store in folder dir.
 * @param out        receives the handle; not NULL.
 * @param dir        the folder; not NULL.
 * @param max_bytes  size limit for this handle's writes; 0 for the folder's
 *                   own limit, the max_size line of DIR/cckey.conf ("max_size
 *                   = 10G"; K, M, G, T are binary units), else none.
 * @return CCKEY_OK, CCKEY_ERR_INVALID_ARG, CCKEY_ERR_NO_MEMORY, or
 *         CCKEY_ERR_IO when dir cannot be created or is not a folder.
 */
CCKEY_API cckey_status cckey_store_open(cckey_store **out, const char *dir, uint64_t max_bytes);

/**
 * Open the store in folder dir for looking only: nothing is ever written,
 * in the folder or on a remote. A missing folder is an empty store (it is
 * not created). Look-ups through this handle do not remove an entry that
 * fails its checks, do not mark entries used, count no hits or misses, and
 * check a remote's entry in memory instead of copying it into the folder.
 * Calls that would write (put, trim, verify, clear, import) fail with
 * CCKEY_ERR_INVALID_ARG. For "is this cached?" questions (cckey warm --check).
 * @return as cckey_store_open (CCKEY_ERR_IO: dir exists and is not a folder).
 */
CCKEY_API cckey_status cckey_store_open_read_only(cckey_store **out, const char *dir);

/** Payload encodings for cckey_store_set_compression. */
typedef enum cckey_compression {
    CCKEY_COMPRESSION_NONE = 0, /**< payloads written as they are (entry format 4) */
    CCKEY_COMPRESSION_ZSTD = 1, /**< one zstd frame per payload where that is smaller (format 5) */
} cckey_compression;

/**
 * How this handle's puts store payloads. cckey_store_open takes the folder's
 * own setting, the compression and compression_level lines of DIR/cckey.conf
 * ("compression = zstd", "compression_level = 3"); the default is none.
 * Compressed or not, every entry reads back byte for byte, and a handle of
 * either kind reads both (entries move between folders and remotes as they
 * are stored).
 * @param level  zstd's level (negative: faster; 0: zstd's default, 3); ignored
 *               for CCKEY_COMPRESSION_NONE.
 * @return CCKEY_OK, CCKEY_ERR_INVALID_ARG (NULL handle, unknown method or a
 *         level zstd does not have), CCKEY_ERR_UNAVAILABLE (built without libzstd).
 */
CCKEY_API cckey_status cckey_store_set_compression(cckey_store *s, cckey_compression method, int level);

/** Close a handle. NULL is a no-op. No other thread may be using it. */
CCKEY_API void cckey_store_close(cckey_store *s);

/**
 * Read the payload stored under key (of a key with several builds, the
 * newest build's), checking every byte of the entry, and mark the entry as
 * just used.
 * @param key  a key as cckey_make_key writes it (CCKEY_KEY_LEN characters,
 *             NUL-terminated); anything else is CCKEY_ERR_INVALID_ARG.
 * @param buf  receives a new buffer (free it with cckey_store_free_buffer);
 *             set to NULL on any error. A 0-byte payload gives a non-NULL
 *             buffer.
 * @param len  receives the payload's length.
 * @return CCKEY_OK; CCKEY_ERR_NOT_FOUND (no entry); CCKEY_ERR_CORRUPT (an
 *         entry failed its checks and was removed: a miss too);
 *         CCKEY_ERR_IO; CCKEY_ERR_NO_MEMORY; CCKEY_ERR_INVALID_ARG.
 * Without the tuple this cannot check an entry's fingerprint: where others
 * may write the folder or its remotes, use cckey_store_get_checked with
 * cckey_lookup.tuple (below) and the README's threat model.
 */
CCKEY_API cckey_status cckey_store_get(cckey_store *s, const char *key, void **buf, size_t *len);

/** Free a buffer from cckey_store_get. NULL is a no-op. */
CCKEY_API void cckey_store_free_buffer(void *buf);

/**
 * Store len bytes under key, replacing any entry it has, atomically and
 * durably (see above). May then evict least recently used entries.
 * @param data  may be NULL only when len is 0.
 * @return CCKEY_OK; CCKEY_ERR_INVALID_ARG (a malformed key, or an entry larger
 *         than the handle's limit); CCKEY_ERR_IO (nothing was stored).
 */
CCKEY_API cckey_status cckey_store_put(cckey_store *s, const char *key, const void *data, size_t len);

/**
 * Count the entries and temporary files of the folder (no checks), and its
 * hit and miss counters. Counters live in at most 16 files, DIR/stats/0 to
 * DIR/stats/15, as ccache keeps its statistics: a closing handle adds its
 * counts to one of them (picked by pid) under that file's fcntl lock
 * (DIR/stats/N.lock, waited for at most a second, then the counts are
 * dropped) and renames the new file into place; this sums the files, and
 * this handle's counts not yet written. A process killed before closing
 * loses its own counts, never another's. A damaged counter file is read as
 * far as it is good (out->damaged) and rewritten by its next writer; the
 * per-process files of older versions (DIR/stats/HOST-PID) are folded in
 * and removed by the next writer.
 */
CCKEY_API cckey_status cckey_store_stats(cckey_store *s, cckey_store_usage *out);

/**
 * Remove the entry stored under key from the folder (all its builds); the
 * remotes keep theirs.
 * @return CCKEY_OK; CCKEY_ERR_NOT_FOUND (no entry); CCKEY_ERR_INVALID_ARG (a
 *         malformed key, or a read-only handle); CCKEY_ERR_IO.
 */
CCKEY_API cckey_status cckey_store_remove(cckey_store *s, const char *key);

/**
 * Zero the folder's counters, local and remote (as ccache -z), and record
 * when (cckey_store_usage.zeroed). cckey_store_clear keeps them, as ccache
 * -C does. Counts of handles still open are added when they close.
 * @return CCKEY_OK; CCKEY_ERR_IO when some counter file could not be
 *         written (its lock held past the wait, a read-only folder);
 *         CCKEY_ERR_INVALID_ARG for a read-only handle.
 */
CCKEY_API cckey_status cckey_store_zero_counters(cckey_store *s);

/** Called once per entry by cckey_store_list: the key, the entry file's size
 *  and when it was last used (seconds since 1970). Non-zero stops the walk. */
typedef int (*cckey_store_entry_fn)(void *user, const char *key, uint64_t bytes, int64_t used);

/** Every entry of the folder, in no particular order (no checks; entries
 *  other processes add or remove meanwhile may or may not be seen).
 *  @return CCKEY_OK (also when fn stopped the walk), CCKEY_ERR_IO. */
CCKEY_API cckey_status cckey_store_list(cckey_store *s, cckey_store_entry_fn fn, void *user);

/** One entry as cckey_store_list_info sees it (from its header alone). */
typedef struct cckey_store_entry_info {
    const char *key;       /**< NUL-terminated; valid during the call */
    uint64_t bytes;        /**< the entry file's size */
    int64_t used;          /**< last used, seconds since 1970 */
    uint32_t variants;     /**< the builds it holds; 0 when its header cannot be read */
    uint32_t version;      /**< its format version; 0 when its header cannot be read */
    uint64_t plain_bytes;  /**< its size with the payload uncompressed (= bytes when
                                not compressed; 0 when its header cannot be read) */
    uint64_t reserved[3];  /**< 0 */
} cckey_store_entry_info;
typedef int (*cckey_store_info_fn)(void *user, const cckey_store_entry_info *e);

/** cckey_store_list that also reads each entry's 192-byte header (no
 *  checksum: see cckey_store_verify) for its format version and the number
 *  of builds it holds. Non-zero from fn stops the walk.
 *  @return CCKEY_OK, CCKEY_ERR_IO. */
CCKEY_API cckey_status cckey_store_list_info(cckey_store *s, cckey_store_info_fn fn, void *user);

/**
 * Parse a size as cckey.conf's max_size and the CLI's sizes are written: a
 * decimal count of bytes, optionally followed by K, M, G or T (binary units,
 * 2^10 to 2^40) and an optional "iB" or "B": 500M, 10G, 1TiB, 4096.
 * @return CCKEY_OK, or CCKEY_ERR_INVALID_ARG (out untouched).
 */
CCKEY_API cckey_status cckey_size_parse(const char *text, uint64_t *out);

/**
 * Parse an age as cckey.conf's max_age and cckey cache trim --older-than
 * are written: a positive whole number and a unit, s, m, h, d or w
 * (seconds to weeks): 30d, 12h, 90m. There is no default unit.
 * @return CCKEY_OK, or CCKEY_ERR_INVALID_ARG (seconds untouched).
 */
CCKEY_API cckey_status cckey_age_parse(const char *text, int64_t *seconds);

/**
 * Remove the entries not used (looked up or written) for max_age_s seconds
 * or more, as every writer does when the folder has a max_age (cckey.conf
 * "max_age = 30d"; checked when a handle's puts recount the folder, as the
 * size limit is). removed (may be NULL) receives the number removed.
 * @return CCKEY_OK; CCKEY_ERR_INVALID_ARG (NULL, max_age_s <= 0, a
 *         read-only handle); CCKEY_ERR_IO when the folder cannot be read.
 */
CCKEY_API cckey_status cckey_store_trim_older(cckey_store *s, int64_t max_age_s, uint64_t *removed);

/**
 * Apply the folder's limits now, as a put past them would: remove the
 * entries unused for its max_age (cckey_store_trim_older), then least
 * recently used entries until the folder is at 90% of the size limit.
 * removed (may be NULL) receives the number of entries removed.
 * @return CCKEY_OK; CCKEY_ERR_INVALID_ARG when the handle has neither limit.
 */
CCKEY_API cckey_status cckey_store_trim(cckey_store *s, uint64_t *removed);

/**
 * Check every entry as cckey_store_get would, removing those that fail
 * and anything under an entry's name that is no regular file (a symlink
 * itself, never its target; a FIFO; an empty folder), and remove temporary
 * files whose writer is gone (its process no longer exists, or the file is
 * over an hour old). What could not be removed or read is counted in kept
 * and unreadable. out may be NULL.
 * @return CCKEY_OK, or CCKEY_ERR_IO when the folder cannot be read.
 */
CCKEY_API cckey_status cckey_store_verify(cckey_store *s, cckey_store_report *out);

/**
 * Remove every entry, the temporary files of dead writers and then the
 * empty shard folders. Only files named as the store names them are
 * touched: other files in the folder stay. removed (may be NULL) receives
 * the number of entries removed.
 * @return CCKEY_OK, or CCKEY_ERR_IO when something could not be removed.
 */
CCKEY_API cckey_status cckey_store_clear(cckey_store *s, uint64_t *removed);

/*
 * Bundles: entries in one portable file, to ship a warmed cache to a
 * deployment or a container image. A bundle is a POSIX tar archive (pax),
 * optionally zstd-compressed, holding whole entry files as the folder names
 * them (SHARD/NAME): `tar -tf` lists it, `tar -xf` unpacks it into a store
 * folder. Each entry is checked on import exactly as cckey_store_get checks
 * an entry; a cut or damaged archive is an error. Import never takes a
 * member's name as a path to write: members with an absolute path, "..",
 * links, devices and FIFOs are refused, folders and files that are no entry
 * are skipped. Bundles of earlier releases (CCKEYBND, with a trailer of
 * entry count and MD5) are still imported.
 */

/** What cckey_store_import did. */
typedef struct cckey_import_report {
    uint64_t imported;     /**< entries checked and kept */
    uint64_t refused;      /**< entries that failed their checks, not kept */
    uint64_t foreign;      /**< not kept: signed, but not with the secret of
                                a writable remote that signs (to remotes only) */
    uint64_t unsigned_held; /**< kept, but not sent to a remote that signs:
                                 unsigned, and CCKEY_IMPORT_SIGN_UNSIGNED not given */
    uint64_t unsafe;       /**< of refused: archive members never read (an absolute
                                path, "..", a link, device, FIFO) */
    uint64_t reserved[3];  /**< 0; room to grow without changing the size */
} cckey_import_report;

/** cckey_store_import's to_remotes: send the entries to the writable remotes. */
#define CCKEY_IMPORT_TO_REMOTES 1
/** With CCKEY_IMPORT_TO_REMOTES: sign unsigned entries for the remotes that
 *  sign, vouching for them with the secret (they are otherwise kept in the
 *  folder only). */
#define CCKEY_IMPORT_SIGN_UNSIGNED 2

/**
 * Write a bundle to fd: the entries of keys[0..n_keys), or, when keys is
 * NULL, every entry of the folder. Damaged entries are left out.
 * @param exported  receives the entries written (may be NULL).
 * @param missing   receives the keys that had no good entry (may be NULL).
 * @return CCKEY_OK, CCKEY_ERR_INVALID_ARG (a malformed key), CCKEY_ERR_IO.
 */
CCKEY_API cckey_status cckey_store_export(cckey_store *s, const char *const *keys, size_t n_keys, int fd,
                                          uint64_t *exported, uint64_t *missing);

/** cckey_store_export_ex's flags: the tar archive compressed with zstd. */
#define CCKEY_EXPORT_ZSTD 1u

/**
 * cckey_store_export with flags (0 or CCKEY_EXPORT_ZSTD).
 * @return as cckey_store_export; CCKEY_ERR_INVALID_ARG for unknown flags,
 *         CCKEY_ERR_UNAVAILABLE in a library built without libarchive.
 */
CCKEY_API cckey_status cckey_store_export_ex(cckey_store *s, const char *const *keys, size_t n_keys, int fd,
                                             unsigned flags, uint64_t *exported, uint64_t *missing);

/**
 * Read a bundle from fd into the folder; with to_remotes
 * (CCKEY_IMPORT_TO_REMOTES, any non-zero value), also send each entry to
 * the writable remotes that lack it (HEAD first).
 *
 * A remote with a signing secret (cckey_remote_settings.secret) trusts what
 * it holds, so an import never launders an entry into it: an entry signed
 * with that secret is checked and sent as it is; one signed with anything
 * else (another secret, or tampered after signing) is refused whole (not
 * kept, not sent: `foreign`); an unsigned one is kept in the folder but
 * sent to such a remote only when to_remotes has CCKEY_IMPORT_SIGN_UNSIGNED
 * (`unsigned_held` otherwise): signing it vouches for bytes nobody checked,
 * a choice the caller must make.
 * @return CCKEY_OK; CCKEY_ERR_CORRUPT (not a bundle, or cut or damaged:
 *         the entries before the damage are kept, each checked); CCKEY_ERR_IO.
 */
CCKEY_API cckey_status cckey_store_import(cckey_store *s, int fd, int to_remotes, cckey_import_report *out);

/* ------------------------------------------------------------------------ */
/* Entries that cannot serve a stale binary: headers and toolchain           */
/* ------------------------------------------------------------------------ */

/*
 * A key names the source, the device, the entry point and the options, not
 * the headers the source includes nor the compiler that built it. So an
 * entry may record what else its build read (cckey_store_put_meta): each
 * included file, by path and content digest, and the toolchain (compiler,
 * version, flags as passed). cckey_store_get_checked re-checks that list
 * before serving, as ccache's direct mode does:
 *  - a recorded header whose content changed, or that is gone, is a miss;
 *  - so is a file that now exists where the build searched and found none
 *    (a new header earlier in the search path would have been read instead);
 *  - so is another compiler, version or flag list than the one recorded.
 * Such a miss is CCKEY_ERR_STALE, for that entry alone; the entry stays until
 * the next put for its key replaces it. Other entries are untouched: a header
 * edit invalidates exactly the entries whose builds read it.
 *
 * Paths are recorded relative to roots, folders the caller names both when it
 * records and when it looks up: the folders the compiler searches, in its
 * order. roots[0] is the folder of the source itself (what `#include "f"` in
 * the source searches first: for a program built from memory, as OpenCL and
 * NVRTC build, the process's working folder, which both search first), then
 * the include folders. `cckey warm` passes its working folder, the source
 * file's folder, then the -I (-iquote, -isystem, -idirafter) folders in the
 * order the compiler searches them. `#include "f"` searches the including
 * file's folder, then the roots; `#include <f>` the roots only;
 * `#include_next` the roots after the one the including file was found in;
 * `__has_include` probes as `#include` does; a file found in none is the
 * compiler's own (covered by its version). So absolute paths never decide a
 * hit; contents do, and a suite moved to another folder or machine still
 * hits.
 *
 * Content digests are remembered per run in a cckey_dep_memo, keyed by path,
 * size, modification time and inode, so re-checking a large suite reads each
 * header once.
 */

/** A file a build read (present = 1), or probed for and did not find (0). */
typedef struct cckey_dep {
    uint32_t root;        /**< index into the roots, or CCKEY_DEP_ABSOLUTE */
    const char *path;     /**< relative to that root; NUL-terminated */
    int present;          /**< 1: it existed with this size and digest; 0: it did not exist */
    uint64_t size;        /**< 0 when absent */
    uint8_t md5[16];      /**< MD5 of its content; zeros when absent */
} cckey_dep;
#define CCKEY_DEP_ABSOLUTE 0xFFFFFFFFu

/** What an entry records besides its payload (cckey_store_put_meta). */
typedef struct cckey_entry_meta {
    const char *compiler;          /**< e.g. "NVRTC", "OpenCL"; NULL: not recorded */
    const char *version;           /**< as the compiler reports it; NULL: not recorded */
    const char *const *options;    /**< the flags as passed; NULL: not recorded */
    size_t n_options;
    const cckey_dep *deps;         /**< the files read (see cckey_deps_scan) */
    size_t n_deps;
    /** The tuple the key was made from, recorded as its SHA-256 fingerprint
     *  (FINGERPRINT record: over device, name, source, the options in
     *  canonical order and the DEPENDENCY records written from deps), which
     *  a look-up with the tuple checks. NULL: no fingerprint (such an entry
     *  is then a miss for every look-up that has the tuple). A library
     *  built without libcrypto refuses a tuple: CCKEY_ERR_UNAVAILABLE. */
    const cckey_tuple *tuple;
} cckey_entry_meta;

/** Per-run memo of file digests. Opaque; safe to share between threads. */
typedef struct cckey_dep_memo cckey_dep_memo;
CCKEY_API cckey_status cckey_dep_memo_new(cckey_dep_memo **out);
CCKEY_API void cckey_dep_memo_free(cckey_dep_memo *m);

/** What a checked look-up compares an entry's records with. */
typedef struct cckey_lookup {
    const char *compiler;          /**< the toolchain here; NULL: not checked */
    const char *version;           /**< NULL: not checked */
    const char *const *options;    /**< the flags that would be passed; NULL: not checked */
    size_t n_options;
    const char *const *roots;      /**< as described above; recorded roots past n_roots are a miss */
    size_t n_roots;
    cckey_dep_memo *memo;          /**< may be NULL (then every file is read) */
    /** The tuple looked up (NULL: not checked). Its SHA-256 fingerprint is
     *  computed here and compared with the entry's FINGERPRINT record; an
     *  entry whose record differs, or that has none, is a miss,
     *  CCKEY_ERR_COLLISION (its key matches by MD5 only, as a crafted
     *  collision would), and is removed from the folder. Checked before
     *  everything else, and for entries just copied from a remote too. A
     *  library built without libcrypto refuses a tuple (CCKEY_ERR_UNAVAILABLE,
     *  nothing served). */
    const cckey_tuple *tuple;
} cckey_lookup;

/**
 * Follow the #include lines of source (and of the files they name,
 * recursively) through roots, as described above, and list every file read
 * and every probe that missed. Lines in conditional groups are followed too
 * (a superset is safe: it can only cause a miss); `#include MACRO` is not
 * followed (cckey_deps_find says when that happened). memo may be NULL.
 * @param deps  receives a new array (free with cckey_deps_free).
 * @return CCKEY_OK, CCKEY_ERR_INVALID_ARG, CCKEY_ERR_NO_MEMORY, or
 *         CCKEY_ERR_IO when a found file cannot be read.
 */
CCKEY_API cckey_status cckey_deps_scan(const void *source, size_t len, const char *const *roots, size_t n_roots,
                                       cckey_dep_memo *memo, cckey_dep **deps, size_t *n);
CCKEY_API void cckey_deps_free(cckey_dep *deps, size_t n);

/** One include directive as a real preprocessor processed it, its macros
 *  expanded (`clang -E -dI` prints them): what a text scan cannot know. */
typedef struct cckey_include {
    const char *from;   /**< the including file, as the preprocessor named it
                             (absolute, or relative to the working folder);
                             NULL: the source itself */
    const char *name;   /**< the name it asked for, after expansion */
    int angled;         /**< 1 for <name>, 0 for "name" */
    int next;           /**< 1 for #include_next */
} cckey_include;

/** What cckey_deps_find is asked. Zero what you do not use. */
typedef struct cckey_deps_request {
    const void *source;
    size_t len;
    const char *const *roots;         /**< as described above */
    size_t n_roots;
    const char *const *pre_includes;  /**< -include / --pre-include files, in order:
                                           each as `#include "f"` before the source */
    size_t n_pre_includes;
    const cckey_include *includes;    /**< a preprocessor's directives (may be NULL):
                                           followed as the text's own */
    size_t n_includes;
    const char *const *read;          /**< the files the preprocessor read (may be
                                           NULL): each one not reached through the
                                           roots is recorded by absolute path */
    size_t n_read;
    int preprocessed;                 /**< 1: includes holds every directive a preprocessor
                                           processed for this build (even none) */
    const char *source_name;          /**< the source in messages; NULL: "source" */
    cckey_dep_memo *memo;             /**< may be NULL */
    uint64_t reserved[4];             /**< 0 */
} cckey_deps_request;

/** What cckey_deps_find found. */
typedef struct cckey_deps_result {
    cckey_dep *deps;      /**< free with cckey_deps_result_free */
    size_t n;
    int complete;         /**< 1: every include, __has_include and pre-include was
                               resolved; 0: some were not (a macro the text cannot
                               expand and no preprocessor directive given for it) */
    char why[512];        /**< when not complete: the first, "FILE:LINE: #include HDR" */
    uint64_t reserved[4];
} cckey_deps_result;

/**
 * cckey_deps_scan with pre-includes, `#include_next`, `__has_include`, and a
 * preprocessor's view: rq->includes are followed from the file that holds
 * them exactly as text directives are, so a computed include (`#define H
 * "m.h"` then `#include H`) is recorded with every probe of its search. Where
 * the text holds `#include MACRO` (or `__has_include(MACRO)`) and no
 * directive from rq->includes resolves it, out->complete is 0, and the
 * string literals of the `#define` lines seen are probed as names besides (a
 * superset). Every file in rq->read ends up in out->deps.
 * @return as cckey_deps_scan; out is zeroed on failure.
 */
CCKEY_API cckey_status cckey_deps_find(const cckey_deps_request *rq, cckey_deps_result *out);
CCKEY_API void cckey_deps_result_free(cckey_deps_result *r);

/**
 * cckey_store_put, recording meta (NULL: nothing) with the entry: a build
 * added to the key's builds (see the store's description above).
 */
CCKEY_API cckey_status cckey_store_put_meta(cckey_store *s, const char *key, const void *data, size_t len,
                                            const cckey_entry_meta *meta);

/** More for a put (cckey_store_put_ex). Zero what you do not use. */
typedef struct cckey_put_options {
    /** Not NULL: the build's dependency list is known to be incomplete (the
     *  text says why, e.g. "k.cl:2: #include HDR"). The build is stored with
     *  an UNVERIFIED record, and a checked look-up never serves it
     *  (CCKEY_MISS_UNVERIFIED), so it is compiled again rather than trusted. */
    const char *unverified;
    uint32_t variants;      /**< out: the builds the entry holds after the put */
    uint32_t reserved32;
    uint64_t reserved[6];   /**< 0 */
} cckey_put_options;

/** cckey_store_put_meta with options (NULL: none). */
CCKEY_API cckey_status cckey_store_put_ex(cckey_store *s, const char *key, const void *data, size_t len,
                                          const cckey_entry_meta *meta, cckey_put_options *opt);

/**
 * cckey_store_get that serves the newest of the key's builds whose records
 * match lk (NULL: no check, as cckey_store_get). A build with a critical
 * record of a kind this library does not know, or marked unverified
 * (cckey_put_options), never matches.
 * @return as cckey_store_get, plus CCKEY_ERR_STALE (a miss; the detail
 *         names the first difference in cckey_last_error()) and
 *         CCKEY_ERR_COLLISION (lk->tuple given and the entry's fingerprint
 *         differs or is absent: a miss, the entry removed). Both count as
 *         misses in the folder's counters. CCKEY_ERR_UNAVAILABLE: lk->tuple
 *         given to a library built without libcrypto.
 */
CCKEY_API cckey_status cckey_store_get_checked(cckey_store *s, const char *key, const cckey_lookup *lk, void **buf,
                                               size_t *len);

/** Why a look-up missed (cckey_store_get_explained). */
typedef enum cckey_miss {
    CCKEY_MISS_NONE = 0,        /**< a hit */
    CCKEY_MISS_ABSENT = 1,      /**< no entry under the key, here or on a remote */
    CCKEY_MISS_HEADERS = 2,     /**< a recorded header changed or is gone, a new one
                                     shadows it, or the include folders differ */
    CCKEY_MISS_TOOLCHAIN = 3,   /**< another compiler, version or flag list (or the
                                     entry records none where the look-up checks one) */
    CCKEY_MISS_CORRUPT = 4,     /**< the entry failed its checks (a damaged or
                                     version 1 entry; removed, unless read-only) */
    CCKEY_MISS_UNKNOWN_RECORD = 5, /**< a critical record this cckey does not know
                                        (written by a newer one) */
    CCKEY_MISS_ERROR = 6,       /**< the look-up failed: see the status returned */
    CCKEY_MISS_COLLISION = 7,   /**< the entry's tuple fingerprint differs or is missing
                                     (CCKEY_ERR_COLLISION; removed, unless read-only) */
    CCKEY_MISS_UNVERIFIED = 8   /**< the build's dependency list was incomplete when it
                                     was stored (cckey_put_options.unverified) */
} cckey_miss;

/**
 * cckey_store_get_checked that also says why it missed.
 * @param why  receives CCKEY_MISS_NONE on CCKEY_OK, else the reason (the
 *             detail, e.g. which header changed, is in cckey_last_error());
 *             may be NULL.
 * @return as cckey_store_get_checked.
 */
CCKEY_API cckey_status cckey_store_get_explained(cckey_store *s, const char *key, const cckey_lookup *lk, void **buf,
                                                 size_t *len, cckey_miss *why);

/** What a look-up found (cckey_store_get_info). */
typedef struct cckey_lookup_info {
    cckey_miss why;        /**< as cckey_store_get_explained */
    uint32_t variants;     /**< the builds the entry held; 0 when no entry was read */
    uint32_t variant;      /**< on a hit, the build served: 0 is the newest */
    uint32_t remote;       /**< 1 when a remote served it (counted as a local miss) */
    uint64_t reserved[4];
} cckey_lookup_info;

/**
 * cckey_store_get_explained that also says which of the key's builds was
 * served (or, on a miss, how many there were; the reason given is the
 * newest build's).
 * @param info  receives the answer; may be NULL.
 * @return as cckey_store_get_checked.
 */
CCKEY_API cckey_status cckey_store_get_info(cckey_store *s, const char *key, const cckey_lookup *lk, void **buf,
                                            size_t *len, cckey_lookup_info *info);

/* ------------------------------------------------------------------------ */
/* Remote caches layered under a store                                        */
/* ------------------------------------------------------------------------ */

/*
 * A store may have remote caches under it, consulted in the order added:
 *   redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]     whole entries as values
 *                                                   under "cckey:NAME"
 *   http://HOST[:PORT]/PATH, https://...            GET, PUT and HEAD of
 *                                                   URL/xy/NAME (xy and NAME
 *                                                   as in the local folder)
 * Attributes may follow the URL, each after a '|': ttl=SECONDS (Redis:
 * entries expire), bearer=TOKEN (HTTP: Authorization: Bearer), read-only,
 * connect-timeout=MS, timeout=MS, retries=N (HTTP). USER:PASSWORD in an
 * HTTP URL is sent as basic auth; messages never show it.
 *
 * cckey_store_get looks in the local folder first; on a miss it asks each
 * remote in turn, checks what comes back exactly as a local entry is
 * checked (in memory, from the bytes received), and keeps it in the folder
 * (renamed into place, without fsync: a copy lost in a crash fails its
 * checks and is fetched again). cckey_store_put sends the entry file to
 * every remote that is not read-only and writes the folder while they take
 * it; it returns once both are done.
 *
 * A remote never makes a store call fail. A remote that cannot be reached,
 * times out or refuses the credentials is reported once through the warning
 * callback and is not asked again by this handle; a single failed request
 * (HTTP 5xx after its retries, a Redis error reply, a bad entry served) is
 * reported and counted as an error, and the look-up goes on as a miss.
 * Connections are kept and reused, one per concurrent caller.
 */

/** How to reach remote caches (cckey_store_add_remote). Zeros mean defaults. */
typedef struct cckey_remote_settings {
    uint32_t connect_timeout_ms;  /**< default 2000 */
    uint32_t timeout_ms;          /**< one request, default 10000 */
    uint32_t retries;             /**< HTTP: tries after a 5xx or a dropped connection, default 2 */
    uint32_t ttl_s;               /**< Redis: entries expire after this; 0: never */
    int read_only;                /**< never write to the remote */
    /** Called (from any thread) with a one-line message; may be NULL. */
    void (*warn)(void *user, const char *message);
    void *warn_user;
    /** A secret shared by the trusted writers (NULL: none). With it, every
     *  entry sent to this remote gets a SIGNATURE record last: HMAC-SHA-256
     *  under the secret over the key, the other records and the payload.
     *  Every entry received from it must end in a good one, checked before
     *  the entry is written to the folder; an unsigned, tampered or
     *  foreign-signed entry is refused (counted as an error, reported, and
     *  the look-up is a miss). Entries in the local folder are not checked
     *  against it. Copied; a library built without libcrypto refuses it
     *  (CCKEY_ERR_UNAVAILABLE). */
    const void *secret;
    size_t secret_len;
    /** The largest entry file taken from a remote, in bytes; 0: the default,
     *  CCKEY_REMOTE_MAX_ENTRY (256 MiB). The folder's own limit (max_bytes,
     *  cckey.conf max_size) lowers it further. A larger entry is refused
     *  from its first line or its header, before the rest is read (an error
     *  of that remote, and a miss). */
    uint64_t max_entry_bytes;
    uint64_t reserved[3];         /**< 0 (start from = {0}); room to grow */
} cckey_remote_settings;

/** The default of cckey_remote_settings.max_entry_bytes. */
#define CCKEY_REMOTE_MAX_ENTRY (256ull << 20)

/** Remote traffic, counted per handle and kept per folder. */
typedef struct cckey_remote_counters {
    uint64_t hits;       /**< look-ups a remote answered with a good entry */
    uint64_t misses;     /**< look-ups no remote could answer */
    uint64_t errors;     /**< failed requests and bad entries served */
    uint64_t puts;       /**< entries written to a remote */
    uint64_t bytes_in;   /**< entry bytes received */
    uint64_t bytes_out;  /**< entry bytes sent */
    uint64_t time_ms;    /**< time spent in requests (per remote, in
                              cckey_store_remote_totals; 0 elsewhere) */
    uint64_t reserved[5]; /**< 0; room to grow without changing the size */
} cckey_remote_counters;

/**
 * Add a remote cache under s (see above). Only the URL's syntax is checked
 * here; no connection is made until the first request. Not thread-safe:
 * add the remotes before the handle is shared.
 * @param settings  may be NULL for the defaults; its fields win over the
 *                  defaults, the URL's attributes win over both.
 * @return CCKEY_OK, CCKEY_ERR_INVALID_ARG (a malformed URL or attribute,
 *         said in cckey_last_error()), CCKEY_ERR_NO_MEMORY,
 *         CCKEY_ERR_UNAVAILABLE (this library was built without the
 *         remote's kind: Redis needs hiredis, HTTP libcurl, at build time).
 */
CCKEY_API cckey_status cckey_store_add_remote(cckey_store *s, const char *url, const cckey_remote_settings *settings);

/**
 * Add the remotes of the store's folder, as its DIR/cckey.conf names them
 * (the `cckey` command reads the folder through this, so every client of a
 * folder sees the same shared cache). The file's lines ("NAME = VALUE",
 * '#' comments): `remote = URL` (repeatable, asked in order),
 * `remote_only_read = true|false` (for the remotes after it),
 * `remote_key_file = PATH` (the signing secret: the file's bytes less a
 * final newline), `remote_max_entry = SIZE`. A missing file names none.
 * @param urls      NULL for the file's remote lines; else these n_urls URLs
 *                  in their place (the file's remote_key_file and
 *                  remote_max_entry still apply, its other lines are not
 *                  read, as `cckey --remote` does).
 * @param settings  may be NULL; its read_only is kept (remote_only_read can
 *                  only add it), its secret wins over remote_key_file, its
 *                  max_entry_bytes (when not 0) over remote_max_entry.
 * @return CCKEY_OK; CCKEY_ERR_INVALID_ARG (a malformed line, a bad URL, an
 *         unreadable or empty key file; cckey_last_error() names the file
 *         and line and never shows a value); CCKEY_ERR_IO (the file exists
 *         and cannot be read); CCKEY_ERR_UNAVAILABLE (a remote kind or
 *         signing this build lacks); CCKEY_ERR_NO_MEMORY. Remotes added
 *         before an error stay. Not thread-safe, as cckey_store_add_remote.
 */
CCKEY_API cckey_status cckey_store_add_conf_remotes(cckey_store *s, const char *const *urls, size_t n_urls,
                                                    const cckey_remote_settings *settings);

/**
 * Remote counters. since_open: this handle's own; otherwise the folder's
 * totals (every handle adds its counters to the folder's counter files when
 * closed: see cckey_store_stats).
 */
CCKEY_API cckey_status cckey_store_remote_counters(cckey_store *s, int since_open, cckey_remote_counters *out);

/** Called by cckey_store_remote_totals per remote: its URL (secrets left
 *  out) and its counters (misses: look-ups it answered with a miss).
 *  Non-zero stops the walk. */
typedef int (*cckey_remote_totals_fn)(void *user, const char *remote, const cckey_remote_counters *c);

/** The folder's running counters of each remote it ever used, by URL.
 *  @return CCKEY_OK, CCKEY_ERR_INVALID_ARG, CCKEY_ERR_NO_MEMORY. */
CCKEY_API cckey_status cckey_store_remote_totals(cckey_store *s, cckey_remote_totals_fn fn, void *user);


#ifdef __cplusplus
}
#endif
#endif /* CCKEY_STORE_H */
