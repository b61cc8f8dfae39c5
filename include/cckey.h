/*
 * cckey — standardized compile-cache keys for GPU kernels.
 *
 * THE KEY (format 1, frozen)
 *
 * A key names one compiled kernel: the device it was built for, the entry
 * point, the source it came from and the build options. It is
 *
 *   hex(md5(device)) ":" hex(md5(name)) ":" hex(md5(source)) ":" hex(md5(canon(options)))
 *
 * where md5 is RFC 1321, hex() is lowercase hexadecimal (32 characters) and
 * canon(options) sorts the option pairs stably by key (keys compared as
 * unsigned bytes, a proper prefix first), writes each pair as
 * hex(md5(k)) "=" hex(md5(v)) and joins the pairs with ",". No options
 * gives the empty string, so the last field is md5("").
 *
 * Guarantees:
 *  - Every key is exactly CCKEY_KEY_LEN (131) bytes plus a NUL terminator.
 *  - Every field is arbitrary bytes: NUL, ':', ',', '=' and invalid UTF-8 are
 *    all fine; per-field digests make the join unambiguous.
 *  - Identical output on every platform, every backend (CPU scalar, CPU
 *    SIMD, OpenCL, CUDA) and every entry point (cckey_make_key,
 *    cckey_source_key, cckey_make_keys): byte for byte the same key as the
 *    OCaml reference implementation (Spoc_framework.Compile_cache.make_key
 *    in Sarek, github.com/mathiasbourgoin/Sarek, spoc/framework/
 *    Compile_cache.ml as of revision 21feb5c, which digests each option
 *    pair). The older public revision 43b2be1 joined the raw pairs
 *    ("k=v,k2=v2") before digesting: its keys equal these for tuples
 *    without options and differ for every tuple with options
 *    (bindings/python/tests/test_provenance.py carries its vectors).
 *  - No function crashes on bad arguments it can detect: NULL outputs,
 *    {NULL, n > 0} byte strings and NULL option arrays with a non-zero count
 *    return CCKEY_ERR_INVALID_ARG.
 *  - Every function is safe to call from many threads at once, on distinct
 *    or shared objects, unless its contract says otherwise.
 *
 * THE HEADERS
 *
 *   cckey.h           this file: keys, sources and their memo, batches,
 *                     configs, devices, errors, versions. Stable.
 *   cckey_store.h     a store of compiled kernels addressed by key, with
 *                     dependency records, remote caches and bundles. Stable.
 *   cckey_advanced.h  device tuning, driver doors, engine checks. MAY CHANGE
 *                     BEFORE 1.0.
 * How the library computes what these promise (its tables, block sizes,
 * sample sizes, memory per tuple) is in docs/IMPLEMENTATION.md: figures
 * there may change in any release; the contracts here do not.
 *
 * Stability promise. The key format is frozen: it is format 1
 * (CCKEY_KEY_FORMAT), and every release of cckey, on every platform and
 * backend, gives the same key for the same (device, name, source, options)
 * as every earlier release did. Should the recipe ever have to change, that
 * will be a new format number under new function names, never a silent
 * change to these. (The on-disk store entry format is not covered: an entry
 * of another format version is a cache miss, never a wrong hit.)
 *
 * ABI policy. Below 1.0 the shared library's SONAME carries the minor
 * version (libcckey.so.0.MINOR): a minor release may change the ABI, a patch
 * release never does, and the CMake package accepts only the same minor
 * version. From 1.0 on the SONAME is the major version. Structs the library
 * fills end in reserved fields, set to 0, that later releases may give a
 * meaning without changing their size. The input structs cckey_bytes,
 * cckey_option and cckey_tuple describe the frozen key fields and keep their
 * layout. Names outside the three headers are not exported.
 *
 * Errors: every fallible function returns a cckey_status. cckey_strerror()
 * names the status; cckey_last_error() gives the detail of the most recent
 * failure on the calling thread (a device driver's message, for example).
 */
#ifndef CCKEY_H
#define CCKEY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define CCKEY_API
#else
#define CCKEY_API __attribute__((visibility("default")))
#endif

#define CCKEY_VERSION_MAJOR 0
#define CCKEY_VERSION_MINOR 1
#define CCKEY_VERSION_PATCH 0
#define CCKEY_VERSION_STRING "0.1.0"
/** The version as one number, MAJOR * 10000 + MINOR * 100 + PATCH (0.1.0 is
 *  100), for compile-time checks such as #if CCKEY_VERSION_NUMBER >= 200. */
#define CCKEY_VERSION_NUMBER (CCKEY_VERSION_MAJOR * 10000 + CCKEY_VERSION_MINOR * 100 + CCKEY_VERSION_PATCH)
/** The key format this header describes (see the stability promise above).
 *  Frozen: it changes only with new function names. */
#define CCKEY_KEY_FORMAT 1

/** Length of a key in bytes, not counting the NUL terminator. */
#define CCKEY_KEY_LEN 131
/** Length of one hex digest inside a key. */
#define CCKEY_HEX_LEN 32
/** Length of one binary (MD5) digest. */
#define CCKEY_DIGEST_LEN 16
/** Length of a binary key: the four field digests, in key order. */
#define CCKEY_KEY_BIN_LEN 64

/** A byte string. {NULL, 0} is the empty string; {NULL, n > 0} is an error. */
typedef struct cckey_bytes {
    const void *ptr;
    size_t len;
} cckey_bytes;

/** One build option: a key and a value, both arbitrary bytes. */
typedef struct cckey_option {
    cckey_bytes key, value;
} cckey_option;

/** Status codes. CCKEY_OK is 0; every error is non-zero. */
typedef enum cckey_status {
    CCKEY_OK = 0,
    CCKEY_ERR_INVALID_ARG = 1,   /**< a NULL output, {NULL, n>0}, bad config value */
    CCKEY_ERR_NO_MEMORY = 2,     /**< an allocation failed */
    CCKEY_ERR_IO = 3,            /**< a file could not be read or written */
    CCKEY_ERR_UNAVAILABLE = 4,   /**< the requested backend is not usable here */
    CCKEY_ERR_DEVICE = 5,        /**< a device call failed (detail: cckey_last_error) */
    CCKEY_ERR_VERIFY = 6,        /**< a backend digest differed from the CPU reference */
    CCKEY_ERR_INTERNAL = 7,      /**< a bug in cckey; please report it */
    CCKEY_ERR_THREAD = 8,        /**< a thread could not be started */
    CCKEY_ERR_NOT_FOUND = 9,     /**< no such entry (cache look-ups) */
    CCKEY_ERR_CORRUPT = 10,      /**< stored data failed its checks */
    CCKEY_ERR_CANCELLED = 11,    /**< a progress callback asked to stop */
    CCKEY_ERR_STALE = 12,        /**< an entry's recorded headers or toolchain differ (a miss) */
    CCKEY_ERR_COLLISION = 13     /**< an entry's key matches but its tuple fingerprint does not: a
                                      possible MD5 collision (a miss) */
} cckey_status;

/* ------------------------------------------------------------------------ */
/* Errors and versions                                                       */
/* ------------------------------------------------------------------------ */

/**
 * Name a status in plain words.
 * @return a static, NUL-terminated string; never NULL (unknown codes give
 *         "unknown status").
 */
CCKEY_API const char *cckey_strerror(cckey_status status);

/**
 * Detail of the most recent failure on the calling thread, e.g. a driver's
 * error message or the first mismatching tuple of a verify failure.
 * @return a thread-local string, valid until the next cckey call on this
 *         thread; "" when there is no detail.
 */
CCKEY_API const char *cckey_last_error(void);

/**
 * The library's version string, e.g. "0.1.0".
 * @return a static string; never NULL.
 */
CCKEY_API const char *cckey_version(void);

/**
 * The version of the library loaded at run time, as CCKEY_VERSION_NUMBER
 * gives it; compare it with the header's to catch a mismatched library.
 */
CCKEY_API unsigned cckey_version_number(void);

/* ------------------------------------------------------------------------ */
/* One key                                                                   */
/* ------------------------------------------------------------------------ */

/**
 * Compute one key.
 * @param out        receives CCKEY_KEY_LEN characters and a NUL; not NULL.
 * @param device     device identity (e.g. "NVIDIA H200|580.159.04").
 * @param name       kernel entry-point name.
 * @param source     kernel source text.
 * @param options    n_options build options, in any order; may be NULL when
 *                   n_options is 0. Equal keys keep their relative order.
 * @return CCKEY_OK, or CCKEY_ERR_INVALID_ARG (out is then left untouched).
 */
CCKEY_API cckey_status cckey_make_key(char out[CCKEY_KEY_LEN + 1], cckey_bytes device,
                                      cckey_bytes name, cckey_bytes source,
                                      const cckey_option *options, size_t n_options);

/**
 * cckey_make_key for NUL-terminated strings (a source or option holding a
 * NUL byte needs cckey_make_key).
 * @param options  n_options pairs as 2 * n_options strings: key, value,
 *                 key, value, ...; may be NULL when n_options is 0.
 * @return as cckey_make_key; CCKEY_ERR_INVALID_ARG also for a NULL string.
 */
CCKEY_API cckey_status cckey_make_key_str(char out[CCKEY_KEY_LEN + 1], const char *device, const char *name,
                                          const char *source, const char *const *options, size_t n_options);

/**
 * The canonical order of options, the one a key digests them in: stable by
 * key, keys compared as unsigned bytes, a proper prefix first (for turning
 * options into compiler flags in the key's order, as `cckey warm` does).
 * @param order  receives n option indices; may be NULL only when n is 0.
 * @return CCKEY_OK; CCKEY_ERR_NO_MEMORY (a large n needs scratch space);
 *         CCKEY_ERR_INVALID_ARG for NULL arrays with n > 0.
 */
CCKEY_API cckey_status cckey_option_order(const cckey_option *options, size_t n, size_t *order);

/**
 * Check a key and split it into its four binary field digests (device,
 * name, source, options). A key is exactly CCKEY_KEY_LEN bytes: four groups
 * of 32 lowercase hex digits joined by ':'.
 * @param key  len bytes, need not be NUL-terminated.
 * @param out  receives the digests; may be NULL to only check the key.
 * @return CCKEY_OK, or CCKEY_ERR_INVALID_ARG naming the first bad byte in
 *         cckey_last_error() (out is then untouched).
 */
CCKEY_API cckey_status cckey_key_parse(const char *key, size_t len, unsigned char out[4][CCKEY_DIGEST_LEN]);

/* ------------------------------------------------------------------------ */
/* Digests in pieces                                                         */
/* ------------------------------------------------------------------------ */

/**
 * An MD5 digest computed in pieces, for a source that arrives in parts or
 * is too large to hold. The state lives in the caller's memory (no
 * allocation, nothing to free); its contents are private. A digest that
 * was not initialised, or is already final, is refused
 * (CCKEY_ERR_INVALID_ARG). One digest is not for several threads at once.
 */
typedef struct cckey_digest {
    uint64_t opaque[16];
} cckey_digest;

/**
 * Start (or restart) a digest.
 * @return CCKEY_OK, or CCKEY_ERR_INVALID_ARG for a NULL d.
 */
CCKEY_API cckey_status cckey_digest_init(cckey_digest *d);

/**
 * Add len bytes to an initialised digest.
 * @param data  may be NULL only when len is 0.
 * @return CCKEY_OK, or CCKEY_ERR_INVALID_ARG.
 */
CCKEY_API cckey_status cckey_digest_update(cckey_digest *d, const void *data, size_t len);

/**
 * Finish a digest. d must be initialised again before further use.
 * @param hex  receives 32 hex characters and a NUL; may be NULL.
 * @param bin  receives the 16 bytes; may be NULL, but not with hex NULL.
 * @return CCKEY_OK, or CCKEY_ERR_INVALID_ARG.
 */
CCKEY_API cckey_status cckey_digest_final(cckey_digest *d, char hex[CCKEY_HEX_LEN + 1],
                                          unsigned char bin[CCKEY_DIGEST_LEN]);

/* ------------------------------------------------------------------------ */
/* Sources and their memo                                                    */
/* ------------------------------------------------------------------------ */

/** A source and its memo. Opaque; owns its memory. */
typedef struct cckey_source cckey_source;

/** cckey_source_new flag: copy the source bytes (the default). */
#define CCKEY_SOURCE_COPY 0u
/** cckey_source_new flag: borrow the bytes; the caller keeps them alive and
 *  unchanged until cckey_source_free. */
#define CCKEY_SOURCE_BORROW 1u

/** Memo capacity of one handle, in keys. */
#define CCKEY_MEMO_ENTRIES 64
/** Largest (device, name, options) material, in bytes, that is memoised.
 *  The material is the fields, 8 bytes of length per field and 8 bytes for
 *  the option count. Larger tuples still get correct keys, computed without
 *  the memo. */
#define CCKEY_MEMO_MAX_MATERIAL 448

/**
 * Create a source handle. The source is digested here, once; no later call
 * on this handle digests it again. The memo holds at most
 * CCKEY_MEMO_ENTRIES keys, allocated on the first cckey_source_key, and
 * evicts approximately the least recently used.
 * @param out    receives the handle; not NULL.
 * @param source the source bytes.
 * @param flags  CCKEY_SOURCE_COPY or CCKEY_SOURCE_BORROW.
 * @return CCKEY_OK, CCKEY_ERR_INVALID_ARG or CCKEY_ERR_NO_MEMORY.
 */
CCKEY_API cckey_status cckey_source_new(cckey_source **out, cckey_bytes source, unsigned flags);

/**
 * A source handle from a source's digest (cckey_digest_final's bin): keys
 * and memo as if cckey_source_new had been given the source itself.
 * @return CCKEY_OK, CCKEY_ERR_INVALID_ARG or CCKEY_ERR_NO_MEMORY.
 */
CCKEY_API cckey_status cckey_source_new_digest(cckey_source **out, const unsigned char digest[CCKEY_DIGEST_LEN]);

/**
 * A source handle from everything fd gives until end of file (a file, a
 * pipe, a socket), read in pieces and digested as it arrives; no copy is
 * kept. fd stays open, and is left at end of file. Interrupted reads are
 * retried.
 * @return CCKEY_OK; CCKEY_ERR_IO when a read fails (cckey_last_error says
 *         why; out is untouched); CCKEY_ERR_INVALID_ARG; CCKEY_ERR_NO_MEMORY.
 */
CCKEY_API cckey_status cckey_source_new_fd(cckey_source **out, int fd);

/** Free a handle and its memo. NULL is a no-op. No other thread may be using it. */
CCKEY_API void cckey_source_free(cckey_source *src);

/**
 * The key of (device, name, this source, options): byte-identical to
 * cckey_make_key with the same fields. A memo hit computes no MD5 at all.
 * Safe to call from many threads on the same handle at once.
 * @return as cckey_make_key; CCKEY_ERR_INVALID_ARG also for src == NULL.
 */
CCKEY_API cckey_status cckey_source_key(char out[CCKEY_KEY_LEN + 1], cckey_source *src,
                                        cckey_bytes device, cckey_bytes name,
                                        const cckey_option *options, size_t n_options);

/**
 * The hex digest of the handle's source.
 * @param out  receives 32 characters and a NUL.
 * @return CCKEY_OK, or CCKEY_ERR_INVALID_ARG.
 */
CCKEY_API cckey_status cckey_source_digest(char out[CCKEY_HEX_LEN + 1], const cckey_source *src);

/* ------------------------------------------------------------------------ */
/* Batches and their configs                                                 */
/* ------------------------------------------------------------------------ */

/** One tuple of a batch. */
typedef struct cckey_tuple {
    cckey_bytes device, name, source;
    const cckey_option *options;
    size_t n_options;
} cckey_tuple;

/** Where digests are computed. */
typedef enum cckey_backend_kind {
    CCKEY_BACKEND_AUTO = 0,  /**< the device only where it is faster; else CPU */
    CCKEY_BACKEND_CPU = 1,   /**< CPU, SIMD multi-buffer on every thread */
    CCKEY_BACKEND_OPENCL = 2,
    CCKEY_BACKEND_CUDA = 3
} cckey_backend_kind;

/** How much of a device's output is recomputed on the CPU reference. */
typedef enum cckey_verify_mode {
    CCKEY_VERIFY_NONE = 0,
    CCKEY_VERIFY_ALL = 1,     /**< every digest */
    CCKEY_VERIFY_SAMPLE = 2   /**< a random sample drawn with replacement; a
                                   wrong digest in it turns the check into ALL */
} cckey_verify_mode;

/** Batch settings. Opaque; create with cckey_batch_config_new. */
typedef struct cckey_batch_config cckey_batch_config;

/** Progress callback: done and total count work units (bytes digested). */
typedef void (*cckey_progress_fn)(void *user, uint64_t done, uint64_t total);
/** Progress callback that may cancel: a non-zero return stops the batch. */
typedef int (*cckey_progress_cancel_fn)(void *user, uint64_t done, uint64_t total);

/**
 * Create a config holding the defaults: AUTO backend, all cores, no verify.
 * @return CCKEY_OK, CCKEY_ERR_INVALID_ARG or CCKEY_ERR_NO_MEMORY.
 */
CCKEY_API cckey_status cckey_batch_config_new(cckey_batch_config **out);

/** Free a config and the tables it kept. NULL is a no-op. */
CCKEY_API void cckey_batch_config_free(cckey_batch_config *cfg);

/**
 * Choose the backend.
 * @return CCKEY_OK; CCKEY_ERR_INVALID_ARG for an unknown kind.
 */
CCKEY_API cckey_status cckey_batch_config_set_backend(cckey_batch_config *cfg, cckey_backend_kind kind);

/**
 * Worker threads; 0 means one per online core.
 * @return CCKEY_OK; CCKEY_ERR_INVALID_ARG for more than 4096.
 */
CCKEY_API cckey_status cckey_batch_config_set_threads(cckey_batch_config *cfg, unsigned threads);

/**
 * Verification of device digests against the CPU reference. Wrong device
 * digests are replaced with the CPU's, so the keys are right; the batch
 * succeeds and cckey_batch_config_warning names the device and the count.
 * SAMPLE draws with replacement (every digest of a small batch), enough
 * that a device wrong on one digest in 10,000 escapes it with probability
 * under 1%; its warning gives the seed.
 * @return CCKEY_OK; CCKEY_ERR_INVALID_ARG for an unknown mode.
 */
CCKEY_API cckey_status cckey_batch_config_set_verify(cckey_batch_config *cfg, cckey_verify_mode mode);

/**
 * The seed of SAMPLE's draw, to repeat a run; unset, each batch draws a
 * fresh one.
 * @return CCKEY_OK, or CCKEY_ERR_INVALID_ARG for a NULL cfg.
 */
CCKEY_API cckey_status cckey_batch_config_set_verify_seed(cckey_batch_config *cfg, uint64_t seed);

/**
 * Progress reporting, called from the calling thread; fn may be NULL.
 * @return CCKEY_OK, or CCKEY_ERR_INVALID_ARG for a NULL cfg.
 */
CCKEY_API cckey_status cckey_batch_config_set_progress(cckey_batch_config *cfg, cckey_progress_fn fn, void *user);

/**
 * Progress reporting that can cancel, called from the calling thread (fn
 * may be NULL; it replaces any cckey_batch_config_set_progress callback,
 * and that one replaces it). When fn returns non-zero the batch stops:
 * CPU threads finish the run of messages they hold, a device finishes the
 * chunks it holds, and cckey_make_keys returns CCKEY_ERR_CANCELLED with out
 * unspecified.
 * @return CCKEY_OK, or CCKEY_ERR_INVALID_ARG for a NULL cfg.
 */
CCKEY_API cckey_status cckey_batch_config_set_progress_cancel(cckey_batch_config *cfg, cckey_progress_cancel_fn fn,
                                                              void *user);

/**
 * Which backend the last cckey_make_keys with this config used ("cpu",
 * "opencl", "cuda", "cpu+cuda", ...); "" before the first batch. The
 * string is owned by the config. Not thread-safe with a concurrent batch on
 * the same config: cckey_make_keys_ex gives each call its own result.
 */
CCKEY_API const char *cckey_batch_config_used(const cckey_batch_config *cfg);

/**
 * The warning of the last batch with this config, e.g. a device that failed
 * in mid-batch and left the rest to the CPU; "" when there was none. Owned
 * by the config, as cckey_batch_config_used.
 */
CCKEY_API const char *cckey_batch_config_warning(const cckey_batch_config *cfg);

/**
 * Parse a backend name ("auto", "cpu", "opencl", "cuda").
 * @return CCKEY_OK; CCKEY_ERR_INVALID_ARG for anything else.
 */
CCKEY_API cckey_status cckey_backend_from_name(const char *name, cckey_backend_kind *out);

/** The name of a backend kind, or "unknown". A static string. */
CCKEY_API const char *cckey_backend_name(cckey_backend_kind kind);

/**
 * Compute the keys of n tuples. out[i] receives the key of tuples[i].
 * Each distinct field value is digested at most once per block of tuples
 * planned together, on all threads; fields at the same address as an
 * earlier one (a shared device, source or options array) cost nothing more.
 * Memory besides out is bounded per thread and does not grow with n on the
 * CPU backend; a config keeps its tables for its next batch, so that
 * repeated batches touch no fresh pages, and cckey_batch_config_free
 * releases them (docs/IMPLEMENTATION.md gives the figures).
 * n must be below 2^32 / (3 + 2 * options).
 * @param out    n key buffers; may be NULL only when n is 0.
 * @param tuples n tuples; may be NULL only when n is 0.
 * @param config NULL for the defaults.
 * @return CCKEY_OK; CCKEY_ERR_INVALID_ARG (a bad tuple: cckey_last_error
 *         names its index); CCKEY_ERR_UNAVAILABLE when an explicitly chosen
 *         backend cannot run here; CCKEY_ERR_VERIFY; CCKEY_ERR_NO_MEMORY;
 *         CCKEY_ERR_THREAD; CCKEY_ERR_CANCELLED. A device failure in
 *         mid-batch is not an error: the rest runs on the CPU and the keys
 *         are still right. On error the contents of out are unspecified.
 */
CCKEY_API cckey_status cckey_make_keys(char (*out)[CCKEY_KEY_LEN + 1], const cckey_tuple *tuples,
                                       size_t n, const cckey_batch_config *config);

/** What one batch call used and reported (cckey_make_keys_ex). */
typedef struct cckey_batch_result {
    char used[32];         /**< the backends used: "cpu", "opencl", "cpu+cuda", ... */
    char warning[1024];    /**< e.g. a device that failed in mid-batch; "" when none */
    uint64_t reserved[4];  /**< 0 */
} cckey_batch_result;

/**
 * cckey_make_keys, reporting into result what this call used and any
 * warning, so that calls sharing a config (on several threads, or queued)
 * each get their own. The config is only read; the batch also leaves its
 * report as the config's last (cckey_batch_config_used, _warning), as
 * cckey_make_keys does.
 * @param result  written on every return, whatever the status; not NULL.
 * @return as cckey_make_keys; CCKEY_ERR_INVALID_ARG also for a NULL result.
 */
CCKEY_API cckey_status cckey_make_keys_ex(char (*out)[CCKEY_KEY_LEN + 1], const cckey_tuple *tuples, size_t n,
                                          const cckey_batch_config *config, cckey_batch_result *result);

/**
 * cckey_make_keys for tuples whose sources are already digested: where
 * sources[i] is not NULL, the key's source field is that handle's digest
 * (cckey_source_new, _new_digest or _new_fd made it) and tuples[i].source
 * must be empty ({NULL, 0}); nothing of it is digested again. Where
 * sources[i] is NULL, or sources is NULL, tuples[i].source is digested as
 * cckey_make_keys does. The keys are byte-identical to cckey_make_keys
 * given each handle's source bytes. A caller that reads source files
 * itself (the CLI's batch) digests each distinct file once and hands the
 * library one handle per file.
 * @param sources n handles or NULLs; may be NULL. The handles are only read
 *                (from several threads at once) and stay the caller's.
 * @return as cckey_make_keys; CCKEY_ERR_INVALID_ARG also for a tuple with
 *         both a handle and source bytes (cckey_last_error names it).
 */
CCKEY_API cckey_status cckey_make_keys_sources(char (*out)[CCKEY_KEY_LEN + 1], const cckey_tuple *tuples,
                                               const cckey_source *const *sources, size_t n,
                                               const cckey_batch_config *config);

/**
 * cckey_make_keys, with each key as its 64 binary bytes: the four field
 * digests that cckey_key_parse would give for the key cckey_make_keys
 * writes, without the 131-byte text.
 * @return as cckey_make_keys.
 */
CCKEY_API cckey_status cckey_make_keys_bin(unsigned char (*out)[CCKEY_KEY_BIN_LEN], const cckey_tuple *tuples,
                                           size_t n, const cckey_batch_config *config);

/* ------------------------------------------------------------------------ */
/* A keying thread, for callers that hold a lock                             */
/* ------------------------------------------------------------------------ */

/** Calls that may be submitted to one keyer and not yet waited for. */
#define CCKEY_KEYER_DEPTH 8
/** A thread of its own for cckey_make_keys. Opaque. */
typedef struct cckey_keyer cckey_keyer;

/**
 * Start a keyer: a thread whose cckey_make_keys calls run one at a time, in
 * the order submitted. For a caller that must hold a lock while it prepares
 * tuples (a language runtime's: the GIL, OCaml's runtime lock): it submits a
 * block of tuples, converts the next blocks while this one is keyed, and
 * waits for each in turn. The keys are exactly cckey_make_keys'. A handle
 * is for one caller thread at a time.
 * @return CCKEY_OK; CCKEY_ERR_INVALID_ARG (out is NULL); CCKEY_ERR_NO_MEMORY;
 *         CCKEY_ERR_THREAD.
 */
CCKEY_API cckey_status cckey_keyer_new(cckey_keyer **out);

/**
 * Queue cckey_make_keys(out, tuples, n, config) on k's thread and return
 * at once. Every argument, and the strings the tuples point to, must stay
 * valid and unchanged until cckey_keyer_wait has returned this call's
 * status. Calls that share a config run one after another, as they would on
 * one thread.
 * @return CCKEY_OK; CCKEY_ERR_INVALID_ARG, and nothing queued, for a NULL
 *         k, NULL out or tuples with n > 0, or when CCKEY_KEYER_DEPTH calls
 *         are already waiting to be waited for.
 */
CCKEY_API cckey_status cckey_keyer_submit(cckey_keyer *k, char (*out)[CCKEY_KEY_LEN + 1],
                                          const cckey_tuple *tuples, size_t n, const cckey_batch_config *config);

/**
 * Wait for the oldest submitted call not yet waited for.
 * @return what its cckey_make_keys returned (CCKEY_OK when none is left;
 *         CCKEY_ERR_INVALID_ARG for a NULL k). On error cckey_last_error,
 *         on the waiting thread, says why.
 */
CCKEY_API cckey_status cckey_keyer_wait(cckey_keyer *k);

/**
 * The warning of the call the last cckey_keyer_wait returned ("" when
 * none): that call's own cckey_batch_result.warning, whatever calls queued
 * after it did to the config. Valid until the next wait.
 */
CCKEY_API const char *cckey_keyer_warning(const cckey_keyer *k);

/** Let the submitted calls finish, end the thread and free k. NULL is a no-op. */
CCKEY_API void cckey_keyer_free(cckey_keyer *k);

/* ------------------------------------------------------------------------ */
/* Devices                                                                   */
/* ------------------------------------------------------------------------ */

/** One device of a device backend (cckey_devices). */
typedef struct cckey_device {
    cckey_backend_kind backend;
    unsigned index;         /**< the index cckey_batch_config_set_device takes */
    char id[400];           /**< "name|driver": recommended for a tuple's device field */
    char name[256];         /**< CL_DEVICE_NAME / cuDeviceGetName */
    char driver[128];       /**< CL_DRIVER_VERSION / the NVIDIA driver version */
    char platform[128];     /**< the OpenCL platform; "CUDA x.y" for CUDA */
    char type[16];          /**< "gpu", "cpu", "accelerator" or "other" */
    uint64_t global_mem;    /**< bytes */
    unsigned compute_units;
    int usable;             /**< can run the kernel */
    int selected;           /**< the device the config selects */
    int auto_ok;            /**< CCKEY_BACKEND_AUTO may use it (never a CPU device) */
} cckey_device;

/**
 * List the devices of a device backend. Up to max devices go to out (max may
 * be 0), *count receives how many exist; `selected` marks the one a batch
 * with cfg (NULL: defaults) would use. The driver is loaded and the devices
 * are found once per process.
 * @return CCKEY_OK; CCKEY_ERR_UNAVAILABLE when the backend cannot run here
 *         with cfg (not compiled in, no driver, no device, a selector that
 *         matches no usable device), with the reason in cckey_last_error and
 *         the devices that exist still listed; CCKEY_ERR_INVALID_ARG.
 */
CCKEY_API cckey_status cckey_devices(const cckey_batch_config *cfg, cckey_backend_kind kind, cckey_device *out,
                                     size_t max, size_t *count);

/**
 * The device a device backend (CCKEY_BACKEND_OPENCL or _CUDA) uses: NULL or
 * "" for the best usable one (a GPU before an accelerator before a CPU
 * device), a decimal index as cckey_devices numbers them, or a
 * case-insensitive part of the device's or platform's name. A selector
 * that matches no usable device makes that backend unavailable (with the
 * reason) for batches with this config.
 * @return CCKEY_OK; CCKEY_ERR_INVALID_ARG for another kind or a selector
 *         of 128 bytes or more.
 */
CCKEY_API cckey_status cckey_batch_config_set_device(cckey_batch_config *cfg, cckey_backend_kind kind,
                                                     const char *selector);

/**
 * Where a device backend loads its driver from: path (a file name dlopen
 * searches for, or a path) replaces the default, "libOpenCL.so.1" for
 * CCKEY_BACKEND_OPENCL and "libcuda.so.1" for CCKEY_BACKEND_CUDA; NULL or
 * "" restores it. Process-wide, as the driver is: it is loaded once, on
 * the backend's first use, so set the path before that. (The cckey CLI
 * maps CCKEY_OPENCL_LIBRARY and CCKEY_CUDA_LIBRARY onto this.)
 * @return CCKEY_OK (also when the driver was already loaded from this
 *         very path); CCKEY_ERR_INVALID_ARG for another kind, a path of
 *         4096 bytes or more, or a driver already loaded from another
 *         path; CCKEY_ERR_UNAVAILABLE when the backend is not compiled in.
 */
CCKEY_API cckey_status cckey_set_driver_library(cckey_backend_kind kind, const char *path);

/* ------------------------------------------------------------------------ */
/* This build and this machine (what `cckey --version` reports)             */
/* ------------------------------------------------------------------------ */

/** The backends compiled into this library, space-separated, e.g.
 *  "cpu opencl cuda". A static string. */
CCKEY_API const char *cckey_build_backends(void);

/** How a backend gets its kernel, in a few words ("host code", "embedded
 *  OpenCL C source, built on first use", ...; "not compiled in"). A static
 *  string. */
CCKEY_API const char *cckey_backend_kernel(cckey_backend_kind kind);

/** The instruction set the CPU backend's MD5 uses on this machine: "avx512",
 *  "avx2", "sse2", "neon" or "scalar". A static string. */
CCKEY_API const char *cckey_cpu_isa(void);

/** Messages the CPU backend's MD5 hashes per call on this machine (the
 *  lanes of cckey_cpu_isa()). The CCKEY_FORCE_ISA environment variable,
 *  read once, may force a narrower instruction set: a debugging switch, and
 *  the one variable the library reads. */
CCKEY_API unsigned cckey_cpu_lanes(void);

/** Host threads a batch uses by default: the online cores. */
CCKEY_API unsigned cckey_cpu_threads(void);

/**
 * Whether the run-time library a backend needs loads here (OpenCL:
 * libOpenCL.so.1; CUDA: libcuda.so.1, initialised). Says nothing about
 * devices: cckey_devices lists those.
 * @return CCKEY_OK (always for CPU and AUTO); CCKEY_ERR_UNAVAILABLE when the
 *         backend is not compiled in or its library does not load
 *         (cckey_last_error() says why); CCKEY_ERR_INVALID_ARG for an
 *         unknown kind.
 */
CCKEY_API cckey_status cckey_backend_runtime(cckey_backend_kind kind);

#ifdef __cplusplus
}
#endif
#endif /* CCKEY_H */
