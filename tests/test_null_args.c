/* Every public function of include/ (cckey.h, cckey_store.h,
 * cckey_advanced.h), called with NULL for each
 * pointer it must not be given as NULL: the header promises
 * CCKEY_ERR_INVALID_ARG with a detail, never a crash (6f74adb's keyer
 * segfaulted). Where the header says NULL is allowed (a no-op free, a NULL
 * config for the defaults, an optional out), the call must simply return.
 *
 * Each function's walk runs in a child process, so a crash names the
 * function and the others still run. The walk table is checked against the
 * headers themselves (argv[1..]): a function added to a public header
 * without a walk here fails this test (test_exports ties the headers to the
 * exported symbols).
 *
 * usage: test_null_args PATH/TO/cckey.h PATH/TO/cckey_store.h ... */
#include "cckey.h"
#include "cckey_advanced.h"
#include "cckey_store.h"
#include "core/internal.h"   /* cckey_clear_error: each check sees fresh detail */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;
static const char *current;

static void expect_status(cckey_status got, cckey_status want, const char *what, int line)
{
    if (got != want) {
        fprintf(stderr, "  %s (line %d): %s gave %d (%s), not %d\n", current, line, what, (int)got,
                cckey_strerror(got), (int)want);
        failures++;
    } else if (want != CCKEY_OK && !cckey_last_error()[0]) {
        fprintf(stderr, "  %s (line %d): %s left no detail\n", current, line, what);
        failures++;
    }
}

#define EXPECT(expr, want) (cckey_clear_error(), expect_status((expr), (want), #expr, __LINE__))
#define INVALID(expr) EXPECT(expr, CCKEY_ERR_INVALID_ARG)
#define STRING(expr)                                                                    \
    do {                                                                                \
        if (!(expr)) {                                                                  \
            fprintf(stderr, "  %s (line %d): %s gave NULL\n", current, __LINE__, #expr); \
            failures++;                                                                 \
        }                                                                               \
    } while (0)

static const cckey_bytes OK = {"ok", 2};
static const cckey_bytes BAD = {NULL, 1};
static const char KEY[] = "cfcd208495d565ef66e7dff9f98764da:73d6273882d67981027dcbbf1e2ca012:"
                          "c13367945d5d4c91047b3b50234aa7ab:d41d8cd98f00b204e9800998ecf8427e";
static char out_key[CCKEY_KEY_LEN + 1];
static char dir[] = "/tmp/cckey-null-XXXXXX";

static cckey_store *store(void)
{
    cckey_store *s = NULL;
    if (cckey_store_open(&s, dir, 0) != CCKEY_OK) {
        fprintf(stderr, "  %s: cannot open a store in %s\n", current, dir);
        exit(1);
    }
    return s;
}

static cckey_batch_config *config(void)
{
    cckey_batch_config *c = NULL;
    if (cckey_batch_config_new(&c) != CCKEY_OK) exit(1);
    return c;
}

static cckey_source *source(void)
{
    cckey_source *s = NULL;
    if (cckey_source_new(&s, OK, 0) != CCKEY_OK) exit(1);
    return s;
}

/* ---- version, errors, single keys ---- */
static void w_strerror(void) { STRING(cckey_strerror((cckey_status)-7)); }
static void w_last_error(void) { STRING(cckey_last_error()); }
static void w_version(void) { STRING(cckey_version()); }
static void w_version_number(void) { (void)cckey_version_number(); }

static void w_make_key(void)
{
    cckey_option o = {OK, OK};
    INVALID(cckey_make_key(NULL, OK, OK, OK, &o, 1));
    INVALID(cckey_make_key(out_key, BAD, OK, OK, NULL, 0));
    INVALID(cckey_make_key(out_key, OK, BAD, OK, NULL, 0));
    INVALID(cckey_make_key(out_key, OK, OK, BAD, NULL, 0));
    INVALID(cckey_make_key(out_key, OK, OK, OK, NULL, 1));
    cckey_option bad = {BAD, OK};
    INVALID(cckey_make_key(out_key, OK, OK, OK, &bad, 1));
    EXPECT(cckey_make_key(out_key, OK, OK, OK, NULL, 0), CCKEY_OK);
}

static void w_make_key_str(void)
{
    const char *opts[] = {"k", NULL};
    INVALID(cckey_make_key_str(NULL, "d", "n", "s", NULL, 0));
    INVALID(cckey_make_key_str(out_key, NULL, "n", "s", NULL, 0));
    INVALID(cckey_make_key_str(out_key, "d", NULL, "s", NULL, 0));
    INVALID(cckey_make_key_str(out_key, "d", "n", NULL, NULL, 0));
    INVALID(cckey_make_key_str(out_key, "d", "n", "s", NULL, 1));
    INVALID(cckey_make_key_str(out_key, "d", "n", "s", opts, 1));
}

static void w_option_order(void)
{
    cckey_option o = {OK, OK};
    size_t order[1];
    INVALID(cckey_option_order(NULL, 1, order));
    INVALID(cckey_option_order(&o, 1, NULL));
    EXPECT(cckey_option_order(NULL, 0, NULL), CCKEY_OK);
}

static void w_key_parse(void)
{
    INVALID(cckey_key_parse(NULL, CCKEY_KEY_LEN, NULL));
    EXPECT(cckey_key_parse(KEY, CCKEY_KEY_LEN, NULL), CCKEY_OK);
}

/* ---- sources and digests ---- */
static void w_source_new(void)
{
    cckey_source *s = NULL;
    INVALID(cckey_source_new(NULL, OK, 0));
    INVALID(cckey_source_new(&s, BAD, 0));
}

static void w_source_free(void) { cckey_source_free(NULL); }

static void w_source_key(void)
{
    cckey_source *s = source();
    INVALID(cckey_source_key(out_key, NULL, OK, OK, NULL, 0));
    INVALID(cckey_source_key(NULL, s, OK, OK, NULL, 0));
    INVALID(cckey_source_key(out_key, s, BAD, OK, NULL, 0));
    INVALID(cckey_source_key(out_key, s, OK, OK, NULL, 1));
    cckey_source_free(s);
}

static void w_source_digest(void)
{
    char hex[CCKEY_HEX_LEN + 1];
    cckey_source *s = source();
    INVALID(cckey_source_digest(hex, NULL));
    INVALID(cckey_source_digest(NULL, s));
    cckey_source_free(s);
}

static void w_source_new_digest(void)
{
    unsigned char d[CCKEY_DIGEST_LEN] = {0};
    cckey_source *s = NULL;
    INVALID(cckey_source_new_digest(NULL, d));
    INVALID(cckey_source_new_digest(&s, NULL));
}

static void w_source_new_fd(void) { INVALID(cckey_source_new_fd(NULL, 0)); }

static void w_digest_init(void) { INVALID(cckey_digest_init(NULL)); }

static void w_digest_update(void)
{
    cckey_digest d;
    INVALID(cckey_digest_update(NULL, "x", 1));
    cckey_digest_init(&d);
    INVALID(cckey_digest_update(&d, NULL, 1));
}

static void w_digest_final(void)
{
    cckey_digest d;
    char hex[CCKEY_HEX_LEN + 1];
    INVALID(cckey_digest_final(NULL, hex, NULL));
    cckey_digest_init(&d);
    INVALID(cckey_digest_final(&d, NULL, NULL));
}

/* ---- batch configs ---- */
static void w_config_new(void) { INVALID(cckey_batch_config_new(NULL)); }
static void w_config_free(void) { cckey_batch_config_free(NULL); }
static void w_set_backend(void) { INVALID(cckey_batch_config_set_backend(NULL, CCKEY_BACKEND_CPU)); }
static void w_set_threads(void) { INVALID(cckey_batch_config_set_threads(NULL, 1)); }
static void w_set_verify(void) { INVALID(cckey_batch_config_set_verify(NULL, CCKEY_VERIFY_NONE)); }
static void w_set_verify_seed(void) { INVALID(cckey_batch_config_set_verify_seed(NULL, 1)); }
static void w_set_chunk_bytes(void) { INVALID(cckey_batch_config_set_chunk_bytes(NULL, 4096)); }
static void w_set_long_bytes(void) { INVALID(cckey_batch_config_set_long_bytes(NULL, 4096)); }
static void w_set_device_share(void) { INVALID(cckey_batch_config_set_device_share(NULL, 1)); }
static void w_chunk_bytes(void) { EXPECT((cckey_status)cckey_batch_config_chunk_bytes(NULL), (cckey_status)0); }
static void w_long_bytes(void) { EXPECT((cckey_status)cckey_batch_config_long_bytes(NULL), (cckey_status)0); }
static void w_used(void) { STRING(cckey_batch_config_used(NULL)); }
static void w_warning(void) { STRING(cckey_batch_config_warning(NULL)); }

static void w_set_progress(void)
{
    cckey_batch_config *c = config();
    INVALID(cckey_batch_config_set_progress(NULL, NULL, NULL));
    EXPECT(cckey_batch_config_set_progress(c, NULL, NULL), CCKEY_OK);
    cckey_batch_config_free(c);
}

static void w_set_progress_cancel(void)
{
    cckey_batch_config *c = config();
    INVALID(cckey_batch_config_set_progress_cancel(NULL, NULL, NULL));
    EXPECT(cckey_batch_config_set_progress_cancel(c, NULL, NULL), CCKEY_OK);
    cckey_batch_config_free(c);
}

static void w_set_device(void)
{
    cckey_batch_config *c = config();
    INVALID(cckey_batch_config_set_device(NULL, CCKEY_BACKEND_OPENCL, "0"));
    EXPECT(cckey_batch_config_set_device(c, CCKEY_BACKEND_OPENCL, NULL), CCKEY_OK);
    cckey_batch_config_free(c);
}

/* ---- backends (no driver is loaded: CPU, or arguments refused first) ---- */
static void w_backend_from_name(void)
{
    cckey_backend_kind k;
    INVALID(cckey_backend_from_name(NULL, &k));
    INVALID(cckey_backend_from_name("cpu", NULL));
}

static void w_backend_name(void) { STRING(cckey_backend_name((cckey_backend_kind)99)); }
static void w_backend_kernel(void) { STRING(cckey_backend_kernel((cckey_backend_kind)99)); }
static void w_opencl_status_name(void) { STRING(cckey_opencl_status_name(12345)); }
static void w_cpu_lanes(void) { (void)cckey_cpu_lanes(); }
static void w_cpu_features(void) { (void)cckey_cpu_features(); }
static void w_cpu_forced_isa(void) { (void)cckey_cpu_forced_isa(); }
static void w_cpu_threads(void) { (void)cckey_cpu_threads(); }
static void w_build_backends(void) { STRING(cckey_build_backends()); }
static void w_cpu_isa(void) { STRING(cckey_cpu_isa()); }
static void w_backend_runtime(void) { EXPECT(cckey_backend_runtime(CCKEY_BACKEND_CPU), CCKEY_OK); }

static void w_devices(void)
{
    cckey_device d;
    size_t n;
    INVALID(cckey_devices(NULL, CCKEY_BACKEND_CPU, &d, 1, &n));   /* no device backend */
    INVALID(cckey_devices(NULL, CCKEY_BACKEND_OPENCL, NULL, 1, &n));
    INVALID(cckey_devices(NULL, CCKEY_BACKEND_OPENCL, &d, 1, NULL));
}

static void w_set_driver_library(void)
{
    /* NULL restores the default: OK, or unavailable in a build without it. */
    cckey_status st = cckey_set_driver_library(CCKEY_BACKEND_OPENCL, NULL);
    if (st != CCKEY_OK && st != CCKEY_ERR_UNAVAILABLE) EXPECT(st, CCKEY_OK);
}

static void w_driver_symbol(void)
{
    cckey_clear_error();
    if (cckey_driver_symbol(CCKEY_BACKEND_OPENCL, NULL) || !cckey_last_error()[0]) {
        fprintf(stderr, "  %s: a NULL name gave an address or no detail\n", current);
        failures++;
    }
}

/* ---- batches and the keyer ---- */
static cckey_tuple one = {{"d", 1}, {"n", 1}, {"s", 1}, NULL, 0};

static void w_make_keys(void)
{
    cckey_tuple bad = one;
    bad.device = BAD;
    INVALID(cckey_make_keys(NULL, &one, 1, NULL));
    INVALID(cckey_make_keys(&out_key, NULL, 1, NULL));
    INVALID(cckey_make_keys(&out_key, &bad, 1, NULL));
    EXPECT(cckey_make_keys(NULL, NULL, 0, NULL), CCKEY_OK);
}

static void w_make_keys_ex(void)
{
    cckey_batch_result r;
    cckey_tuple bad = one;
    bad.device = BAD;
    INVALID(cckey_make_keys_ex(&out_key, &one, 1, NULL, NULL));
    INVALID(cckey_make_keys_ex(NULL, &one, 1, NULL, &r));
    INVALID(cckey_make_keys_ex(&out_key, NULL, 1, NULL, &r));
    INVALID(cckey_make_keys_ex(&out_key, &bad, 1, NULL, &r));
    EXPECT(cckey_make_keys_ex(NULL, NULL, 0, NULL, &r), CCKEY_OK);
}

static void w_make_keys_bin(void)
{
    unsigned char bin[1][CCKEY_KEY_BIN_LEN];
    INVALID(cckey_make_keys_bin(NULL, &one, 1, NULL));
    INVALID(cckey_make_keys_bin(bin, NULL, 1, NULL));
}

static void w_make_keys_sources(void)
{
    cckey_source *src = NULL;
    if (cckey_source_new(&src, OK, CCKEY_SOURCE_COPY) != CCKEY_OK) abort();
    const cckey_source *srcs[1] = {src};
    cckey_tuple empty = one;
    empty.source = (cckey_bytes){NULL, 0};
    INVALID(cckey_make_keys_sources(NULL, &empty, srcs, 1, NULL));
    INVALID(cckey_make_keys_sources(&out_key, NULL, srcs, 1, NULL));
    INVALID(cckey_make_keys_sources(&out_key, &one, srcs, 1, NULL));   /* a handle and bytes */
    EXPECT(cckey_make_keys_sources(&out_key, &one, NULL, 1, NULL), CCKEY_OK);
    EXPECT(cckey_make_keys_sources(NULL, NULL, NULL, 0, NULL), CCKEY_OK);
    cckey_source_free(src);
}

static void w_backend_digests(void)
{
    unsigned char d[1][CCKEY_DIGEST_LEN];
    cckey_batch_config *c = config();
    cckey_batch_config_set_backend(c, CCKEY_BACKEND_CPU);
    INVALID(cckey_backend_digests(NULL, &OK, 1, d));
    INVALID(cckey_backend_digests(c, NULL, 1, d));
    INVALID(cckey_backend_digests(c, &OK, 1, NULL));
    INVALID(cckey_backend_digests(c, &BAD, 1, d));
    cckey_batch_config_free(c);
}

static void w_keyer_new(void) { INVALID(cckey_keyer_new(NULL)); }

static void w_keyer_submit(void)
{
    cckey_keyer *k = NULL;
    INVALID(cckey_keyer_submit(NULL, &out_key, &one, 1, NULL));
    if (cckey_keyer_new(&k) != CCKEY_OK) exit(1);
    INVALID(cckey_keyer_submit(k, NULL, &one, 1, NULL));
    INVALID(cckey_keyer_submit(k, &out_key, NULL, 1, NULL));
    EXPECT(cckey_keyer_wait(k), CCKEY_OK);   /* nothing was queued */
    EXPECT(cckey_keyer_submit(k, NULL, NULL, 0, NULL), CCKEY_OK);
    EXPECT(cckey_keyer_wait(k), CCKEY_OK);
    cckey_keyer_free(k);
}

static void w_keyer_wait(void) { INVALID(cckey_keyer_wait(NULL)); }
static void w_keyer_warning(void) { STRING(cckey_keyer_warning(NULL)); }
static void w_keyer_free(void) { cckey_keyer_free(NULL); }

/* ---- the store ---- */
static void w_store_open(void)
{
    cckey_store *s = NULL;
    INVALID(cckey_store_open(NULL, dir, 0));
    INVALID(cckey_store_open(&s, NULL, 0));
}

static void w_store_open_read_only(void)
{
    cckey_store *s = NULL;
    INVALID(cckey_store_open_read_only(NULL, dir));
    INVALID(cckey_store_open_read_only(&s, NULL));
}

static void w_store_close(void) { cckey_store_close(NULL); }
static void w_store_free_buffer(void) { cckey_store_free_buffer(NULL); }

static void w_store_get(void)
{
    cckey_store *s = store();
    void *buf;
    size_t len;
    INVALID(cckey_store_get(NULL, KEY, &buf, &len));
    INVALID(cckey_store_get(s, NULL, &buf, &len));
    INVALID(cckey_store_get(s, KEY, NULL, &len));
    INVALID(cckey_store_get(s, KEY, &buf, NULL));
    cckey_store_close(s);
}

static void w_store_put(void)
{
    cckey_store *s = store();
    INVALID(cckey_store_put(NULL, KEY, "x", 1));
    INVALID(cckey_store_put(s, NULL, "x", 1));
    INVALID(cckey_store_put(s, KEY, NULL, 1));
    cckey_store_close(s);
}

static void w_store_put_meta(void)
{
    cckey_store *s = store();
    INVALID(cckey_store_put_meta(NULL, KEY, "x", 1, NULL));
    INVALID(cckey_store_put_meta(s, NULL, "x", 1, NULL));
    INVALID(cckey_store_put_meta(s, KEY, NULL, 1, NULL));
    cckey_store_close(s);
}

static void w_store_put_ex(void)
{
    cckey_store *s = store();
    cckey_put_options opt = {0};
    INVALID(cckey_store_put_ex(NULL, KEY, "x", 1, NULL, &opt));
    INVALID(cckey_store_put_ex(s, NULL, "x", 1, NULL, &opt));
    INVALID(cckey_store_put_ex(s, KEY, NULL, 1, NULL, &opt));
    cckey_store_close(s);
}

/* The checked look-ups' common arguments, each NULL in turn: the store s,
 * the key, and the outs buf and len; what follows len, with its comma, comes
 * after fn (so `CHECKED_LOOKUP_INVALID(f, , &why)` checks f(..., &len, &why)). */
#define CHECKED_LOOKUP_INVALID(fn, ...)                      \
    do {                                                     \
        INVALID(fn(NULL, KEY, NULL, &buf, &len __VA_ARGS__)); \
        INVALID(fn(s, NULL, NULL, &buf, &len __VA_ARGS__));   \
        INVALID(fn(s, KEY, NULL, NULL, &len __VA_ARGS__));    \
        INVALID(fn(s, KEY, NULL, &buf, NULL __VA_ARGS__));    \
    } while (0)

static void w_store_get_checked(void)
{
    cckey_store *s = store();
    void *buf;
    size_t len;
    CHECKED_LOOKUP_INVALID(cckey_store_get_checked, );
    cckey_store_close(s);
}

/* The walk of a checked look-up whose last argument, an out of type T, may
 * be NULL (the miss is still reported). */
#define CHECKED_LOOKUP_WALK(walk, fn, T)                                            \
    static void walk(void)                                                          \
    {                                                                               \
        cckey_store *s = store();                                                   \
        void *buf;                                                                  \
        size_t len;                                                                 \
        T out;                                                                      \
        CHECKED_LOOKUP_INVALID(fn, , &out);                                         \
        EXPECT(fn(s, KEY, NULL, &buf, &len, NULL), CCKEY_ERR_NOT_FOUND);            \
        cckey_store_close(s);                                                       \
    }
CHECKED_LOOKUP_WALK(w_store_get_explained, cckey_store_get_explained, cckey_miss)
CHECKED_LOOKUP_WALK(w_store_get_info, cckey_store_get_info, cckey_lookup_info)

static void w_store_list_info(void)
{
    cckey_store *s = store();
    INVALID(cckey_store_list_info(NULL, NULL, NULL));
    INVALID(cckey_store_list_info(s, NULL, NULL));
    cckey_store_close(s);
}

static void w_store_set_compression(void)
{
    cckey_store *s = store();
    INVALID(cckey_store_set_compression(NULL, CCKEY_COMPRESSION_ZSTD, 3));
    INVALID(cckey_store_set_compression(s, (cckey_compression)7, 3));
    INVALID(cckey_store_set_compression(s, CCKEY_COMPRESSION_ZSTD, 1000));
    EXPECT(cckey_store_set_compression(s, CCKEY_COMPRESSION_NONE, 1000), CCKEY_OK);   /* no level for none */
    cckey_store_close(s);
}

static void w_store_stats(void)
{
    cckey_store *s = store();
    cckey_store_usage u;
    INVALID(cckey_store_stats(NULL, &u));
    INVALID(cckey_store_stats(s, NULL));
    cckey_store_close(s);
}

static void w_store_list(void)
{
    cckey_store *s = store();
    INVALID(cckey_store_list(NULL, NULL, NULL));
    INVALID(cckey_store_list(s, NULL, NULL));
    cckey_store_close(s);
}

static void w_size_parse(void)
{
    uint64_t v;
    INVALID(cckey_size_parse(NULL, &v));
    INVALID(cckey_size_parse("1K", NULL));
}

static void w_store_trim(void) { INVALID(cckey_store_trim(NULL, NULL)); }

static void w_store_trim_older(void)
{
    cckey_store *s = store();
    INVALID(cckey_store_trim_older(NULL, 60, NULL));
    INVALID(cckey_store_trim_older(s, 0, NULL));
    EXPECT(cckey_store_trim_older(s, 60, NULL), CCKEY_OK);
    cckey_store_close(s);
}

static void w_age_parse(void)
{
    int64_t v;
    INVALID(cckey_age_parse(NULL, &v));
    INVALID(cckey_age_parse("1d", NULL));
}

static void w_store_verify(void)
{
    cckey_store *s = store();
    INVALID(cckey_store_verify(NULL, NULL));
    EXPECT(cckey_store_verify(s, NULL), CCKEY_OK);
    cckey_store_close(s);
}

static void w_store_clear(void)
{
    cckey_store *s = store();
    INVALID(cckey_store_clear(NULL, NULL));
    EXPECT(cckey_store_clear(s, NULL), CCKEY_OK);
    cckey_store_close(s);
}

static void w_store_export(void)
{
    cckey_store *s = store();
    int fd[2];
    if (pipe(fd) != 0) exit(1);
    INVALID(cckey_store_export(NULL, NULL, 0, fd[1], NULL, NULL));
    const char *keys[] = {NULL};
    INVALID(cckey_store_export(s, keys, 1, fd[1], NULL, NULL));
    EXPECT(cckey_store_export(s, NULL, 0, fd[1], NULL, NULL), CCKEY_OK);   /* every entry: none */
    close(fd[0]), close(fd[1]);
    cckey_store_close(s);
}

static void w_store_export_ex(void)
{
    cckey_store *s = store();
    int fd[2];
    if (pipe(fd) != 0) exit(1);
    INVALID(cckey_store_export_ex(NULL, NULL, 0, fd[1], 0, NULL, NULL));
    const char *keys[] = {NULL};
    INVALID(cckey_store_export_ex(s, keys, 1, fd[1], CCKEY_EXPORT_ZSTD, NULL, NULL));
    INVALID(cckey_store_export_ex(s, NULL, 0, fd[1], 8, NULL, NULL));   /* an unknown flag */
    EXPECT(cckey_store_export_ex(s, NULL, 0, fd[1], CCKEY_EXPORT_ZSTD, NULL, NULL), CCKEY_OK);
    close(fd[0]), close(fd[1]);
    cckey_store_close(s);
}

static void w_store_import(void) { INVALID(cckey_store_import(NULL, 0, 0, NULL)); }

static void w_store_add_remote(void)
{
    cckey_store *s = store();
    INVALID(cckey_store_add_remote(NULL, "redis://127.0.0.1:1", NULL));
    INVALID(cckey_store_add_remote(s, NULL, NULL));
    cckey_store_close(s);
}

static void w_store_add_conf_remotes(void)
{
    cckey_store *s = store();
    INVALID(cckey_store_add_conf_remotes(NULL, NULL, 0, NULL));
    INVALID(cckey_store_add_conf_remotes(s, NULL, 1, NULL));   /* a count without its URLs */
    EXPECT(cckey_store_add_conf_remotes(s, NULL, 0, NULL), CCKEY_OK);   /* no cckey.conf: none */
    cckey_store_close(s);
}

static void w_store_remove(void)
{
    cckey_store *s = store();
    INVALID(cckey_store_remove(NULL, "k"));
    INVALID(cckey_store_remove(s, NULL));
    cckey_store_close(s);
}

static void w_store_remote_counters(void)
{
    cckey_store *s = store();
    cckey_remote_counters c;
    INVALID(cckey_store_remote_counters(NULL, 0, &c));
    INVALID(cckey_store_remote_counters(s, 0, NULL));
    cckey_store_close(s);
}

static int no_remote(void *user, const char *remote, const cckey_remote_counters *c)
{
    (void)user, (void)remote, (void)c;
    return 0;
}

static void w_store_remote_totals(void)
{
    cckey_store *s = store();
    INVALID(cckey_store_remote_totals(NULL, no_remote, NULL));
    INVALID(cckey_store_remote_totals(s, NULL, NULL));
    EXPECT(cckey_store_remote_totals(s, no_remote, NULL), CCKEY_OK);
    cckey_store_close(s);
}

static void w_store_zero_counters(void)
{
    cckey_store *s = store();
    INVALID(cckey_store_zero_counters(NULL));
    EXPECT(cckey_store_zero_counters(s), CCKEY_OK);
    cckey_store_close(s);
}

/* ---- include dependencies ---- */
static void w_dep_memo_new(void) { INVALID(cckey_dep_memo_new(NULL)); }
static void w_dep_memo_free(void) { cckey_dep_memo_free(NULL); }
static void w_deps_free(void) { cckey_deps_free(NULL, 0); }

static void w_deps_scan(void)
{
    cckey_dep *deps;
    size_t n;
    const char *roots[] = {dir};
    INVALID(cckey_deps_scan(NULL, 1, roots, 1, NULL, &deps, &n));
    INVALID(cckey_deps_scan("x", 1, NULL, 1, NULL, &deps, &n));
    INVALID(cckey_deps_scan("x", 1, roots, 1, NULL, NULL, &n));
    INVALID(cckey_deps_scan("x", 1, roots, 1, NULL, &deps, NULL));
}

static void w_deps_result_free(void) { cckey_deps_result_free(NULL); }

static void w_deps_find(void)
{
    const char *roots[] = {dir}, *none[] = {NULL};
    cckey_deps_result r;
    cckey_deps_request ok = {.source = "x", .len = 1, .roots = roots, .n_roots = 1};
    INVALID(cckey_deps_find(NULL, &r));
    INVALID(cckey_deps_find(&ok, NULL));
    cckey_deps_request rq = ok;
    rq.source = NULL;
    INVALID(cckey_deps_find(&rq, &r));
    rq = ok, rq.roots = NULL;
    INVALID(cckey_deps_find(&rq, &r));
    rq = ok, rq.roots = none;
    INVALID(cckey_deps_find(&rq, &r));
    rq = ok, rq.n_pre_includes = 1;
    INVALID(cckey_deps_find(&rq, &r));
    rq = ok, rq.pre_includes = none, rq.n_pre_includes = 1;
    INVALID(cckey_deps_find(&rq, &r));
    rq = ok, rq.n_includes = 1;
    INVALID(cckey_deps_find(&rq, &r));
    rq = ok, rq.n_read = 1;
    INVALID(cckey_deps_find(&rq, &r));
    rq = ok, rq.read = none, rq.n_read = 1;
    INVALID(cckey_deps_find(&rq, &r));
    EXPECT(cckey_deps_find(&ok, &r), CCKEY_OK);
    cckey_deps_result_free(&r);
}

#define W(fn, walk) {#fn, walk}
static const struct walk {
    const char *name;
    void (*run)(void);
} WALKS[] = {
    W(cckey_strerror, w_strerror), W(cckey_last_error, w_last_error), W(cckey_version, w_version),
    W(cckey_version_number, w_version_number), W(cckey_make_key, w_make_key), W(cckey_make_key_str, w_make_key_str),
    W(cckey_option_order, w_option_order), W(cckey_key_parse, w_key_parse), W(cckey_source_new, w_source_new),
    W(cckey_source_free, w_source_free), W(cckey_source_key, w_source_key), W(cckey_source_digest, w_source_digest),
    W(cckey_source_new_digest, w_source_new_digest), W(cckey_source_new_fd, w_source_new_fd),
    W(cckey_digest_init, w_digest_init), W(cckey_digest_update, w_digest_update),
    W(cckey_digest_final, w_digest_final), W(cckey_batch_config_new, w_config_new),
    W(cckey_batch_config_free, w_config_free), W(cckey_batch_config_set_backend, w_set_backend),
    W(cckey_batch_config_set_threads, w_set_threads), W(cckey_batch_config_set_verify, w_set_verify),
    W(cckey_batch_config_set_verify_seed, w_set_verify_seed), W(cckey_batch_config_set_progress, w_set_progress),
    W(cckey_batch_config_set_progress_cancel, w_set_progress_cancel),
    W(cckey_batch_config_set_chunk_bytes, w_set_chunk_bytes), W(cckey_batch_config_set_long_bytes, w_set_long_bytes),
    W(cckey_batch_config_set_device_share, w_set_device_share), W(cckey_batch_config_chunk_bytes, w_chunk_bytes),
    W(cckey_batch_config_long_bytes, w_long_bytes), W(cckey_batch_config_set_device, w_set_device),
    W(cckey_batch_config_used, w_used), W(cckey_batch_config_warning, w_warning),
    W(cckey_backend_from_name, w_backend_from_name), W(cckey_backend_name, w_backend_name),
    W(cckey_backend_kernel, w_backend_kernel), W(cckey_opencl_status_name, w_opencl_status_name),
    W(cckey_cpu_lanes, w_cpu_lanes), W(cckey_cpu_features, w_cpu_features), W(cckey_cpu_forced_isa, w_cpu_forced_isa),
    W(cckey_cpu_threads, w_cpu_threads), W(cckey_build_backends, w_build_backends),
    W(cckey_cpu_isa, w_cpu_isa), W(cckey_backend_runtime, w_backend_runtime), W(cckey_devices, w_devices),
    W(cckey_set_driver_library, w_set_driver_library), W(cckey_driver_symbol, w_driver_symbol),
    W(cckey_make_keys, w_make_keys), W(cckey_make_keys_ex, w_make_keys_ex), W(cckey_make_keys_bin, w_make_keys_bin),
    W(cckey_make_keys_sources, w_make_keys_sources),
    W(cckey_backend_digests, w_backend_digests), W(cckey_keyer_new, w_keyer_new),
    W(cckey_keyer_submit, w_keyer_submit), W(cckey_keyer_wait, w_keyer_wait),
    W(cckey_keyer_warning, w_keyer_warning), W(cckey_keyer_free, w_keyer_free), W(cckey_store_open, w_store_open),
    W(cckey_store_open_read_only, w_store_open_read_only), W(cckey_store_close, w_store_close),
    W(cckey_store_free_buffer, w_store_free_buffer), W(cckey_store_get, w_store_get),
    W(cckey_store_put, w_store_put), W(cckey_store_put_meta, w_store_put_meta),
    W(cckey_store_get_checked, w_store_get_checked), W(cckey_store_get_explained, w_store_get_explained),
    W(cckey_store_stats, w_store_stats), W(cckey_store_list, w_store_list), W(cckey_size_parse, w_size_parse),
    W(cckey_store_trim, w_store_trim), W(cckey_store_verify, w_store_verify), W(cckey_store_clear, w_store_clear),
    W(cckey_store_export, w_store_export), W(cckey_store_export_ex, w_store_export_ex),
    W(cckey_store_import, w_store_import),
    W(cckey_store_add_remote, w_store_add_remote), W(cckey_store_remote_counters, w_store_remote_counters),
    W(cckey_store_add_conf_remotes, w_store_add_conf_remotes), W(cckey_store_remove, w_store_remove),
    W(cckey_dep_memo_new, w_dep_memo_new), W(cckey_dep_memo_free, w_dep_memo_free),
    W(cckey_deps_scan, w_deps_scan), W(cckey_deps_free, w_deps_free),
    W(cckey_deps_find, w_deps_find), W(cckey_deps_result_free, w_deps_result_free),
    W(cckey_store_put_ex, w_store_put_ex), W(cckey_store_get_info, w_store_get_info),
    W(cckey_store_list_info, w_store_list_info), W(cckey_store_remote_totals, w_store_remote_totals),
    W(cckey_store_zero_counters, w_store_zero_counters), W(cckey_store_trim_older, w_store_trim_older),
    W(cckey_age_parse, w_age_parse), W(cckey_store_set_compression, w_store_set_compression),
};
#define N_WALKS (sizeof WALKS / sizeof *WALKS)

static const struct walk *walk_of(const char *name, size_t len)
{
    for (size_t i = 0; i < N_WALKS; i++)
        if (strlen(WALKS[i].name) == len && memcmp(WALKS[i].name, name, len) == 0) return &WALKS[i];
    return NULL;
}

/* The function name of each "CCKEY_API ... cckey_NAME(" declaration of the
 * header (the identifier before the first '(' after CCKEY_API); every one
 * must have a walk, and every walk a declaration. */
static int check_coverage(int n_headers, char **headers)
{
    static char text[1 << 21];
    size_t n = 0;
    for (int i = 0; i < n_headers; i++) {
        FILE *f = fopen(headers[i], "rb");
        size_t got = f ? fread(text + n, 1, sizeof text - 1 - n, f) : 0;
        if (f) fclose(f);
        if (!got) {
            fprintf(stderr, "cannot read %s\n", headers[i]);
            return 1;
        }
        n += got;
    }
    text[n] = '\0';
    int bad = 0;
    size_t declared = 0;
    for (const char *p = text; (p = strstr(p, "CCKEY_API ")); p++) {
        const char *paren = strchr(p, '('), *end = paren;
        if (!paren || memchr(p, ';', (size_t)(paren - p))) continue;   /* the macro's own definition */
        while (end > p && end[-1] == ' ') end--;
        const char *start = end;
        while (start > p && (start[-1] == '_' || (start[-1] >= 'a' && start[-1] <= 'z') || (start[-1] >= '0' && start[-1] <= '9')))
            start--;
        if (end - start < 7 || memcmp(start, "cckey_", 6) != 0) continue;
        declared++;
        if (!walk_of(start, (size_t)(end - start))) {
            fprintf(stderr, "%.*s is declared in a public header but has no NULL walk here\n", (int)(end - start), start);
            bad = 1;
        }
    }
    if (declared != N_WALKS) {
        fprintf(stderr, "%zu functions declared, %zu walks: a walk names no public function\n", declared, N_WALKS);
        bad = 1;
    }
    return bad;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH/TO/cckey.h [PATH/TO/cckey_store.h ...]\n", argv[0]);
        return 2;
    }
    if (!mkdtemp(dir)) return 1;
    int bad = check_coverage(argc - 1, argv + 1);
    for (size_t i = 0; i < N_WALKS; i++) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            current = WALKS[i].name;
            WALKS[i].run();
            fflush(NULL);
            _exit(failures ? 1 : 0);
        }
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) != pid) return 1;
        if (WIFSIGNALED(status)) fprintf(stderr, "%s: crashed (signal %d)\n", WALKS[i].name, WTERMSIG(status));
        else if (WEXITSTATUS(status)) fprintf(stderr, "%s: wrong results above\n", WALKS[i].name);
        bad |= !WIFEXITED(status) || WEXITSTATUS(status);
    }
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) bad = 1;
    fprintf(bad ? stderr : stdout, "%zu public functions walked with NULL arguments%s\n", N_WALKS, bad ? ": FAILED" : "");
    return bad;
}
