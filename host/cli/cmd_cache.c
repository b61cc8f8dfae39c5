/* cckey cache: look after a kernel store folder (stats, verify, clear, get). */
#include "cli.h"
#include "cache_bundle.h"
#include "remote_opts.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fputs("usage: cckey cache stats|verify|clear|list|trim [--cache-dir DIR]\n"
          "       cckey cache get KEY [-o FILE] [--cache-dir DIR]\n"
          "       cckey cache put KEY FILE [--cache-dir DIR]\n"
          "       cckey cache config [max-size [SIZE|none]] [--cache-dir DIR]\n"
          "       cckey cache export [MANIFEST] -o BUNDLE [--cache-dir DIR]\n"
          "       cckey cache import BUNDLE [--cache-dir DIR] [--remote URL]... [--sign-unsigned]\n"
          "\n"
          "  stats    count entries, the builds they hold and unfinished writes (no\n"
          "           checks), the size limit, the look-ups that hit and missed (every\n"
          "           process, every run), and the\n"
          "           remote caches' traffic (hits, misses, errors, bytes) of every run\n"
          "  list     one line per entry: KEY BYTES LAST-USED (UTC) BUILDS (the builds the\n"
          "           key holds, each with its own headers); json/jsonl objects\n"
          "  put      store FILE's bytes under KEY (as warm stores a compiled kernel)\n"
          "  trim     apply the size limit now: least recently used entries go first,\n"
          "           down to 90% of it\n"
          "  config   show the folder's settings, or set max-size: the size limit every\n"
          "           writer honours (warm, put, import, library users), e.g. 10G\n"
          "           (K, M, G, T: binary units); \"none\" removes it. Kept in\n"
          "           DIR/cckey.conf as max_size = SIZE\n"
          "  verify   check every entry's header, checksum and builds; remove the damaged\n"
          "           ones, anything under an entry's name that is no regular file (a\n"
          "           symlink, FIFO, folder), and the temporary files of writers that are\n"
          "           gone; exit 1 if any entry was damaged, could not be removed or read\n"
          "  clear    remove every entry (files the store did not name stay)\n"
          "  get      write the payload stored under KEY (a compiled kernel; of several\n"
          "           builds, the newest) to FILE or standard output; exit 1 when there is\n"
          "           none (remotes are asked too)\n"
          "  export   write a bundle of the entries MANIFEST's tuples need (exit 1 when some\n"
          "           have none), or of every entry, to BUNDLE: one portable file to ship a\n"
          "           warmed cache to a deployment or a container image: a tar archive\n"
          "           (tar -tf lists it), zstd-compressed when BUNDLE ends in .zst or .tzst\n"
          "  import   read a bundle (\"-\": standard input; tar, tar.zst, or CCKEYBND of\n"
          "           earlier releases) into DIR, creating it, and into\n"
          "           every writable remote that lacks an entry; each entry is checked as a\n"
          "           look-up checks it, and a damaged one is refused (exit 1). With a\n"
          "           signing secret, an entry signed with another one is refused whole,\n"
          "           and an unsigned one is kept here but sent to the remotes that sign\n"
          "           only with --sign-unsigned (exit 1 otherwise). Members with an\n"
          "           absolute path, \"..\", links and devices are refused (exit 1)\n"
          "\n"
          "      --cache-dir DIR   the store (default: $CCKEY_CACHE_DIR, else\n"
          "                        $XDG_CACHE_HOME/cckey, else ~/.cache/cckey)\n"
          "      --format FMT      for stats and list: text (default), json or jsonl\n"
          "      --json            the same as --format json\n"
          "  -o, --output FILE     for get and export: write FILE atomically\n"
          "      --sign-unsigned   for import: sign unsigned entries with the secret, vouching\n"
          "                        for them, and send them to the remotes that sign\n"
          CLI_REMOTE_HELP
          "  -h, --help            show this help\n"
          "\n"
          "Layout and guarantees: see cckey_store_open in cckey.h.\n",
          f);
}

/* The folder's running remote counters, when any remote was ever used. */
static void print_remote_totals(cckey_store *s)
{
    cckey_remote_counters c;
    if (cckey_store_remote_counters(s, 0, &c) != CCKEY_OK) return;
    if (!c.hits && !c.misses && !c.errors && !c.puts) return;
    printf("remote hits: %llu\nremote misses: %llu\nremote errors: %llu\nremote writes: %llu\n"
           "remote bytes in: %llu\nremote bytes out: %llu\n",
           (unsigned long long)c.hits, (unsigned long long)c.misses, (unsigned long long)c.errors,
           (unsigned long long)c.puts, (unsigned long long)c.bytes_in, (unsigned long long)c.bytes_out);
}

/* What the entries' headers tell: the builds they hold, and their size
 * with payloads uncompressed against their size on disk. */
typedef struct builds_sum {
    uint64_t builds, plain, bytes;
} builds_sum;

static int add_builds(void *user, const cckey_store_entry_info *e)
{
    builds_sum *b = user;
    b->builds += e->variants, b->plain += e->plain_bytes, b->bytes += e->bytes;
    return 0;
}

static builds_sum count_builds(cckey_store *s)
{
    builds_sum b = {0};
    cckey_store_list_info(s, add_builds, &b);
    return b;
}

/* Uncompressed size over size on disk (1 when nothing is compressed). */
static double compression_ratio(const builds_sum *b) { return b->bytes ? (double)b->plain / (double)b->bytes : 1.0; }

/* cache stats --format json|jsonl: one object. */
static void print_stats_json(cckey_store *s, const char *dir, const cckey_store_usage *u, const builds_sum *b,
                             cli_format fmt)
{
    uint64_t builds = b->builds;
    json_t *j = json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "cache_dir", dir, "entries", (json_int_t)u->entries,
                          "variants", (json_int_t)builds,
                          "bytes", (json_int_t)u->bytes, "max_bytes", (json_int_t)u->max_bytes, "hits",
                          (json_int_t)u->hits, "misses", (json_int_t)u->misses, "temp_files",
                          (json_int_t)u->temp_files, "temp_bytes", (json_int_t)u->temp_bytes);
    if (j) json_object_set_new(j, "plain_bytes", json_integer((json_int_t)b->plain));
    if (j) json_object_set_new(j, "compression_ratio", json_real(compression_ratio(b)));
    cckey_remote_counters c;
    if (j && cckey_store_remote_counters(s, 0, &c) == CCKEY_OK)
        json_object_set_new(j, "remote", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "hits", (json_int_t)c.hits, "misses",
                                                   (json_int_t)c.misses, "errors", (json_int_t)c.errors, "writes",
                                                   (json_int_t)c.puts, "bytes_in", (json_int_t)c.bytes_in,
                                                   "bytes_out", (json_int_t)c.bytes_out));
    char *txt = j ? json_dumps(j, (fmt == CLI_JSON ? JSON_INDENT(2) : JSON_COMPACT) | JSON_PRESERVE_ORDER) : NULL;
    if (txt) puts(txt);
    free(txt);
    json_decref(j);
}

static int do_get(cckey_store *s, const char *key, const char *output)
{
    void *buf;
    size_t len;
    cckey_status st = cckey_store_get(s, key, &buf, &len);
    if (st == CCKEY_ERR_INVALID_ARG) {
        cli_error("cache get: \"%s\" is not a key (131 characters: four hex digests joined by ':')", key);
        return CLI_USAGE;
    }
    if (st != CCKEY_OK) {
        cli_error("cache get: %s: %s", cckey_strerror(st), cckey_last_error());
        return CLI_FAIL;
    }
    cli_output out;
    int rc = CLI_FAIL;
    if (cli_output_open(&out, output) == 0) {
        if (fwrite(buf, 1, len, out.f) == len && cli_output_commit(&out) == 0) rc = CLI_OK;
        else if (out.f) cli_output_abort(&out);
    }
    cckey_store_free_buffer(buf);
    return rc;
}

/* export [MANIFEST] and import BUNDLE. */
static int bundle_action(int argc, char **argv, const char *dir, const char *output, cli_remotes *remotes, bool exp,
                         bool sign_unsigned)
{
    const char *what = exp ? "export" : "import";
    int args = argc - optind - 1;
    if (exp ? args > 1 : args != 1) {
        cli_error(exp ? "cache export: give at most one manifest" : "cache import: give exactly one bundle");
        return CLI_USAGE;
    }
    if (!dir || !*dir) {
        cli_error("cache: give --cache-dir DIR (or set CCKEY_CACHE_DIR)");
        return CLI_USAGE;
    }
    if (exp && (!output || strcmp(output, "-") == 0) && isatty(STDOUT_FILENO)) {
        cli_error("cache export: not writing a binary bundle to a terminal; give -o FILE");
        return CLI_USAGE;
    }
    struct stat dst;
    if (exp && stat(dir, &dst) != 0) {   /* exporting must not create a cache */
        cli_error("cache: %s: %s", dir, errno == ENOENT ? "no cache folder here" : strerror(errno));
        return CLI_FAIL;
    }
    cckey_store *s;
    if (cckey_store_open(&s, dir, 0) != CCKEY_OK) {
        cli_error("cache %s: %s", what, cckey_last_error());
        return CLI_FAIL;
    }
    int rc = exp ? CLI_OK : cli_remotes_attach(remotes, s, dir, "cache import");
    if (rc == CLI_OK)
        rc = exp ? cli_cache_export(s, args ? argv[optind + 1] : NULL, output)
                 : cli_cache_import(s, argv[optind + 1], true, sign_unsigned);
    if (!exp) cli_remotes_report(s, "cache import");
    cckey_store_close(s);
    return rc;
}

typedef struct cache_opts {
    const char *output;
    cli_format fmt;
    bool sign_unsigned;
} cache_opts;

static int run_action(int argc, char **argv, const char *dir, const cache_opts *o, cli_remotes *remotes);

int cckey_cmd_cache(int argc, char **argv)
{
    enum { OPT_DIR = 256, OPT_FORMAT, OPT_JSON, OPT_SIGN_UNSIGNED };
    static const struct option longopts[] = {{"cache-dir", required_argument, NULL, OPT_DIR},
                                             {"output", required_argument, NULL, 'o'},
                                             {"format", required_argument, NULL, OPT_FORMAT},
                                             {"json", no_argument, NULL, OPT_JSON},
                                             {"sign-unsigned", no_argument, NULL, OPT_SIGN_UNSIGNED},
                                             {"help", no_argument, NULL, 'h'},
                                             CLI_REMOTE_LONGOPTS,
                                             {NULL, 0, NULL, 0}};
    const char *dir = NULL;
    char default_dir[4096];
    cache_opts o = {NULL, CLI_TEXT, false};
    int c;
    cli_remotes remotes = {0};
    optind = 1;
    while ((c = cli_getopt("cache", argc, argv, "o:h", longopts)) != -1) {
        int taken = cli_remotes_option(&remotes, c, optarg);
        if (taken > 0) continue;
        if (taken < 0) c = '?';
        switch (c) {
        case OPT_DIR: dir = optarg; break;
        case 'o': o.output = optarg; break;
        case OPT_SIGN_UNSIGNED: o.sign_unsigned = true; break;
        case OPT_FORMAT:
            if (!cli_format_parse("cache", optarg, CLI_FMT_ALL, &o.fmt)) {
                cli_remotes_free(&remotes);
                return CLI_USAGE;
            }
            break;
        case OPT_JSON: o.fmt = CLI_JSON; break;
        case 'h': cli_remotes_free(&remotes); usage(stdout); return CLI_OK;
        default: cli_remotes_free(&remotes); return CLI_USAGE;
        }
    }
    dir = cli_cache_dir(dir, default_dir, sizeof default_dir);
    int rc = run_action(argc, argv, dir, &o, &remotes);
    cli_remotes_free(&remotes);
    return rc;
}

/* The action after the options. */
static int run_action(int argc, char **argv, const char *dir, const cache_opts *o, cli_remotes *remotes)
{
    const char *output = o->output;
    cli_format fmt = o->fmt;
    if (optind >= argc) {
        cli_error("cache: give an action: stats, list, get, put, verify, trim, clear, config, export or import "
                  "(see 'cckey help cache')");
        return CLI_USAGE;
    }
    const char *what = argv[optind];
    bool get = strcmp(what, "get") == 0, exp = strcmp(what, "export") == 0, imp = strcmp(what, "import") == 0;
    if (strcmp(what, "list") == 0 || strcmp(what, "put") == 0 || strcmp(what, "trim") == 0 ||
        strcmp(what, "config") == 0)
        return cli_cache_more(what, argc - optind - 1, argv + optind + 1, dir, fmt);
    if (strcmp(what, "stats") && strcmp(what, "verify") && strcmp(what, "clear") && !get && !exp && !imp) {
        static const char *const actions[] = {"stats", "verify", "clear", "get", "export", "import",
                                              "list", "put", "trim", "config"};
        const char *guess = cli_suggest(what, actions, sizeof actions / sizeof *actions);
        if (guess) cli_error("cache: unknown action \"%s\"; did you mean \"%s\"? (see 'cckey help cache')", what, guess);
        else cli_error("cache: unknown action \"%s\" (see 'cckey help cache')", what);
        return CLI_USAGE;
    }
    if (exp || imp) return bundle_action(argc, argv, dir, output, remotes, exp, o->sign_unsigned);
    if (argc - optind != (get ? 2 : 1)) {
        cli_error(get ? "cache get: give exactly one key" : "cache %s: unexpected argument \"%s\"", what,
                  argv[optind + 1]);
        return CLI_USAGE;
    }
    if (!dir || !*dir) {
        cli_error("cache: give --cache-dir DIR (or set CCKEY_CACHE_DIR)");
        return CLI_USAGE;
    }
    /* Reading a cache must not create one: a mistyped --cache-dir would
     * otherwise report an empty store that was never there. */
    struct stat dst;
    if (stat(dir, &dst) != 0) {
        cli_error("cache: %s: %s", dir, errno == ENOENT ? "no cache folder here" : strerror(errno));
        return CLI_FAIL;
    }
    if (!S_ISDIR(dst.st_mode)) {
        cli_error("cache: %s: not a folder", dir);
        return CLI_FAIL;
    }
    cckey_store *s;
    if (cckey_store_open(&s, dir, 0) != CCKEY_OK) {
        cli_error("cache: %s", cckey_last_error());
        return CLI_FAIL;
    }
    int rc = get ? cli_remotes_attach(remotes, s, dir, "cache get") : CLI_OK;
    if (rc != CLI_OK) {
    } else if (get) {
        rc = do_get(s, argv[optind + 1], output);
    } else if (strcmp(what, "stats") == 0) {
        cckey_store_usage u;
        if (cckey_store_stats(s, &u) != CCKEY_OK) {
            cli_error("cache stats: %s", cckey_last_error());
            rc = CLI_FAIL;
        } else if (fmt != CLI_TEXT) {
            builds_sum b = count_builds(s);
            print_stats_json(s, dir, &u, &b, fmt);
        } else {
            builds_sum b = count_builds(s);
            printf("entries: %llu\nbuilds: %llu\nbytes: %llu\n", (unsigned long long)u.entries,
                   (unsigned long long)b.builds, (unsigned long long)u.bytes);
            printf("compression ratio: %.2f (%llu bytes uncompressed)\n", compression_ratio(&b),
                   (unsigned long long)b.plain);
            if (u.max_bytes) printf("max size: %llu\n", (unsigned long long)u.max_bytes);
            else printf("max size: none\n");
            uint64_t looked = u.hits + u.misses;
            printf("hits: %llu\nmisses: %llu\n", (unsigned long long)u.hits, (unsigned long long)u.misses);
            if (looked) printf("hit rate: %.1f%%\n", 100.0 * (double)u.hits / (double)looked);
            printf("temporary files: %llu (%llu bytes)\n", (unsigned long long)u.temp_files,
                   (unsigned long long)u.temp_bytes);
            print_remote_totals(s);
        }
    } else if (strcmp(what, "verify") == 0) {
        cckey_store_report r;
        if (cckey_store_verify(s, &r) != CCKEY_OK) {
            cli_error("cache verify: %s", cckey_last_error());
            rc = CLI_FAIL;
        } else {
            printf("ok: %llu\nremoved (damaged): %llu\ntemporary files removed: %llu\n", (unsigned long long)r.ok,
                   (unsigned long long)r.removed, (unsigned long long)r.temps_removed);
            /* Said only when it happened: a damaged entry left in place (a
             * read-only folder) or one that could not be checked at all. */
            if (r.kept) printf("damaged, could not be removed: %llu\n", (unsigned long long)r.kept);
            if (r.unreadable) printf("unreadable (not checked): %llu\n", (unsigned long long)r.unreadable);
            if (r.removed || r.kept || r.unreadable) rc = CLI_FAIL;
        }
    } else {
        uint64_t removed = 0;
        cckey_status st = cckey_store_clear(s, &removed);
        printf("removed: %llu\n", (unsigned long long)removed);
        if (st != CCKEY_OK) {
            cli_error("cache clear: %s", cckey_last_error());
            rc = CLI_FAIL;
        }
    }
    cckey_store_close(s);
    return rc;
}
