/* cckey cache: look after a kernel store folder (stats, verify, clear, get;
 * list, put and trim in cache_more.c, config in cache_config.c). */
#include "cli.h"
#include "cache_bundle.h"
#include "remote_opts.h"
#include "cache_config.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fputs("usage: cckey cache stats [--zero] [--format FMT] [--cache-dir DIR]\n"
          "       cckey cache verify|clear|list [--cache-dir DIR]\n"
          "       cckey cache trim [--older-than AGE] [--cache-dir DIR]\n"
          "       cckey cache get KEY [-o FILE] [--cache-dir DIR]\n"
          "       cckey cache put KEY FILE [--cache-dir DIR]\n"
          "       cckey cache config [SETTING [VALUE...|none]] [--cache-dir DIR]\n"
          "       cckey cache config remote add|remove URL [--cache-dir DIR]\n"
          "       cckey cache export [MANIFEST] -o BUNDLE [--cache-dir DIR]\n"
          "       cckey cache import BUNDLE [--cache-dir DIR] [--remote URL]... [--sign-unsigned]\n"
          "\n"
          "  stats    the folder, its entries and the builds they hold, its size against\n"
          "           the size limit, unfinished writes (no checks), the look-ups that hit\n"
          "           and missed locally and, apart, each remote's traffic (hits, misses,\n"
          "           errors, bytes, time), hit rates, and when the counters were zeroed.\n"
          "           Every process and run is counted; a look-up a remote served is a\n"
          "           local miss and a remote hit. --zero zeroes the counters (as\n"
          "           ccache -z); clear keeps them (as ccache -C)\n"
          "  list     one line per entry: KEY BYTES LAST-USED (UTC) BUILDS (the builds the\n"
          "           key holds, each with its own headers); json/jsonl objects\n"
          "  put      store FILE's bytes under KEY (as warm stores a compiled kernel)\n"
          "  trim     apply the folder's limits now: entries unused for max-age go, then\n"
          "           least recently used entries down to 90% of max-size. --older-than\n"
          "           AGE (30d, 12h, 90m, 45s, 2w): remove the entries unused that long\n"
          "  config   every setting with its value and where it comes from (command\n"
          "           line, environment, cckey.conf, default), as ccache -p; SETTING\n"
          "           VALUE sets one in DIR/cckey.conf (written atomically, comments\n"
          "           kept), SETTING none unsets it. Settings: max-size (10G; K, M, G, T\n"
          "           are binary units), max-age (30d), remote (URLs in order: a list,\n"
          "           or add/remove one), remote-only-read (true/false),\n"
          "           remote-key-file (PATH), remote-max-entry (64M), compression\n"
          "           (none/zstd), compression-level (-7..22, 0: zstd's default; a\n"
          "           negative one after --).\n"
          "           Every writer honours max-size and max-age (warm, put, import,\n"
          "           library users)\n"
          "  verify   check every entry's header, checksum and builds; remove the damaged\n"
          "           ones, anything under an entry's name that is no regular file (a\n"
          "           symlink, FIFO, folder), and the temporary files of writers that are\n"
          "           gone; exit 1 if any entry was damaged, could not be removed or read\n"
          "  clear    remove every entry (files the store did not name stay; the\n"
          "           counters stay too: see stats --zero)\n"
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
          "      --format FMT      for stats, list and config: text (default), json or jsonl\n"
          "      --json            the same as --format json\n"
          "      --zero            for stats: zero the counters, recording when\n"
          "      --older-than AGE  for trim: remove the entries unused for AGE\n"
          "  -o, --output FILE     for get and export: write FILE atomically\n"
          "      --sign-unsigned   for import: sign unsigned entries with the secret, vouching\n"
          "                        for them, and send them to the remotes that sign\n"
          CLI_REMOTE_HELP
          "  -h, --help            show this help\n"
          "\n"
          "Layout and guarantees: see cckey_store_open in cckey_store.h.\n",
          f);
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
    bool sign_unsigned, zero;
    const char *older_than;   /* trim --older-than AGE */
    const char *dir_origin;   /* where the folder's name came from, for config */
} cache_opts;

static int run_action(int argc, char **argv, const char *dir, const cache_opts *o, cli_remotes *remotes);

/* Where cli_cache_dir found the folder, as cache config shows it. */
static const char *dir_origin(const char *given)
{
    if (given) return "command line";
    const char *env = getenv("CCKEY_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
    return (env && *env) || (xdg && xdg[0] == '/') ? "environment" : "default";
}

int cli_cmd_cache(int argc, char **argv)
{
    enum { OPT_DIR = 256, OPT_FORMAT, OPT_JSON, OPT_SIGN_UNSIGNED, OPT_ZERO, OPT_OLDER_THAN };
    static const struct option longopts[] = {{"cache-dir", required_argument, NULL, OPT_DIR},
                                             {"output", required_argument, NULL, 'o'},
                                             {"format", required_argument, NULL, OPT_FORMAT},
                                             {"json", no_argument, NULL, OPT_JSON},
                                             {"sign-unsigned", no_argument, NULL, OPT_SIGN_UNSIGNED},
                                             {"zero", no_argument, NULL, OPT_ZERO},
                                             {"older-than", required_argument, NULL, OPT_OLDER_THAN},
                                             {"help", no_argument, NULL, 'h'},
                                             CLI_REMOTE_LONGOPTS,
                                             {NULL, 0, NULL, 0}};
    const char *dir = NULL;
    char default_dir[4096];
    cache_opts o = {.fmt = CLI_TEXT};
    int c, rc = -1;
    cli_remotes remotes = {0};
    optind = 1;
    while (rc < 0 && (c = cli_getopt("cache", argc, argv, "o:h", longopts)) != -1) {
        int taken = cli_remotes_option(&remotes, c, optarg);
        if (taken > 0) continue;
        if (taken < 0) c = '?';
        switch (c) {
        case OPT_DIR: dir = optarg; break;
        case 'o': o.output = optarg; break;
        case OPT_SIGN_UNSIGNED: o.sign_unsigned = true; break;
        case OPT_ZERO: o.zero = true; break;
        case OPT_OLDER_THAN: o.older_than = optarg; break;
        case OPT_FORMAT:
            if (!cli_format_parse("cache", optarg, CLI_FMT_ALL, &o.fmt)) rc = CLI_USAGE;
            break;
        case OPT_JSON: o.fmt = CLI_JSON; break;
        case 'h': usage(stdout); rc = CLI_OK; break;
        default: rc = CLI_USAGE; break;
        }
    }
    if (rc < 0) {
        o.dir_origin = dir_origin(dir);
        dir = cli_cache_dir(dir, default_dir, sizeof default_dir);
        rc = run_action(argc, argv, dir, &o, &remotes);
    }
    cli_remotes_free(&remotes);
    return rc;
}

/* An option given to an action that does not take it is a usage error. */
static bool options_fit(const char *what, const cache_opts *o)
{
    const char *stray = o->zero && strcmp(what, "stats") ? "--zero"
                        : o->older_than && strcmp(what, "trim") ? "--older-than" : NULL;
    if (stray) cli_error("cache %s: %s is for cache %s only", what, stray, strcmp(stray, "--zero") ? "trim" : "stats");
    return !stray;
}

/* The action named, or a usage error (with a guess) for any other word. */
static bool action_known(const char *what)
{
    static const char *const actions[] = {"stats", "verify", "clear", "get", "export", "import",
                                          "list", "put", "trim", "config"};
    for (size_t i = 0; i < sizeof actions / sizeof *actions; i++)
        if (strcmp(what, actions[i]) == 0) return true;
    const char *guess = cli_suggest(what, actions, sizeof actions / sizeof *actions);
    if (guess) cli_error("cache: unknown action \"%s\"; did you mean \"%s\"? (see 'cckey help cache')", what, guess);
    else cli_error("cache: unknown action \"%s\" (see 'cckey help cache')", what);
    return false;
}

/* An existing folder, for the actions that read or clean one: reading a
 * cache must not create one (a mistyped --cache-dir would otherwise report
 * an empty store that was never there). */
static int open_folder(const char *dir, cckey_store **s)
{
    if (!dir || !*dir) {
        cli_error("cache: give --cache-dir DIR (or set CCKEY_CACHE_DIR)");
        return CLI_USAGE;
    }
    struct stat dst;
    if (stat(dir, &dst) != 0) {
        cli_error("cache: %s: %s", dir, errno == ENOENT ? "no cache folder here" : strerror(errno));
        return CLI_FAIL;
    }
    if (!S_ISDIR(dst.st_mode)) {
        cli_error("cache: %s: not a folder", dir);
        return CLI_FAIL;
    }
    if (cckey_store_open(s, dir, 0) != CCKEY_OK) {
        cli_error("cache: %s", cckey_last_error());
        return CLI_FAIL;
    }
    return CLI_OK;
}

static int do_verify(cckey_store *s)
{
    cckey_store_report r;
    if (cckey_store_verify(s, &r) != CCKEY_OK) {
        cli_error("cache verify: %s", cckey_last_error());
        return CLI_FAIL;
    }
    printf("ok: %llu\nremoved (damaged): %llu\ntemporary files removed: %llu\n", (unsigned long long)r.ok,
           (unsigned long long)r.removed, (unsigned long long)r.temps_removed);
    /* Said only when it happened: a damaged entry left in place (a
     * read-only folder) or one that could not be checked at all. */
    if (r.kept) printf("damaged, could not be removed: %llu\n", (unsigned long long)r.kept);
    if (r.unreadable) printf("unreadable (not checked): %llu\n", (unsigned long long)r.unreadable);
    return r.removed || r.kept || r.unreadable ? CLI_FAIL : CLI_OK;
}

static int do_clear(cckey_store *s)
{
    uint64_t removed = 0;
    cckey_status st = cckey_store_clear(s, &removed);
    printf("removed: %llu\n", (unsigned long long)removed);
    if (st == CCKEY_OK) return CLI_OK;
    cli_error("cache clear: %s", cckey_last_error());
    return CLI_FAIL;
}

/* stats, verify, clear and get: on the existing folder. */
static int folder_action(const char *what, const char *arg, const char *dir, const cache_opts *o,
                         cli_remotes *remotes)
{
    cckey_store *s;
    int rc = open_folder(dir, &s);
    if (rc != CLI_OK) return rc;
    if (strcmp(what, "get") == 0) {
        rc = cli_remotes_attach(remotes, s, dir, "cache get");
        if (rc == CLI_OK) rc = do_get(s, arg, o->output);
    } else if (strcmp(what, "stats") == 0) {
        rc = cli_cache_stats(s, dir, o->fmt, o->zero);
    } else {
        rc = strcmp(what, "verify") == 0 ? do_verify(s) : do_clear(s);
    }
    cckey_store_close(s);
    return rc;
}

/* The action after the options. */
static int run_action(int argc, char **argv, const char *dir, const cache_opts *o, cli_remotes *remotes)
{
    if (optind >= argc) {
        cli_error("cache: give an action: stats, list, get, put, verify, trim, clear, config, export or import "
                  "(see 'cckey help cache')");
        return CLI_USAGE;
    }
    const char *what = argv[optind];
    int n = argc - optind - 1;
    if (!action_known(what) || !options_fit(what, o)) return CLI_USAGE;
    if (strcmp(what, "config") == 0) return cli_cache_config(n, argv + optind + 1, dir, o->dir_origin, o->fmt, remotes);
    if (strcmp(what, "list") == 0 || strcmp(what, "put") == 0 || strcmp(what, "trim") == 0)
        return cli_cache_more(what, n, argv + optind + 1, dir, o->fmt, o->older_than);
    bool exp = strcmp(what, "export") == 0, get = strcmp(what, "get") == 0;
    if (exp || strcmp(what, "import") == 0) return bundle_action(argc, argv, dir, o->output, remotes, exp, o->sign_unsigned);
    if (n != (get ? 1 : 0)) {
        cli_error(get ? "cache get: give exactly one key" : "cache %s: unexpected argument \"%s\"", what,
                  argv[optind + 1]);
        return CLI_USAGE;
    }
    return folder_action(what, get ? argv[optind + 1] : NULL, dir, o, remotes);
}
