/* cckey key: one key from the command line. */
#include "cli.h"
#include "json_out.h"
#include "warm/warm.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>   /* --options-json is read with it */
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: cckey key --device D --name N (--source S | --source-file F) [-O OPTION]...\n"
          "\n"
          "Print the compile-cache key of one kernel.\n"
          "\n"
          "  -d, --device D        device identity, e.g. \"NVIDIA H200|580.159.04\"\n"
          "  -n, --name N          kernel entry-point name\n"
          "  -s, --source S        kernel source text\n"
          "  -f, --source-file F   read the source from F (\"-\" is standard input)\n"
          "  -O, --option FLAGS    build options, written as for cckey scan -O (see 'cckey\n"
          "                        help scan'): flags separated by blanks or commas, quoted\n"
          "                        as in sh; a flag that takes an argument is the pair\n"
          "                        [FLAG, ARG] (\"-I dir\", \"-Idir\": [\"-I\", \"dir\"];\n"
          "                        \"-DN=4\": [\"-D\", \"N=4\"]; \"-O3\", \"-O=3\": [\"-O\", \"3\"]);\n"
          "                        any other splits at its first '=' (\"arch=sm_90\"); a\n"
          "                        bare flag is [flag, \"\"]. Repeat for more: the pairs of\n"
          "                        every -O make one set, in order; -O \"\" (or -O -)\n"
          "                        adds none\n"
          "      --options-json J  pairs exactly, as a manifest's \"options\" array\n"
          "                        ('[[\"-DBLOCK\", \"64\"]]'), after those of any -O before it\n"
          "      --explain         show each field's digest, the options in canonical order,\n"
          "                        the canonical option string and the key\n"
          "      --format FMT      text (default), json or jsonl: {\"key\": ...}, with every\n"
          "                        digest under --explain\n"
          "      --json            the same as --format json\n"
          "  -q, --quiet           no warnings\n"
          "  -h, --help            show this help\n",
          f);
}

static char *slurp_stdin(size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, stdin);
        n += got;
        if (got == 0) {
            /* A read error must not pass for the end of a shorter source. */
            if (ferror(stdin)) {
                free(buf);
                return NULL;
            }
            break;
        }
        if (n == cap) {
            char *b = realloc(buf, cap *= 2);
            if (!b) free(buf);
            buf = b;
        }
    }
    *len = n;
    return buf;
}

/* A field for JSON: its text when it is UTF-8, else null (the digest still
 * says what it was). */
static void text_or_null(cli_json *w, const char *key, cckey_bytes b)
{
    cli_json_key(w, key);
    if (cli_utf8_okn(b.ptr, b.len)) cli_json_strn(w, b.ptr, b.len);
    else cli_json_null(w);
}

static void md5_hex(cckey_bytes b, char hex[CCKEY_HEX_LEN + 1])
{
    cckey_digest d;
    cckey_digest_init(&d);
    cckey_digest_update(&d, b.ptr, b.len);
    cckey_digest_final(&d, hex, NULL);
}

static int cmp_option(const void *a, const void *b)
{
    const cckey_option *x = *(const cckey_option *const *)a, *y = *(const cckey_option *const *)b;
    size_t n = x->key.len < y->key.len ? x->key.len : y->key.len;
    int c = n ? memcmp(x->key.ptr, y->key.ptr, n) : 0;
    if (c) return c;
    if (x->key.len != y->key.len) return x->key.len < y->key.len ? -1 : 1;
    return x < y ? -1 : x > y;   /* stable: equal keys keep their order */
}

static void print_field(const char *label, cckey_bytes b, const char *hex)
{
    if (cli_utf8_okn(b.ptr, b.len) && !memchr(b.ptr ? b.ptr : "", '\n', b.len) && b.len <= 60)
        printf("%-8s md5 %s  \"%.*s\"\n", label, hex, (int)b.len, (const char *)b.ptr);
    else printf("%-8s md5 %s  (%zu bytes)\n", label, hex, b.len);
}

/* --explain's JSON: the fields (device, name, source), their digests and
 * that of canon, and the options in canonical order with theirs. */
static int explain_json(const char *key, const cckey_bytes f[3], const char *const md5[4],
                        const cckey_option *const *order, const char (*kh)[33], const char (*vh)[33], size_t n,
                        const char *canon, cli_format fmt)
{
    cli_json w;
    cli_json_init(&w, fmt == CLI_JSON ? CLI_JSON_INDENT : CLI_JSON_COMPACT, false);
    cli_json_object(&w);
    cli_json_kstr(&w, "key", key);
    text_or_null(&w, "device", f[0]);
    cli_json_kstr(&w, "device_md5", md5[0]);
    text_or_null(&w, "name", f[1]);
    cli_json_kstr(&w, "name_md5", md5[1]);
    cli_json_kint(&w, "source_bytes", (long long)f[2].len);
    cli_json_kstr(&w, "source_md5", md5[2]);
    cli_json_key(&w, "options");
    cli_json_array(&w);
    for (size_t i = 0; i < n; i++) {
        cli_json_object(&w);
        text_or_null(&w, "key", order[i]->key);
        text_or_null(&w, "value", order[i]->value);
        cli_json_kstr(&w, "key_md5", kh[i]);
        cli_json_kstr(&w, "value_md5", vh[i]);
        cli_json_end(&w);
    }
    cli_json_end(&w);
    cli_json_kstr(&w, "canonical_options", canon);
    cli_json_kstr(&w, "options_md5", md5[3]);
    cli_json_end(&w);
    int rc = cli_json_put(&w, stdout, "\n") == 0 ? CLI_OK : CLI_FAIL;
    cli_json_free(&w);
    if (rc != CLI_OK) cli_error("key: out of memory");
    return rc;
}

/* --explain: every step of the recipe, recomputed here from the public
 * digest API, and checked against the key the library made. */
static int explain(const char *key, cckey_bytes dev, cckey_bytes name, cckey_bytes src, const cckey_option *opts,
                   size_t n, cli_format fmt)
{
    char hd[33], hn[33], hs[33], hc[33];
    md5_hex(dev, hd), md5_hex(name, hn), md5_hex(src, hs);
    const cckey_option **order = malloc((n ? n : 1) * sizeof *order);
    char (*kh)[33] = malloc((n ? n : 1) * sizeof *kh), (*vh)[33] = malloc((n ? n : 1) * sizeof *vh);
    char *canon = malloc(n * 66 + 1);
    if (!order || !kh || !vh || !canon) {
        free(order), free(kh), free(vh), free(canon);
        cli_error("key: out of memory");
        return CLI_FAIL;
    }
    for (size_t i = 0; i < n; i++) order[i] = &opts[i];
    qsort(order, n, sizeof *order, cmp_option);
    canon[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        md5_hex(order[i]->key, kh[i]), md5_hex(order[i]->value, vh[i]);
        sprintf(canon + strlen(canon), "%s%s=%s", i ? "," : "", kh[i], vh[i]);
    }
    md5_hex((cckey_bytes){canon, strlen(canon)}, hc);
    char joined[CCKEY_KEY_LEN + 1];
    snprintf(joined, sizeof joined, "%s:%s:%s:%s", hd, hn, hs, hc);
    int rc = CLI_OK;
    if (strcmp(joined, key) != 0) {
        cli_error("key: internal error: the explained key %s differs from the library's %s", joined, key);
        rc = CLI_FAIL;
    } else if (fmt == CLI_TEXT) {
        print_field("device", dev, hd);
        print_field("name", name, hn);
        print_field("source", src, hs);
        printf("options  %zu pair%s, sorted by key (unsigned bytes, stable):\n", n, n == 1 ? "" : "s");
        for (size_t i = 0; i < n; i++) {
            printf("  [%zu] md5(key) %s  md5(value) %s", i, kh[i], vh[i]);
            const cckey_option *o = order[i];
            if (cli_utf8_okn(o->key.ptr, o->key.len) && cli_utf8_okn(o->value.ptr, o->value.len))
                printf("  \"%.*s\" = \"%.*s\"", (int)o->key.len, (const char *)o->key.ptr, (int)o->value.len,
                       (const char *)o->value.ptr);
            putchar('\n');
        }
        printf("canon    \"%s\"\n", canon);
        printf("options  md5 %s  (of canon)\n", hc);
        printf("key      %s\n", key);
    } else {
        const cckey_bytes fields[3] = {dev, name, src};
        const char *const md5[4] = {hd, hn, hs, hc};
        rc = explain_json(key, fields, md5, order, kh, vh, n, canon, fmt);
    }
    free(order), free(kh), free(vh), free(canon);
    return rc;
}

/* --options-json: a manifest's "options" array, pair by pair. */
static int add_json_pairs(const char *text, cli_opts *set)
{
    json_error_t e;
    json_t *a = json_loads(text, JSON_DECODE_ANY, &e), *p;
    size_t i;
    int rc = a && json_is_array(a) ? CLI_OK : CLI_USAGE;
    json_array_foreach(a, i, p) {
        json_t *k = json_array_get(p, 0), *v = json_array_get(p, 1);
        if (rc != CLI_OK || json_array_size(p) != 2 || !json_is_string(k) || !json_is_string(v)) {
            rc = CLI_USAGE;
            break;
        }
        if (cli_opts_add(set, json_string_value(k), json_string_length(k), json_string_value(v),
                         json_string_length(v)) != 0)
            rc = CLI_FAIL;
    }
    json_decref(a);
    if (rc == CLI_USAGE) cli_error("key: --options-json wants a JSON array of [KEY, VALUE] string pairs, not %s", text);
    if (rc == CLI_FAIL) cli_error("key: out of memory");
    return rc;
}

enum { OPT_EXPLAIN = 256, OPT_FORMAT, OPT_JSON, OPT_PAIRS };
#define KEY_NEXT (-1)   /* an option taken; anything else is the exit code */

/* What key's command line asks for. */
typedef struct key_args {
    const char *device, *name, *source, *source_file;
    cli_opts set;
    bool want_explain;
    cli_format fmt;
} key_args;

/* The option sets of -O and --options-json. */
static int key_pairs(key_args *a, int c, const char *arg)
{
    char why[512];
    if (c == OPT_PAIRS) {
        int rc = add_json_pairs(arg, &a->set);
        return rc == CLI_OK ? KEY_NEXT : rc;
    }
    int rc = cli_opts_parse(arg, &a->set, why, sizeof why);
    if (rc == CLI_OK) return KEY_NEXT;
    cli_error("key: -O %s: %s", arg, why);
    return rc;
}

/* One option of key's command line (c as cli_getopt returned it). */
static int key_option(key_args *a, int c, const char *arg)
{
    switch (c) {
    case 'd': a->device = arg; return KEY_NEXT;
    case 'n': a->name = arg; return KEY_NEXT;
    case 's': a->source = arg; return KEY_NEXT;
    case 'f': a->source_file = arg; return KEY_NEXT;
    case 'O':
    case OPT_PAIRS: return key_pairs(a, c, arg);
    case OPT_EXPLAIN: a->want_explain = true; return KEY_NEXT;
    case OPT_FORMAT: return cli_format_parse("key", arg, CLI_FMT_ALL, &a->fmt) ? KEY_NEXT : CLI_USAGE;
    case OPT_JSON: a->fmt = CLI_JSON; return KEY_NEXT;
    case 'q': cli_quiet = true; return KEY_NEXT;
    case 'h': usage(stdout); return CLI_OK;
    default: return CLI_USAGE;
    }
}

/* The arguments as a whole: no stray operand, valid options, each field
 * given once. */
static int key_check(const key_args *a, int argc, char **argv)
{
    char why[512];
    if (optind < argc) {
        cli_error("key: unexpected argument \"%s\" (see 'cckey help key')", argv[optind]);
        return CLI_USAGE;
    }
    if (warm_options_check(a->set.v, a->set.n, why, sizeof why) != 0) {
        cli_error("key: %s", why);
        return CLI_USAGE;
    }
    if (a->device && a->name && (!a->source != !a->source_file)) return KEY_NEXT;
    char missing[160] = "";
    if (!a->device) strcat(missing, ", --device D");
    if (!a->name) strcat(missing, ", --name N");
    if (!a->source && !a->source_file) strcat(missing, ", --source S or --source-file F");
    if (a->source && a->source_file) cli_error("key: give --source or --source-file, not both (see 'cckey help key')");
    else cli_error("key: missing %s (see 'cckey help key')", missing + 2);
    return CLI_USAGE;
}

/* The source: --source's text, standard input, or a mapped file (each
 * released by the caller: *stdin_buf freed, *file unmapped). */
static int key_source(const key_args *a, cckey_bytes *src, cli_file *file, char **stdin_buf)
{
    *src = (cckey_bytes){a->source, a->source ? strlen(a->source) : 0};
    if (a->source_file && strcmp(a->source_file, "-") == 0) {
        errno = 0;
        *stdin_buf = slurp_stdin(&src->len);
        if (!*stdin_buf) {
            cli_error("key: cannot read standard input: %s", errno ? strerror(errno) : "out of memory");
            return CLI_FAIL;
        }
        src->ptr = *stdin_buf;
    } else if (a->source_file) {
        char why[256];
        if (cli_file_map(a->source_file, file, why, sizeof why) != 0) {
            cli_error("key: %s: %s", a->source_file, why);
            return CLI_USAGE;
        }
        *src = (cckey_bytes){file->ptr, file->len};
    }
    return KEY_NEXT;
}

/* The key of the arguments, written as asked. */
static int key_write(const key_args *a, cckey_bytes src)
{
    cckey_bytes dev = {a->device, strlen(a->device)}, name = {a->name, strlen(a->name)};
    char key[CCKEY_KEY_LEN + 1];
    cckey_status st = cckey_make_key(key, dev, name, src, a->set.v, a->set.n);
    if (st != CCKEY_OK) {
        cli_error("key: %s: %s", cckey_strerror(st), cckey_last_error());
        return CLI_FAIL;
    }
    int rc = CLI_OK;
    if (a->want_explain) rc = explain(key, dev, name, src, a->set.v, a->set.n, a->fmt);
    else if (a->fmt == CLI_TEXT) puts(key);
    else {
        cli_json w;
        cli_json_init(&w, a->fmt == CLI_JSON ? CLI_JSON_INDENT : CLI_JSON_SPACED, false);
        cli_json_object(&w);
        cli_json_kstr(&w, "key", key);
        cli_json_end(&w);
        if (cli_json_put(&w, stdout, "\n") != 0) rc = CLI_FAIL;
        cli_json_free(&w);
    }
    if (fflush(stdout) != 0) rc = CLI_FAIL;
    return rc;
}

int cli_cmd_key(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"device", required_argument, NULL, 'd'}, {"name", required_argument, NULL, 'n'},
        {"source", required_argument, NULL, 's'}, {"source-file", required_argument, NULL, 'f'},
        {"option", required_argument, NULL, 'O'}, {"explain", no_argument, NULL, OPT_EXPLAIN},
        {"format", required_argument, NULL, OPT_FORMAT}, {"json", no_argument, NULL, OPT_JSON},
        {"quiet", no_argument, NULL, 'q'}, {"help", no_argument, NULL, 'h'},
        {"options-json", required_argument, NULL, OPT_PAIRS}, {NULL, 0, NULL, 0}};
    key_args a = {.fmt = CLI_TEXT};
    int rc = KEY_NEXT, c;
    optind = 1;
    while (rc == KEY_NEXT && (c = cli_getopt("key", argc, argv, "d:n:s:f:O:qh", longopts)) != -1)
        rc = key_option(&a, c, optarg);
    if (rc == KEY_NEXT) rc = key_check(&a, argc, argv);
    cli_file file = {0};
    char *stdin_buf = NULL;
    cckey_bytes src;
    if (rc == KEY_NEXT) rc = key_source(&a, &src, &file, &stdin_buf);
    if (rc == KEY_NEXT) rc = key_write(&a, src);
    cli_file_unmap(&file);
    free(stdin_buf);
    cli_opts_free(&a.set);
    return rc;
}
