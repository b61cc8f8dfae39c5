/* Every entry point against the vectors of tests/gen_vectors.py, which
 * computes keys with Python's hashlib from the recipe alone. ctest runs the
 * generator first and passes the file in CCKEY_VECTORS. */
#include "support.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct vec {
    char *label;
    char key[CCKEY_KEY_LEN + 1];
    cckey_bytes device, name, source;
    cckey_option *opts;
    size_t n_opts;
} vec;

static vec *vecs;
static size_t n_vecs;
static char *file_text;

static int nibble(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* Decode in place: the bytes overwrite the hex they came from. */
static cckey_bytes unhex(char *s)
{
    size_t n = strlen(s);
    cr_assert(n % 2 == 0, "odd hex length in the vectors file");
    for (size_t i = 0; i < n / 2; i++) {
        int hi = nibble(s[2 * i]), lo = nibble(s[2 * i + 1]);
        cr_assert(hi >= 0 && lo >= 0, "bad hex in the vectors file");
        s[i] = (char)(hi << 4 | lo);
    }
    return (cckey_bytes){n ? s : NULL, n / 2};
}

/* Split at tabs without merging empty columns (strtok would). */
static size_t split(char *line, char **cols, size_t max)
{
    size_t n = 0;
    for (char *p = line;;) {
        cr_assert(n < max, "too many columns");
        cols[n++] = p;
        char *tab = strchr(p, '\t');
        if (!tab) return n;
        *tab = '\0';
        p = tab + 1;
    }
}

static void load(void)
{
    const char *path = getenv("CCKEY_VECTORS");
    cr_assert(path && *path, "CCKEY_VECTORS is not set: run this suite through ctest");
    file_text = cckey_test_read_file(path, NULL);
    cr_assert_not_null(file_text, "cannot read %s", path);

    size_t lines = 0;
    for (char *p = file_text; *p; p++) lines += *p == '\n';
    vecs = calloc(lines, sizeof *vecs);
    enum { MAX_COLS = 6 + 2 * 1024 };
    char **cols = malloc(MAX_COLS * sizeof *cols);
    char *line = file_text;
    for (char *nl; (nl = strchr(line, '\n')); line = nl + 1) {
        *nl = '\0';
        size_t nc = split(line, cols, MAX_COLS);
        cr_assert(nc >= 6, "short line %zu", n_vecs + 1);
        vec *v = &vecs[n_vecs++];
        v->label = cols[0];
        cr_assert_eq(strlen(cols[1]), (size_t)CCKEY_KEY_LEN, "%s: key length", v->label);
        memcpy(v->key, cols[1], CCKEY_KEY_LEN + 1);
        v->device = unhex(cols[2]);
        v->name = unhex(cols[3]);
        v->source = unhex(cols[4]);
        v->n_opts = strtoul(cols[5], NULL, 10);
        cr_assert_eq(nc, 6 + 2 * v->n_opts, "%s: option columns", v->label);
        v->opts = v->n_opts ? calloc(v->n_opts, sizeof *v->opts) : NULL;
        for (size_t i = 0; i < v->n_opts; i++)
            v->opts[i] = (cckey_option){unhex(cols[6 + 2 * i]), unhex(cols[7 + 2 * i])};
    }
    free(cols);
    cr_assert(n_vecs > 2000, "only %zu vectors", n_vecs);
}

static void unload(void)
{
    for (size_t i = 0; i < n_vecs; i++) free(vecs[i].opts);
    free(vecs);
    free(file_text);
}

TestSuite(vectors, .init = load, .fini = unload);

Test(vectors, generator_reproduces_the_issue_examples)
{
    /* Stated here as well, so a generator that drifted could not pass. */
    static const struct {
        const char *label, *key;
    } want[] = {
        {"issue_example_1", "cfcd208495d565ef66e7dff9f98764da:73d6273882d67981027dcbbf1e2ca012:"
                            "c13367945d5d4c91047b3b50234aa7ab:d41d8cd98f00b204e9800998ecf8427e"},
        {"issue_example_2", "45552c6dfd18efd7f912010b34adcbdc:5eafe7ed354bd56348049a429ad6c938:"
                            "82d7291d76296093ecda1094eb146d1e:6ffd84b89a8fc5513e9e085c93eec14a"},
    };
    for (size_t w = 0; w < 2; w++) {
        size_t found = 0;
        for (size_t i = 0; i < n_vecs; i++)
            if (strcmp(vecs[i].label, want[w].label) == 0) {
                cr_assert_str_eq(vecs[i].key, want[w].key, "%s", want[w].label);
                found++;
            }
        cr_assert_eq(found, 1u, "%s is missing from the vectors", want[w].label);
    }
    /* The second example's options, rebuilt by hand, through the library. */
    cckey_option o[] = {{{"arch", 4}, {"sm_90", 5}}, {{"-O", 2}, {"3", 1}}};
    const char *src = "__global__ void vec_add(float *a) {}";
    char key[CCKEY_KEY_LEN + 1];
    cr_assert_eq(cckey_make_key(key, (cckey_bytes){"NVIDIA H200|580.159.04", 22}, (cckey_bytes){"vec_add", 7},
                                (cckey_bytes){src, strlen(src)}, o, 2),
                 CCKEY_OK);
    cr_assert_str_eq(key, want[1].key);
}

Test(vectors, reference_in_c_agrees_with_python)
{
    /* The OpenSSL reference the other suites use is itself held to the
     * Python vectors here. */
    for (size_t i = 0; i < n_vecs; i++) {
        const vec *v = &vecs[i];
        char key[CCKEY_KEY_LEN + 1];
        cckey_test_ref_key(key, v->device, v->name, v->source, v->opts, v->n_opts);
        cr_assert_str_eq(key, v->key, "%s", v->label);
    }
}

Test(vectors, make_key)
{
    for (size_t i = 0; i < n_vecs; i++) {
        const vec *v = &vecs[i];
        char key[CCKEY_KEY_LEN + 1];
        memset(key, 'x', sizeof key);
        cr_assert_eq(cckey_make_key(key, v->device, v->name, v->source, v->opts, v->n_opts), CCKEY_OK, "%s",
                     v->label);
        cr_assert_eq(key[CCKEY_KEY_LEN], '\0', "%s: terminator", v->label);
        cr_assert_str_eq(key, v->key, "%s", v->label);
    }
}

Test(vectors, source_key_miss_and_hit)
{
    for (size_t i = 0; i < n_vecs; i++) {
        const vec *v = &vecs[i];
        cckey_source *s;
        unsigned flags = i % 2 ? CCKEY_SOURCE_BORROW : CCKEY_SOURCE_COPY;
        cr_assert_eq(cckey_source_new(&s, v->source, flags), CCKEY_OK, "%s", v->label);
        char digest[CCKEY_HEX_LEN + 1];
        cr_assert_eq(cckey_source_digest(digest, s), CCKEY_OK);
        cr_assert(strncmp(digest, v->key + 66, 32) == 0 && digest[32] == '\0', "%s: source digest", v->label);
        for (int round = 0; round < 2; round++) {
            char key[CCKEY_KEY_LEN + 1];
            cr_assert_eq(cckey_source_key(key, s, v->device, v->name, v->opts, v->n_opts), CCKEY_OK, "%s",
                         v->label);
            cr_assert_str_eq(key, v->key, "%s, call %d", v->label, round + 1);
        }
        cckey_source_free(s);
    }
}

Test(vectors, source_key_shared_handle)
{
    /* Vectors with one source through one handle: the memo must keep them
     * apart by (device, name, options). */
    cckey_bytes src = {"s", 1};
    cckey_source *s;
    cr_assert_eq(cckey_source_new(&s, src, CCKEY_SOURCE_COPY), CCKEY_OK);
    size_t used = 0;
    for (int round = 0; round < 2; round++)
        for (size_t i = 0; i < n_vecs; i++) {
            const vec *v = &vecs[i];
            if (v->source.len != 1 || memcmp(v->source.ptr, "s", 1) != 0) continue;
            char key[CCKEY_KEY_LEN + 1];
            cr_assert_eq(cckey_source_key(key, s, v->device, v->name, v->opts, v->n_opts), CCKEY_OK);
            cr_assert_str_eq(key, v->key, "%s", v->label);
            used++;
        }
    cr_assert(used > 100, "only %zu vectors share the source \"s\"", used);
    cckey_source_free(s);
}

static void batch_all(cckey_backend_kind kind, unsigned threads, int use_config)
{
    cckey_tuple *t = calloc(n_vecs, sizeof *t);
    char (*out)[CCKEY_KEY_LEN + 1] = calloc(n_vecs, sizeof *out);
    for (size_t i = 0; i < n_vecs; i++)
        t[i] = (cckey_tuple){vecs[i].device, vecs[i].name, vecs[i].source, vecs[i].opts, vecs[i].n_opts};
    cckey_batch_config *cfg = NULL;
    if (use_config) {
        cr_assert_eq(cckey_batch_config_new(&cfg), CCKEY_OK);
        cr_assert_eq(cckey_batch_config_set_backend(cfg, kind), CCKEY_OK);
        cr_assert_eq(cckey_batch_config_set_threads(cfg, threads), CCKEY_OK);
    }
    cckey_status st = cckey_make_keys(out, t, n_vecs, cfg);
    cr_assert_eq(st, CCKEY_OK, "%s: %s", cckey_strerror(st), cckey_last_error());
    for (size_t i = 0; i < n_vecs; i++) cr_assert_str_eq(out[i], vecs[i].key, "%s", vecs[i].label);
    cckey_batch_config_free(cfg);
    free(t);
    free(out);
}

Test(vectors, make_keys_defaults) { batch_all(CCKEY_BACKEND_AUTO, 0, 0); }
Test(vectors, make_keys_cpu_one_thread) { batch_all(CCKEY_BACKEND_CPU, 1, 1); }
Test(vectors, make_keys_cpu_three_threads) { batch_all(CCKEY_BACKEND_CPU, 3, 1); }
