/* The CLI's JSON writer (host/cli/json_out.h) against jansson as the
 * oracle: random documents built both ways must print byte for byte alike
 * in each layout (COMPACT = JSON_COMPACT, SPACED = jansson's default
 * separators, INDENT = JSON_INDENT(2)), and what the writer prints must read
 * back as the same value. Bytes that are not UTF-8, which jansson refuses,
 * are checked against hand-worked expectations. */
#include "cli/json_out.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

/* A random code point, biased to the cases escapes care about. */
static uint32_t code_point(void)
{
    switch (next() % 6) {
    case 0: return (uint32_t)(next() % 0x20);          /* control */
    case 1: return "\"\\/ azAZ09"[next() % 10];
    case 2: return 0x80 + (uint32_t)(next() % 0x780);  /* two bytes */
    case 3: {
        uint32_t c = 0x800 + (uint32_t)(next() % 0xf800);
        return c >= 0xd800 && c <= 0xdfff ? 0xfffd : c;
    }
    case 4: return 0x10000 + (uint32_t)(next() % 0x100000);
    default: return 0x20 + (uint32_t)(next() % 0x5f);
    }
}

static size_t encode(uint32_t c, char *o)
{
    if (c < 0x80) return o[0] = (char)c, 1;
    if (c < 0x800) return o[0] = (char)(0xc0 | c >> 6), o[1] = (char)(0x80 | (c & 0x3f)), 2;
    if (c < 0x10000)
        return o[0] = (char)(0xe0 | c >> 12), o[1] = (char)(0x80 | (c >> 6 & 0x3f)), o[2] = (char)(0x80 | (c & 0x3f)), 3;
    o[0] = (char)(0xf0 | c >> 18), o[1] = (char)(0x80 | (c >> 12 & 0x3f));
    o[2] = (char)(0x80 | (c >> 6 & 0x3f)), o[3] = (char)(0x80 | (c & 0x3f));
    return 4;
}

/* A random valid UTF-8 string (NUL included unless no_nul) into buf. */
static size_t random_text(char *buf, size_t max_chars, bool no_nul)
{
    size_t n = 0, chars = next() % (max_chars + 1);
    for (size_t i = 0; i < chars; i++) {
        uint32_t c = code_point();
        if (no_nul && c == 0) c = 'x';
        n += encode(c, buf + n);
    }
    buf[n] = '\0';
    return n;
}

static double random_real(void)
{
    switch (next() % 4) {
    case 0: return (double)(int64_t)(next() % 2000001) - 1000000.0;   /* whole: ".0" */
    case 1: return (double)(next() % 1000000) * 1e302;                  /* large exponents */
    case 2: return (double)(next() % 1000) * 1e-310;                    /* subnormal */
    default: {
        double d;
        uint64_t bits = next();
        memcpy(&d, &bits, sizeof d);
        return isfinite(d) ? d : 0.5;
    }
    }
}

/* One random value, built in both; depth bounds the nesting. */
static json_t *value(cli_json *w, int depth)
{
    char buf[4 * 24 + 1];
    int kind = (int)(next() % (depth > 0 ? 8 : 6));
    switch (kind) {
    case 0: {
        size_t n = random_text(buf, 24, false);
        cli_json_strn(w, buf, n);
        return json_stringn(buf, n);
    }
    case 1: {
        long long v = (long long)next() >> (next() % 64);
        cli_json_int(w, v);
        return json_integer(v);
    }
    case 2: {
        double v = random_real();
        cli_json_real(w, v);
        return json_real(v);
    }
    case 3: {
        bool b = next() & 1;
        cli_json_bool(w, b);
        return json_boolean(b);
    }
    case 4: cli_json_null(w); return json_null();
    case 5: {
        size_t n = random_text(buf, 8, true);
        cli_json_str(w, buf);
        return json_stringn(buf, n);
    }
    case 6: {
        json_t *a = json_array();
        cli_json_array(w);
        for (size_t i = next() % 5; i > 0; i--) json_array_append_new(a, value(w, depth - 1));
        cli_json_end(w);
        return a;
    }
    default: {
        json_t *o = json_object();
        cli_json_object(w);
        for (size_t i = 0, n = next() % 5; i < n; i++) {
            random_text(buf, 10, true);
            char key[sizeof buf + 24];
            snprintf(key, sizeof key, "%s#%zu", buf, i);   /* jansson's keys are unique */
            cli_json_key(w, key);
            json_object_set_new(o, key, value(w, depth - 1));
        }
        cli_json_end(w);
        return o;
    }
    }
}

/* The writer's text, NUL-terminated (cli_json_put writes it to a stream). */
static char *text_of(cli_json *w)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert(f != NULL);
    int rc = cli_json_put(w, f, NULL);
    fclose(f);
    cr_assert_eq(rc, 0, "the writer failed on a valid document");
    return buf;
}

Test(json_out, random_documents_match_jansson_in_every_layout)
{
    static const struct {
        cli_json_layout layout;
        size_t flags;
    } layouts[] = {{CLI_JSON_COMPACT, JSON_COMPACT}, {CLI_JSON_SPACED, 0}, {CLI_JSON_INDENT, JSON_INDENT(2)}};
    for (int round = 0; round < 3000; round++) {
        for (size_t l = 0; l < 3; l++) {
            uint64_t seed = rng;
            cli_json w;
            cli_json_init(&w, layouts[l].layout, round & 1);
            json_t *j = value(&w, 4);
            cr_assert(j != NULL);
            char *ours = text_of(&w);
            char *theirs = json_dumps(j, layouts[l].flags | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
            cr_assert(theirs != NULL);
            cr_assert_str_eq(ours, theirs, "round %d, layout %zu (seed %llx):\n%s\n%s", round, l, (unsigned long long)seed, ours, theirs);
            json_error_t e;
            json_t *back = json_loads(ours, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
            cr_assert(back && json_equal(back, j), "round %d: %s does not read back: %s", round, ours, e.text);
            json_decref(back), json_decref(j), free(ours), free(theirs);
            cli_json_free(&w);
        }
    }
}

/* s as the writer prints it, or NULL when the text failed. */
static char *written(const char *s, size_t len, bool strict)
{
    cli_json w;
    cli_json_init(&w, CLI_JSON_COMPACT, strict);
    cli_json_strn(&w, s, len);
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    int rc = cli_json_put(&w, f, NULL);
    fclose(f);
    cli_json_free(&w);
    if (rc == 0) return buf;
    free(buf);
    return NULL;
}

Test(json_out, bytes_that_are_not_utf8_become_u_fffd_or_fail_a_strict_text)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"a\xff" "b", "\"a\xef\xbf\xbd" "b\""},                    /* a byte UTF-8 never uses */
        {"\xc3", "\"\xef\xbf\xbd\""},                              /* a sequence cut short */
        {"\xc0\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\""},              /* overlong '/' */
        {"\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""},   /* a surrogate */
        {"\xf4\x90\x80\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""},   /* past U+10FFFF */
        {"\xe2\x82\xac\x80", "\"\xe2\x82\xac\xef\xbf\xbd\""},      /* a stray continuation byte */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *got = written(cases[i].in, strlen(cases[i].in), false);
        cr_assert(got != NULL);
        cr_assert_str_eq(got, cases[i].out, "case %zu", i);
        free(got);
        cr_assert_null(written(cases[i].in, strlen(cases[i].in), true), "case %zu passed a strict writer", i);
    }
    char *nul = written("a\0b", 3, true);
    cr_assert_str_eq(nul, "\"a\\u0000b\"");
    free(nul);
}

Test(json_out, rows_frame_one_array_or_one_row_a_line)
{
    for (int array = 0; array < 2; array++) {
        for (size_t n = 0; n < 4; n++) {
            char *buf = NULL;
            size_t len = 0;
            FILE *f = open_memstream(&buf, &len);
            cli_json_rows r;
            cli_json_rows_start(&r, f, array, CLI_JSON_SPACED, false);
            for (size_t i = 0; i < n; i++) {
                cli_json_object(&r.w);
                cli_json_kint(&r.w, "row", (long long)i);
                cli_json_end(&r.w);
                cr_assert_eq(cli_json_row_put(&r), 0);
            }
            cli_json_rows_end(&r, true);
            fclose(f);
            char want[256] = "";
            for (size_t i = 0; i < n; i++)
                snprintf(want + strlen(want), sizeof want - strlen(want), "%s{\"row\": %zu}%s",
                         array ? (i ? ",\n  " : "[\n  ") : "", i, array ? "" : "\n");
            if (array) strcat(want, n ? "\n]\n" : "[]\n");
            cr_assert_str_eq(buf, want, "array %d, %zu rows", array, n);
            free(buf);
        }
    }
}

Test(json_out, a_failed_text_writes_nothing)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cli_json w;
    cli_json_init(&w, CLI_JSON_INDENT, true);
    cli_json_object(&w);
    cli_json_kstr(&w, "ok", "yes");
    cli_json_kstr(&w, "bad", "\xff");
    cli_json_end(&w);
    cr_assert_eq(cli_json_put(&w, f, "\n"), -1);
    cli_json_object(&w);   /* unbalanced: never printed */
    cr_assert_eq(cli_json_put(&w, f, "\n"), -1);
    for (int i = 0; i <= CLI_JSON_DEPTH; i++) cli_json_array(&w);   /* too deep */
    for (int i = 0; i <= CLI_JSON_DEPTH; i++) cli_json_end(&w);
    cr_assert_eq(cli_json_put(&w, f, "\n"), -1);
    fclose(f);
    cr_assert_eq(len, 0, "a failed text printed \"%s\"", buf);
    free(buf);
    cli_json_free(&w);
}

Test(json_out, fixed_decimals_and_non_finite_reals)
{
    cli_json w;
    cli_json_init(&w, CLI_JSON_SPACED, false);
    cli_json_array(&w);
    cli_json_fixed(&w, 0.0004, 3);
    cli_json_fixed(&w, 12.3456, 3);
    cli_json_real(&w, NAN);
    cli_json_real(&w, INFINITY);
    cli_json_real(&w, 1e21);
    cli_json_real(&w, -2.5e-7);
    cli_json_end(&w);
    char *t = text_of(&w);
    cr_assert_str_eq(t, "[0.000, 12.346, null, null, 1e21, -2.4999999999999999e-7]");
    free(t);
    cli_json_free(&w);
}
