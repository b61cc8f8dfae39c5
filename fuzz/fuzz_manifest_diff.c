/* libFuzzer target: the manifest's JSON parser (host/cli/manifest/json.c)
 * against jansson, which defined the format, on the same bytes.
 *
 * They must agree on accept or reject (jansson with JSON_DECODE_ANY |
 * JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, as the reader used it, on lines
 * without a raw NUL byte, which the reader refuses first), and on
 * an accepted line, on everything the manifest uses: the top-level kind;
 * each known member's presence, kind and decoded bytes; the options'
 * pairs, in order, or the first malformed one. jansson is only an oracle
 * here: the CLI does not parse with it. And mj_parse's fast path for plain
 * lines against its strict parser, where the fast path takes a line. */
#include "cli/manifest/manifest.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int kind_of(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return MJ_OBJECT;
    case JSON_ARRAY: return MJ_ARRAY;
    case JSON_STRING: return MJ_STRING;
    case JSON_INTEGER: return MJ_INTEGER;
    case JSON_REAL: return MJ_REAL;
    case JSON_TRUE: case JSON_FALSE: return MJ_BOOL;
    case JSON_NULL: return MJ_NULL;
    }
    return MJ_NONE;
}

static bool same_bytes(cckey_bytes b, const char *p, size_t n)
{
    return b.len == n && (n == 0 || memcmp(b.ptr, p, n) == 0);
}

static void check_member(const json_t *root, const char *name, const mj_member *m)
{
    json_t *v = json_object_get(root, name);
    if (!v) {
        if (m->present) abort();
        return;
    }
    if (!m->present || m->kind != kind_of(v)) abort();
    if (json_is_string(v) && !same_bytes(m->str, json_string_value(v), json_string_length(v))) abort();
}

/* The options as the jansson-era reader took them apart. */
static void check_options(const json_t *v, const mj_line *j)
{
    if (!v || !(json_is_array(v) || json_is_object(v))) return;
    size_t n = 0;
    int err = MJ_OPT_OK;
    size_t err_index = 0;
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *pair = json_array_get(v, i);
            if (!json_is_array(pair) || json_array_size(pair) != 2) {
                if (!err) err = MJ_OPT_PAIR, err_index = i;
                continue;
            }
            json_t *k = json_array_get(pair, 0), *val = json_array_get(pair, 1);
            if (!json_is_string(k) || !json_is_string(val)) {
                if (!err) err = MJ_OPT_PAIR_TYPES, err_index = i;
                continue;
            }
            if (err) continue;
            if (n >= j->n_opts || !same_bytes(j->opts[n].key, json_string_value(k), json_string_length(k)) ||
                !same_bytes(j->opts[n].value, json_string_value(val), json_string_length(val)))
                abort();
            n++;
        }
    } else {
        const char *k;
        size_t klen;
        json_t *val;
        json_object_keylen_foreach((json_t *)v, k, klen, val)
        {
            if (!json_is_string(val)) {
                if (!err) {
                    err = MJ_OPT_MEMBER;
                    if (!same_bytes(j->opt_err_key, k, klen) || j->opt_err_kind != kind_of(val)) abort();
                }
                continue;
            }
            if (err) continue;
            if (n >= j->n_opts || !same_bytes(j->opts[n].key, k, klen) ||
                !same_bytes(j->opts[n].value, json_string_value(val), json_string_length(val)))
                abort();
            n++;
        }
    }
    if (err != j->opt_err || (err && err != MJ_OPT_MEMBER && err_index != j->opt_err_index)) abort();
    if (!err && n != j->n_opts) abort();
}

static bool same_member(const mj_member *a, const mj_member *b)
{
    return a->present == b->present && a->kind == b->kind &&
           (!a->present || (a->key_off == b->key_off && a->val_off == b->val_off && a->val_end == b->val_end)) &&
           same_bytes(a->str, (const char *)b->str.ptr, b->str.len);
}

/* The fast path (manifest/plain.c) may only take a line the strict parser
 * accepts, with the same result to the byte, offsets included. */
static void check_fast_path(const char *line, size_t size)
{
    char *out_fast = malloc(size ? size : 1), *out_strict = malloc(size ? size : 1);
    if (!out_fast || !out_strict) abort();
    mj_parser pf = {0}, ps = {0};
    mj_line f, s;
    memset(&f, 0, sizeof f);
    int r = mj_parse_plain(&pf, line, size, out_fast, &f);
    if (r == -2) abort();
    if (r == 1) {
        size_t bad;
        char what[160];
        if (mj_parse_strict(&ps, line, size, out_strict, &s, &bad, what, sizeof what) != 0) abort();
        if (f.root != s.root || f.n_opts != s.n_opts || s.n_unknown || s.opt_err) abort();
        const mj_member *mf[] = {&f.device, &f.name, &f.source, &f.source_file, &f.options, &f.language};
        const mj_member *ms[] = {&s.device, &s.name, &s.source, &s.source_file, &s.options, &s.language};
        for (size_t k = 0; k < 6; k++)
            if (!same_member(mf[k], ms[k])) abort();
        for (size_t k = 0; k < f.n_opts; k++)
            if (!same_bytes(f.opts[k].key, (const char *)s.opts[k].key.ptr, s.opts[k].key.len) ||
                !same_bytes(f.opts[k].value, (const char *)s.opts[k].value.ptr, s.opts[k].value.len))
                abort();
    }
    mj_parser_free(&pf);
    mj_parser_free(&ps);
    free(out_fast);
    free(out_strict);
}

static bool same_line(const mj_line *a, const mj_line *b)
{
    const mj_member *ma[] = {&a->device, &a->name, &a->source, &a->source_file, &a->options, &a->language};
    const mj_member *mb[] = {&b->device, &b->name, &b->source, &b->source_file, &b->options, &b->language};
    for (size_t k = 0; k < 6; k++)
        if (!same_member(ma[k], mb[k])) return false;
    if (a->root != b->root || a->n_opts != b->n_opts || a->opt_err != b->opt_err ||
        a->opt_err_index != b->opt_err_index || a->opt_err_kind != b->opt_err_kind ||
        !same_bytes(a->opt_err_key, (const char *)b->opt_err_key.ptr, b->opt_err_key.len) ||
        a->n_unknown != b->n_unknown)
        return false;
    for (size_t k = 0; k < a->n_opts; k++)
        if (!same_bytes(a->opts[k].key, (const char *)b->opts[k].key.ptr, b->opts[k].key.len) ||
            !same_bytes(a->opts[k].value, (const char *)b->opts[k].value.ptr, b->opts[k].value.len))
            return false;
    for (size_t k = 0; k < a->n_unknown; k++)
        if (a->unknown_off[k] != b->unknown_off[k] ||
            !same_bytes(a->unknown[k], (const char *)b->unknown[k].ptr, b->unknown[k].len))
            return false;
    return true;
}

/* With a table of repeats (manifest/manifest.h), the line parsed twice, the
 * second time from another copy of its bytes so that every long string is
 * a repeat, must give exactly what the parse without one gave (r0, j0,
 * bad0, what0): repeats within the line are taken from the table too. */
static void check_reuse(const char *line, size_t size, int r0, const mj_line *j0, size_t bad0, const char *what0)
{
    mj_reuse table;
    size_t budget = (size_t)1 << 30;
    mj_known known = {.budget = &budget};   /* the run-wide layer: a repeat is promoted, the third parse hits it */
    char *copy = malloc(size ? size : 1), *out[3] = {malloc(size ? size : 1), malloc(size ? size : 1), malloc(size ? size : 1)};
    if (mj_reuse_init(&table, 4) != 0 || !copy || !out[0] || !out[1] || !out[2]) abort();
    memcpy(copy, line, size);
    mj_parser ps[3] = {{.reuse = &table}, {.reuse = &table, .known = &known}, {.reuse = &table, .known = &known}};
    for (int t = 0; t < 3; t++) {
        mj_line j;
        size_t bad;
        char what[160];
        int r = mj_parse(&ps[t], t ? copy : line, size, out[t], &j, &bad, what, sizeof what);
        if (r != r0 || (r && (bad != bad0 || strcmp(what, what0))) || (!r && !same_line(&j, j0))) abort();
    }
    for (int t = 0; t < 3; t++) mj_parser_free(&ps[t]), free(out[t]);
    mj_known_free(&known);
    mj_reuse_free(&table);
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Exactly the bytes, no terminator; the decode buffer exactly as large. */
    char *line = malloc(size ? size : 1), *out = malloc(size ? size : 1);
    if (!line || !out) abort();
    memcpy(line, data, size);
    json_error_t je;
    json_t *root = json_loadb(line, size, JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &je);
    mj_parser ps = {0};
    mj_line j;
    size_t bad;
    char what[160];
    int r = mj_parse(&ps, line, size, out, &j, &bad, what, sizeof what);
    if (r == -2) abort();
    /* A raw NUL is refused before any parsing (manifest/reader.c names it), and
     * jansson takes one for the end of the input: ours must refuse it. */
    if (memchr(line, '\0', size)) {
        if (r == 0) abort();
        json_decref(root);
        root = NULL;
    } else if ((r == 0) != (root != NULL)) {
        abort();
    }
    if (r != 0 && (bad > size || !memchr(what, '\0', sizeof what))) abort();
    if (root) {
        if (j.root != kind_of(root)) abort();
        if (json_is_object(root)) {
            check_member(root, "device", &j.device);
            check_member(root, "name", &j.name);
            check_member(root, "source", &j.source);
            check_member(root, "source_file", &j.source_file);
            check_member(root, "language", &j.language);
            check_member(root, "options", &j.options);
            check_options(json_object_get(root, "options"), &j);
        }
    }
    json_decref(root);
    check_reuse(line, size, r, &j, bad, what);
    mj_parser_free(&ps);
    check_fast_path(line, size);
    free(line);
    free(out);
    return 0;
}
