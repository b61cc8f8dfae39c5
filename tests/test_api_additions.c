/* The library additions for C users: C-string keys, streaming digests,
 * sources from a digest or a file descriptor, key parsing, binary keys and
 * cancelling from the progress callback. OpenSSL (EVP MD5 and the recipe in
 * support.c) is the oracle throughout. */
#include "cckey_advanced.h"
#include "support.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void ossl_md5(const void *data, size_t len, unsigned char out[16])
{
    unsigned int dl = 0;
    cr_assert(EVP_Digest(len ? data : "", len, out, &dl, EVP_md5(), NULL) && dl == 16);
}

/* A random string of printable bytes (no NUL), length below max. */
static char *random_cstr(cckey_test_arena *a, uint64_t *rng, size_t max)
{
    size_t n = cckey_test_below(rng, max);
    char *s = cckey_test_alloc(a, n + 1);
    for (size_t i = 0; i < n; i++) s[i] = (char)(1 + cckey_test_below(rng, 255));
    s[n] = '\0';
    return s;
}

static cckey_bytes as_bytes(const char *s) { return (cckey_bytes){s, strlen(s)}; }

Test(make_key_str, matches_the_recipe)
{
    uint64_t rng = 14;
    cckey_test_arena a = {0};
    for (int round = 0; round < 300; round++) {
        const char *dev = random_cstr(&a, &rng, 40), *name = random_cstr(&a, &rng, 20);
        const char *src = random_cstr(&a, &rng, 3000);
        size_t n = round % 50 == 0 ? 40 : cckey_test_below(&rng, 5);   /* past the 16 on the stack too */
        const char **opts = cckey_test_alloc(&a, (2 * n + 1) * sizeof *opts);
        cckey_option *ref = cckey_test_alloc(&a, (n + 1) * sizeof *ref);
        for (size_t i = 0; i < n; i++) {
            opts[2 * i] = i % 3 ? random_cstr(&a, &rng, 6) : "-D";   /* equal keys keep their order */
            opts[2 * i + 1] = random_cstr(&a, &rng, 12);
            ref[i] = (cckey_option){as_bytes(opts[2 * i]), as_bytes(opts[2 * i + 1])};
        }
        char got[CCKEY_KEY_LEN + 1], want[CCKEY_KEY_LEN + 1];
        cr_assert_eq(cckey_make_key_str(got, dev, name, src, opts, n), CCKEY_OK, "%s", cckey_last_error());
        cckey_test_ref_key(want, as_bytes(dev), as_bytes(name), as_bytes(src), ref, n);
        cr_assert_str_eq(got, want, "round %d", round);
    }
    cckey_test_arena_free(&a);
}

Test(make_key_str, refuses_null_strings)
{
    char out[CCKEY_KEY_LEN + 1];
    const char *half[] = {"-O", NULL};
    cr_assert_eq(cckey_make_key_str(out, NULL, "n", "s", NULL, 0), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_make_key_str(out, "d", NULL, "s", NULL, 0), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_make_key_str(out, "d", "n", NULL, NULL, 0), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_make_key_str(out, "d", "n", "s", NULL, 1), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_make_key_str(out, "d", "n", "s", half, 1), CCKEY_ERR_INVALID_ARG);
    cr_assert(strstr(cckey_last_error(), "value"));
    cr_assert_eq(cckey_make_key_str(NULL, "d", "n", "s", NULL, 0), CCKEY_ERR_INVALID_ARG);
}

Test(digest, pieces_of_every_size_match_openssl)
{
    uint64_t rng = 99;
    static unsigned char data[70000];
    cckey_test_fill(&rng, data, sizeof data);
    size_t lens[] = {0, 1, 55, 56, 63, 64, 65, 119, 128, 4097, sizeof data};
    for (size_t k = 0; k < sizeof lens / sizeof *lens; k++) {
        size_t len = lens[k];
        for (int split = 0; split < 20; split++) {
            cckey_digest d;
            memset(&d, 0xa5, sizeof d);
            cr_assert_eq(cckey_digest_init(&d), CCKEY_OK);
            for (size_t at = 0; at < len;) {
                size_t piece = split == 0 ? len : 1 + cckey_test_below(&rng, split == 1 ? 2 : 300);
                if (piece > len - at) piece = len - at;
                cr_assert_eq(cckey_digest_update(&d, data + at, piece), CCKEY_OK);
                if (split % 3 == 0) cr_assert_eq(cckey_digest_update(&d, NULL, 0), CCKEY_OK);
                at += piece;
            }
            char hex[CCKEY_HEX_LEN + 1], want_hex[CCKEY_HEX_LEN + 1];
            unsigned char bin[16], want[16];
            cckey_digest copy = d;
            cr_assert_eq(cckey_digest_final(&d, hex, bin), CCKEY_OK);
            ossl_md5(data, len, want);
            cckey_test_md5_hex(data, len, want_hex);
            cr_assert_eq(memcmp(bin, want, 16), 0, "len %zu split %d", len, split);
            cr_assert_str_eq(hex, want_hex);
            /* hex alone and bin alone give the same answer. */
            char hex2[CCKEY_HEX_LEN + 1];
            cckey_digest again = copy;
            cr_assert_eq(cckey_digest_final(&copy, hex2, NULL), CCKEY_OK);
            cr_assert_str_eq(hex2, want_hex);
            unsigned char bin2[16];
            cr_assert_eq(cckey_digest_final(&again, NULL, bin2), CCKEY_OK);
            cr_assert_eq(memcmp(bin2, want, 16), 0);
        }
    }
}

Test(digest, misuse_is_refused)
{
    cckey_digest d;
    memset(&d, 0, sizeof d);
    char hex[CCKEY_HEX_LEN + 1];
    cr_assert_eq(cckey_digest_update(&d, "x", 1), CCKEY_ERR_INVALID_ARG, "not initialised");
    cr_assert_eq(cckey_digest_final(&d, hex, NULL), CCKEY_ERR_INVALID_ARG, "not initialised");
    cr_assert_eq(cckey_digest_init(NULL), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_digest_init(&d), CCKEY_OK);
    cr_assert_eq(cckey_digest_update(&d, NULL, 3), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_digest_final(&d, NULL, NULL), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_digest_final(&d, hex, NULL), CCKEY_OK);
    cr_assert_str_eq(hex, "d41d8cd98f00b204e9800998ecf8427e");   /* RFC 1321: MD5("") */
    cr_assert_eq(cckey_digest_update(&d, "x", 1), CCKEY_ERR_INVALID_ARG, "already final");
    cr_assert_eq(cckey_digest_final(&d, hex, NULL), CCKEY_ERR_INVALID_ARG, "already final");
    cr_assert_eq(cckey_digest_init(&d), CCKEY_OK, "a finished digest starts again");
    cr_assert_eq(cckey_digest_update(&d, "abc", 3), CCKEY_OK);
    cr_assert_eq(cckey_digest_final(&d, hex, NULL), CCKEY_OK);
    cr_assert_str_eq(hex, "900150983cd24fb0d6963f7d28e17f72");   /* RFC 1321: MD5("abc") */
}

/* The key of a handle made some way, against the recipe on the bytes. */
static void check_handle(cckey_source *s, const void *src, size_t len)
{
    char got[CCKEY_KEY_LEN + 1], want[CCKEY_KEY_LEN + 1], hex[CCKEY_HEX_LEN + 1], want_hex[CCKEY_HEX_LEN + 1];
    cckey_option o = {{"-O", 2}, {"3", 1}};
    cckey_bytes dev = {"NVIDIA H200|580.159.04", 22}, name = {"vec_add", 7};
    for (int twice = 0; twice < 2; twice++) {   /* the second is a memo hit */
        cr_assert_eq(cckey_source_key(got, s, dev, name, &o, 1), CCKEY_OK);
        cckey_test_ref_key(want, dev, name, (cckey_bytes){src, len}, &o, 1);
        cr_assert_str_eq(got, want);
    }
    cr_assert_eq(cckey_source_digest(hex, s), CCKEY_OK);
    cckey_test_md5_hex(src, len, want_hex);
    cr_assert_str_eq(hex, want_hex);
}

Test(source, from_a_digest)
{
    uint64_t rng = 5;
    static unsigned char src[10000];
    cckey_test_fill(&rng, src, sizeof src);
    cckey_digest d;
    unsigned char bin[16];
    cr_assert_eq(cckey_digest_init(&d), CCKEY_OK);
    cr_assert_eq(cckey_digest_update(&d, src, 4000), CCKEY_OK);
    cr_assert_eq(cckey_digest_update(&d, src + 4000, sizeof src - 4000), CCKEY_OK);
    cr_assert_eq(cckey_digest_final(&d, NULL, bin), CCKEY_OK);
    cckey_source *s = NULL;
    cr_assert_eq(cckey_source_new_digest(&s, bin), CCKEY_OK);
    check_handle(s, src, sizeof src);
    cckey_source_free(s);
    cr_assert_eq(cckey_source_new_digest(NULL, bin), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_source_new_digest(&s, NULL), CCKEY_ERR_INVALID_ARG);
}

typedef struct feeder {
    int fd;
    const unsigned char *data;
    size_t len;
} feeder;

static void *feed(void *arg)
{
    feeder *f = arg;
    for (size_t at = 0; at < f->len;) {   /* odd-sized writes: reads get odd pieces */
        size_t n = f->len - at < 7777 ? f->len - at : 7777;
        ssize_t w = write(f->fd, f->data + at, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        at += (size_t)w;
    }
    close(f->fd);
    return NULL;
}

Test(source, from_a_pipe_and_a_file)
{
    uint64_t rng = 77;
    size_t len = 3u << 20;   /* several reads' worth */
    unsigned char *data = malloc(len);
    cckey_test_fill(&rng, data, len);

    int p[2];
    cr_assert_eq(pipe(p), 0);
    feeder f = {p[1], data, len};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, feed, &f), 0);
    cckey_source *s = NULL;
    cr_assert_eq(cckey_source_new_fd(&s, p[0]), CCKEY_OK, "%s", cckey_last_error());
    pthread_join(t, NULL);
    close(p[0]);
    check_handle(s, data, len);
    cckey_source_free(s);

    char dir[64], path[128];
    cr_assert(cckey_test_make_dir(dir, "fd"));
    snprintf(path, sizeof path, "%s/src.cl", dir);
    FILE *w = fopen(path, "wb");
    cr_assert(w && fwrite(data, 1, 12345, w) == 12345 && fclose(w) == 0);
    int fd = open(path, O_RDONLY);
    cr_assert_eq(cckey_source_new_fd(&s, fd), CCKEY_OK);
    check_handle(s, data, 12345);
    cr_assert_eq(lseek(fd, 0, SEEK_CUR), 12345, "left at end of file");
    cckey_source_free(s);
    close(fd);

    /* Errors: no handle, the reason named. */
    s = (cckey_source *)&rng;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    cr_assert_eq(cckey_source_new_fd(&s, dfd), CCKEY_ERR_IO);
    cr_assert(strstr(cckey_last_error(), strerror(EISDIR)), "%s", cckey_last_error());
    close(dfd);
    cr_assert_eq(cckey_source_new_fd(&s, dfd), CCKEY_ERR_IO, "a closed fd");
    cr_assert_eq(s, (cckey_source *)&rng, "out untouched on failure");
    cr_assert_eq(cckey_source_new_fd(&s, -1), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_source_new_fd(NULL, 0), CCKEY_ERR_INVALID_ARG);
    cr_assert(cckey_test_remove_tree(dir));
    free(data);
}

Test(key_parse, splits_into_the_field_digests)
{
    uint64_t rng = 3;
    cckey_test_arena a = {0};
    for (int round = 0; round < 200; round++) {
        cckey_bytes dev = cckey_test_random_bytes(&a, &rng, cckey_test_below(&rng, 50));
        cckey_bytes name = cckey_test_random_bytes(&a, &rng, cckey_test_below(&rng, 20));
        cckey_bytes src = cckey_test_random_bytes(&a, &rng, cckey_test_below(&rng, 500));
        char key[CCKEY_KEY_LEN + 1];
        cckey_test_ref_key(key, dev, name, src, NULL, 0);
        unsigned char parts[4][CCKEY_DIGEST_LEN], want[16];
        cr_assert_eq(cckey_key_parse(key, strlen(key), parts), CCKEY_OK, "%s", cckey_last_error());
        ossl_md5(dev.ptr, dev.len, want);
        cr_assert_eq(memcmp(parts[0], want, 16), 0);
        ossl_md5(name.ptr, name.len, want);
        cr_assert_eq(memcmp(parts[1], want, 16), 0);
        ossl_md5(src.ptr, src.len, want);
        cr_assert_eq(memcmp(parts[2], want, 16), 0);
        ossl_md5("", 0, want);   /* no options: canon is "" */
        cr_assert_eq(memcmp(parts[3], want, 16), 0);
        cr_assert_eq(cckey_key_parse(key, strlen(key), NULL), CCKEY_OK);
    }
    cckey_test_arena_free(&a);
}

Test(key_parse, names_the_first_bad_byte)
{
    char key[CCKEY_KEY_LEN + 2];
    cckey_test_ref_key(key, (cckey_bytes){"d", 1}, (cckey_bytes){"n", 1}, (cckey_bytes){"s", 1}, NULL, 0);
    unsigned char parts[4][CCKEY_DIGEST_LEN], before[4][CCKEY_DIGEST_LEN];
    memset(parts, 0x5a, sizeof parts);
    memcpy(before, parts, sizeof parts);
    for (size_t i = 0; i < CCKEY_KEY_LEN; i++) {
        bool colon = i % 33 == 32;
        const char bad[] = {'g', 'A', 'F', ':', ' ', '\0', '-'};
        for (size_t b = 0; b < sizeof bad; b++) {
            if (colon == (bad[b] == ':')) continue;   /* a colon is fine where colons go */
            char k[CCKEY_KEY_LEN + 1];
            memcpy(k, key, sizeof k);
            k[i] = bad[b];
            cr_assert_eq(cckey_key_parse(k, CCKEY_KEY_LEN, parts), CCKEY_ERR_INVALID_ARG, "byte %zu = %d", i, bad[b]);
            char want[32];
            snprintf(want, sizeof want, "key byte %zu:", i);
            cr_assert(strstr(cckey_last_error(), want), "%s (wanted %s)", cckey_last_error(), want);
            cr_assert_eq(memcmp(parts, before, sizeof parts), 0, "out untouched on failure");
        }
        if (!colon) {   /* a hex digit where a colon goes is wrong too */
            char k[CCKEY_KEY_LEN + 1];
            memcpy(k, key, sizeof k);
            k[32] = 'a';
            cr_assert_eq(cckey_key_parse(k, CCKEY_KEY_LEN, NULL), CCKEY_ERR_INVALID_ARG);
        }
    }
    for (size_t len = 0; len < CCKEY_KEY_LEN + 2; len++) {
        if (len == CCKEY_KEY_LEN) continue;
        cr_assert_eq(cckey_key_parse(key, len, NULL), CCKEY_ERR_INVALID_ARG, "len %zu", len);
    }
    cr_assert_eq(cckey_key_parse(NULL, CCKEY_KEY_LEN, NULL), CCKEY_ERR_INVALID_ARG);
}

/* A batch with repeats, as the planner sees in practice. */
typedef struct batch {
    cckey_test_arena a;
    cckey_tuple *t;
    size_t n;
} batch;

static void make_batch(batch *b, size_t n, size_t src_len, uint64_t seed)
{
    uint64_t rng = seed;
    memset(b, 0, sizeof *b);
    b->n = n;
    b->t = cckey_test_alloc(&b->a, n * sizeof *b->t);
    for (size_t i = 0; i < n; i++) {
        cckey_test_tuple r = cckey_test_random_tuple(&b->a, &rng, 40);
        cckey_bytes src = i % 3 && i ? b->t[i - 1].source : cckey_test_random_bytes(&b->a, &rng, src_len);
        b->t[i] = (cckey_tuple){r.device, r.name, src, r.opts, r.n};
    }
}

Test(make_keys_bin, the_text_keys_in_binary)
{
    batch b;
    make_batch(&b, 3000, 700, 11);
    char (*text)[CCKEY_KEY_LEN + 1] = malloc(b.n * sizeof *text);
    unsigned char (*bin)[CCKEY_KEY_BIN_LEN] = malloc(b.n * sizeof *bin);
    cckey_batch_config *cfg;
    cr_assert_eq(cckey_batch_config_new(&cfg), CCKEY_OK);
    cckey_backend_kind kinds[] = {CCKEY_BACKEND_CPU, CCKEY_BACKEND_AUTO, CCKEY_BACKEND_OPENCL};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        if (cckey_backend_runtime(kinds[k]) != CCKEY_OK) continue;   /* OpenCL: PoCL in CI */
        cr_assert_eq(cckey_batch_config_set_backend(cfg, kinds[k]), CCKEY_OK);
        memset(bin, 0, b.n * sizeof *bin);
        cckey_status st = cckey_make_keys_bin(bin, b.t, b.n, cfg);
        if (st == CCKEY_ERR_UNAVAILABLE) continue;   /* a runtime without a device */
        cr_assert_eq(st, CCKEY_OK, "%s", cckey_last_error());
        for (size_t i = 0; i < b.n; i++) {
            const cckey_tuple *t = &b.t[i];
            cckey_test_ref_key(text[i], t->device, t->name, t->source, t->options, t->n_options);
            unsigned char parts[4][CCKEY_DIGEST_LEN];
            cr_assert_eq(cckey_key_parse(text[i], CCKEY_KEY_LEN, parts), CCKEY_OK);
            cr_assert_eq(memcmp(bin[i], parts, CCKEY_KEY_BIN_LEN), 0, "%s: tuple %zu", cckey_backend_name(kinds[k]), i);
            unsigned char want[16];
            ossl_md5(t->source.ptr, t->source.len, want);
            cr_assert_eq(memcmp(bin[i] + 32, want, 16), 0);
        }
    }
    cr_assert_eq(cckey_make_keys_bin(NULL, b.t, 1, cfg), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_make_keys_bin(NULL, NULL, 0, cfg), CCKEY_OK);
    cckey_batch_config_free(cfg);
    free(text), free(bin);
    cckey_test_arena_free(&b.a);
}

typedef struct counter {
    int calls, stop_at;
    uint64_t last_done, total;
} counter;

static int count_and_maybe_stop(void *user, uint64_t done, uint64_t total)
{
    counter *c = user;
    c->calls++;
    c->last_done = done, c->total = total;
    return c->stop_at && c->calls >= c->stop_at;
}

static void plain_progress(void *user, uint64_t done, uint64_t total)
{
    (void)done, (void)total;
    ((counter *)user)->calls++;
}

Test(cancel, a_non_zero_return_cancels_the_batch)
{
    batch b;
    make_batch(&b, 3000, 64u << 10, 21);   /* 1000 distinct 64 KiB sources: many runs of 32 */
    char (*out)[CCKEY_KEY_LEN + 1] = malloc(b.n * sizeof *out);
    cckey_batch_config *cfg;
    cr_assert_eq(cckey_batch_config_new(&cfg), CCKEY_OK);
    cr_assert_eq(cckey_batch_config_set_backend(cfg, CCKEY_BACKEND_CPU), CCKEY_OK);
    cr_assert_eq(cckey_batch_config_set_threads(cfg, 2), CCKEY_OK);

    counter c = {.stop_at = 1};
    cr_assert_eq(cckey_batch_config_set_progress_cancel(cfg, count_and_maybe_stop, &c), CCKEY_OK);
    cr_assert_eq(cckey_make_keys(out, b.t, b.n, cfg), CCKEY_ERR_CANCELLED);
    cr_assert_eq(c.calls, 1, "not called again once it said stop");
    cr_assert_lt(c.last_done, c.total, "stopped before the end");
    cr_assert_str_eq(cckey_strerror(CCKEY_ERR_CANCELLED), "cancelled");
    unsigned char (*bin)[CCKEY_KEY_BIN_LEN] = malloc(b.n * sizeof *bin);
    c = (counter){.stop_at = 2};
    cr_assert_eq(cckey_make_keys_bin(bin, b.t, b.n, cfg), CCKEY_ERR_CANCELLED);
    cr_assert_eq(c.calls, 2);

    /* Returning 0 all along: every key, right. */
    c = (counter){0};
    cr_assert_eq(cckey_make_keys(out, b.t, b.n, cfg), CCKEY_OK);
    cr_assert_gt(c.calls, 1);
    cr_assert_leq(c.last_done, c.total);
    for (size_t i = 0; i < b.n; i++) {
        char want[CCKEY_KEY_LEN + 1];
        const cckey_tuple *t = &b.t[i];
        cckey_test_ref_key(want, t->device, t->name, t->source, t->options, t->n_options);
        cr_assert_str_eq(out[i], want);
    }

    /* The plain callback replaces the cancelling one, and back. */
    counter plain = {0};
    c = (counter){.stop_at = 1};
    cr_assert_eq(cckey_batch_config_set_progress(cfg, plain_progress, &plain), CCKEY_OK);
    cr_assert_eq(cckey_make_keys(out, b.t, b.n, cfg), CCKEY_OK);
    cr_assert_gt(plain.calls, 0);
    cr_assert_eq(c.calls, 0);
    cr_assert_eq(cckey_batch_config_set_progress_cancel(cfg, count_and_maybe_stop, &c), CCKEY_OK);
    cr_assert_eq(cckey_make_keys(out, b.t, b.n, cfg), CCKEY_ERR_CANCELLED);
    cr_assert_eq(cckey_batch_config_set_progress_cancel(NULL, NULL, NULL), CCKEY_ERR_INVALID_ARG);

    /* On a device (PoCL in CI) a cancel is not a device failure: no CPU
     * fallback finishes the batch behind the caller's back. */
    if (cckey_backend_runtime(CCKEY_BACKEND_OPENCL) == CCKEY_OK) {
        cr_assert_eq(cckey_batch_config_set_backend(cfg, CCKEY_BACKEND_OPENCL), CCKEY_OK);
        c = (counter){.stop_at = 1};
        cckey_status st = cckey_make_keys(out, b.t, b.n, cfg);
        if (st != CCKEY_ERR_UNAVAILABLE) {
            cr_assert_eq(st, CCKEY_ERR_CANCELLED, "%s: %s", cckey_strerror(st), cckey_last_error());
            cr_assert_str_eq(cckey_batch_config_warning(cfg), "");
        }
    }
    cckey_batch_config_free(cfg);
    free(out), free(bin);
    cckey_test_arena_free(&b.a);
}

/* cckey_backend_digests: the named backend's digests, OpenSSL's. */
Test(backend_digests, cpu_matches_openssl_and_bad_calls_are_refused)
{
    cckey_batch_config *cfg = NULL;
    cr_assert_eq(cckey_batch_config_new(&cfg), CCKEY_OK);
    unsigned char out[300][CCKEY_DIGEST_LEN];
    cckey_bytes m[300];
    static unsigned char pool[300 + 300];
    for (size_t i = 0; i < sizeof pool; i++) pool[i] = (unsigned char)(i * 131 + 7);
    for (size_t i = 0; i < 300; i++) m[i] = (cckey_bytes){pool + i, i};
    /* AUTO names no backend. */
    cr_assert_eq(cckey_backend_digests(cfg, m, 300, out), CCKEY_ERR_INVALID_ARG);
    cr_assert(strstr(cckey_last_error(), "auto"), "%s", cckey_last_error());
    cr_assert_eq(cckey_batch_config_set_backend(cfg, CCKEY_BACKEND_CPU), CCKEY_OK);
    cr_assert_eq(cckey_backend_digests(cfg, m, 300, out), CCKEY_OK, "%s", cckey_last_error());
    for (size_t i = 0; i < 300; i++) {
        unsigned char want[16];
        ossl_md5(m[i].ptr, m[i].len, want);
        cr_assert_arr_eq(out[i], want, 16, "message %zu", i);
    }
    cr_assert_eq(cckey_backend_digests(cfg, NULL, 0, NULL), CCKEY_OK);
    cr_assert_eq(cckey_backend_digests(NULL, m, 1, out), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_backend_digests(cfg, NULL, 1, out), CCKEY_ERR_INVALID_ARG);
    cckey_bytes bad = {NULL, 3};
    cr_assert_eq(cckey_backend_digests(cfg, &bad, 1, out), CCKEY_ERR_INVALID_ARG);
    /* A device backend without its driver: unavailable, with the reason. */
    cr_assert_eq(cckey_set_driver_library(CCKEY_BACKEND_CUDA, "/nonexistent/libcuda.so.1") == CCKEY_OK ||
                     strstr(cckey_last_error(), "not compiled"),
                 1);
    cr_assert_eq(cckey_batch_config_set_backend(cfg, CCKEY_BACKEND_CUDA), CCKEY_OK);
    cr_assert_eq(cckey_backend_digests(cfg, m, 3, out), CCKEY_ERR_UNAVAILABLE);
    cr_assert(strstr(cckey_last_error(), "/nonexistent/libcuda.so.1") || strstr(cckey_last_error(), "not compiled"),
              "%s", cckey_last_error());
    cckey_batch_config_free(cfg);
}

Test(batch_config, settings_in_effect)
{
    cckey_batch_config *cfg = NULL;
    cr_assert_eq(cckey_batch_config_new(&cfg), CCKEY_OK);
    size_t chunk = cckey_batch_config_chunk_bytes(cfg), longb = cckey_batch_config_long_bytes(cfg);
    cr_assert_gt(chunk, 0);
    cr_assert_eq(cckey_batch_config_set_chunk_bytes(cfg, 4096), CCKEY_OK);
    cr_assert_eq(cckey_batch_config_set_long_bytes(cfg, 100), CCKEY_OK);
    cr_assert_eq(cckey_batch_config_chunk_bytes(cfg), 4096);
    cr_assert_eq(cckey_batch_config_long_bytes(cfg), 100);
    cr_assert_eq(cckey_batch_config_set_chunk_bytes(cfg, 0), CCKEY_OK);
    cr_assert_eq(cckey_batch_config_chunk_bytes(cfg), chunk, "0 restores the default");
    cr_assert_neq(longb, 100);
    cr_assert_eq(cckey_batch_config_chunk_bytes(NULL), 0);
    cckey_batch_config_free(cfg);
}

/* The option order is the key's: a key made from the options in that order
 * equals the key made from them as given. */
Test(option_order, is_the_keys_order)
{
    cckey_option o[5] = {{{"b", 1}, {"1", 1}}, {{"a", 1}, {"2", 1}}, {{"", 0}, {"3", 1}},
                         {{"ab", 2}, {"4", 1}}, {{"a", 1}, {"5", 1}}};
    size_t order[5];
    cr_assert_eq(cckey_option_order(o, 5, order), CCKEY_OK);
    const size_t want[5] = {2, 1, 4, 3, 0};   /* "", "a" (stable), "a", "ab", "b" */
    cr_assert_arr_eq(order, want, sizeof want);
    cckey_option sorted[5];
    for (size_t i = 0; i < 5; i++) sorted[i] = o[order[i]];
    char k1[CCKEY_KEY_LEN + 1], k2[CCKEY_KEY_LEN + 1];
    cckey_bytes d = {"dev", 3}, n = {"k", 1}, s = {"src", 3};
    cr_assert_eq(cckey_make_key(k1, d, n, s, o, 5), CCKEY_OK);
    cr_assert_eq(cckey_make_key(k2, d, n, s, sorted, 5), CCKEY_OK);
    cr_assert_str_eq(k1, k2);
    cr_assert_eq(cckey_option_order(NULL, 2, order), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_option_order(o, 0, NULL), CCKEY_OK);
}

/* cckey_cpu_features against the kernel's own view, /proc/cpuinfo's flags
 * (Linux lists the AVX families only where it saves their registers, as
 * the library's XCR0 check requires). Each test is its own process, so
 * CCKEY_FORCE_ISA set first is what the library's one read sees. */
static unsigned cpuinfo_features(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    cr_assert(f, "/proc/cpuinfo: %s", strerror(errno));
    static char line[1 << 16];
    unsigned mask = 0;
    static const struct {
        const char *flag;
        unsigned bit;
    } flags[] = {{"sse2", CCKEY_CPU_SSE2},         {"avx2", CCKEY_CPU_AVX2},
                 {"avx512f", CCKEY_CPU_AVX512F},   {"avx512bw", CCKEY_CPU_AVX512BW},
                 {"avx512_vbmi2", CCKEY_CPU_AVX512VBMI2}, {"bmi2", CCKEY_CPU_BMI2},
                 {"asimd", CCKEY_CPU_NEON}};
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0 && strncmp(line, "Features", 8) != 0) continue;
        for (char *w = strtok(strchr(line, ':') + 1, " \n"); w; w = strtok(NULL, " \n"))
            for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
                if (strcmp(w, flags[i].flag) == 0) mask |= flags[i].bit;
        break;
    }
    fclose(f);
    return mask;
}

Test(cpu_features, are_the_kernels_flags)
{
    unsetenv("CCKEY_FORCE_ISA");
    cr_expect_eq(cckey_cpu_features(), cpuinfo_features(), "library 0x%x, /proc/cpuinfo 0x%x", cckey_cpu_features(),
                 cpuinfo_features());
    cr_expect_null(cckey_cpu_forced_isa());
}

Test(cpu_features, force_isa_narrows_them_and_md5_follows)
{
    unsigned all = cpuinfo_features();
    if (!(all & CCKEY_CPU_SSE2)) cr_skip_test("no SSE2 on this CPU: nothing narrower to force");
    setenv("CCKEY_FORCE_ISA", "sse2", 1);
    cr_expect_eq(cckey_cpu_features(), CCKEY_CPU_SSE2);
    cr_expect_str_eq(cckey_cpu_forced_isa(), "sse2");
    cr_expect_str_eq(cckey_cpu_isa(), "sse2");
    setenv("CCKEY_FORCE_ISA", "avx512", 1);   /* read once: a later change is not seen */
    cr_expect_str_eq(cckey_cpu_forced_isa(), "sse2");
}

Test(cpu_features, avx2_drops_only_avx512)
{
    unsigned all = cpuinfo_features();
    if (!(all & CCKEY_CPU_AVX2)) cr_skip_test("no AVX2 on this CPU");
    setenv("CCKEY_FORCE_ISA", "avx2", 1);
    cr_expect_eq(cckey_cpu_features(), all & ~(CCKEY_CPU_AVX512F | CCKEY_CPU_AVX512BW | CCKEY_CPU_AVX512VBMI2));
    cr_expect_str_eq(cckey_cpu_isa(), "avx2");
}

Test(cpu_features, an_unknown_or_absent_set_changes_nothing)
{
    setenv("CCKEY_FORCE_ISA", "mmx-and-then-some", 1);
    cr_expect_eq(cckey_cpu_features(), cpuinfo_features());
    cr_expect_str_eq(cckey_cpu_forced_isa(), "mmx-and-then-some");
}
