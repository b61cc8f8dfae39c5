/* cckey warm: compile every tuple of a manifest whose key is not cached yet,
 * with the real compiler for its device, and store the binaries under their
 * keys. Tuples that share device, source and options share one build.
 * This file is the wiring: the options, the store and the order of the
 * steps; the steps are host/cli/warm/plan.c, run.c and report.c. */
#include "cli.h"
#include "remote_opts.h"
#include "warm/warm_run.h"
#include "warm/warm_vulkan.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void clear(warm *w, manifest_files *files)
{
    for (size_t i = 0; i < w->n; i++) {
        manifest_item_clear(&w->t[i].item);
        free(w->t[i].why);
        free(w->t[i].miss_detail);
        free(w->t[i].root);
    }
    for (size_t i = 0; i < w->n_groups; i++) free(w->g[i].members), free(w->g[i].log);
    free(w->t), free(w->g), free(w->deferred);
    manifest_files_clear(files);
}

/* Read, key and look up; with --check, report; else group, build, report. */
static int run(warm *w, unsigned jobs, bool quiet)
{
    manifest_files files = {0};
    int rc = warm_load(w, &files);
    if (rc == CLI_OK) rc = warm_keys(w);
    if (rc != CLI_OK) goto out;
    warm_look_up_all(w, jobs);
    if (w->check) {
        rc = warm_report_check(w);
        goto out;
    }
    if (warm_plan(w) != 0) {
        cli_error("warm: out of memory");
        rc = CLI_FAIL;
        goto out;
    }
    warm_build_all(w, jobs, quiet);
    /* A duplicate shares the fate of the tuple that stands for it. */
    for (size_t i = 0; i < w->n; i++) {
        const tuple *rep = &w->t[w->t[i].dup_of];
        if (w->t[i].state == T_DUPLICATE && rep->state == T_FAILED)
            warm_fail(&w->t[i], "%s", rep->why ? rep->why : "failed");
    }
    warm_mark_evicted(w);
    char note[1400];
    if (warm_deps_report(&w->deps, note, sizeof note)) cli_warn("%s", note);
    rc = warm_summary(w);
out:
    clear(w, &files);
    return rc;
}

/* After the options: check them, open the store with its remotes, run. */
/* The handles: --check looks up through a read-only one, so nothing is
 * written, locally or remotely; --force --format jsonl looks up (the local
 * folder only) through a read-only one, to say what it replaces. */
static int open_store(warm *w, const char *dir, uint64_t max_bytes, cli_remotes *remotes)
{
    char why[512];
    if (warm_deps_init(&w->deps, w->deps_mode, w->pp, why, sizeof why) != 0) {
        cli_error("warm: %s", why);
        return CLI_USAGE;
    }
    cckey_status st = w->check ? cckey_store_open_read_only(&w->store, dir) : cckey_store_open(&w->store, dir, max_bytes);
    if (st == CCKEY_OK && w->force && w->fmt == CLI_JSONL) st = cckey_store_open_read_only(&w->probe, dir);
    else if (!w->force) w->probe = w->store;
    if (st != CCKEY_OK || cckey_dep_memo_new(&w->memo) != CCKEY_OK) {
        cli_error("warm: %s", cckey_last_error());
        return CLI_FAIL;
    }
    /* Claims and the folder-only handle that looks behind them; without
     * either, builds go on unclaimed, as they would on a folder that takes
     * no locks. */
    if (!w->check && cckey_store_open_read_only(&w->local, dir) != CCKEY_OK) w->local = NULL;
    w->claims.off = true;
    if (!w->check && w->local) warm_claims_init(&w->claims, dir);
    return cli_remotes_attach(remotes, w->store, dir, "warm");
}

static int start(int argc, char **argv, const char *dir, uint64_t max_bytes, unsigned jobs, bool quiet,
                 const char *shard, unsigned shards, size_t max_line, cli_remotes *remotes, cli_format fmt,
                 bool verbose, bool check, bool force, const warm *deps_opts)
{
    if (argc - optind != 1) {
        cli_error("warm: give exactly one manifest (see 'cckey warm --help')");
        return CLI_USAGE;
    }
    if (!dir || !*dir) {
        cli_error("warm: no cache folder: give --cache-dir DIR (or set CCKEY_CACHE_DIR or HOME)");
        return CLI_USAGE;
    }
    /* PoCL would keep its own copy of every program warm builds (its kernel
     * cache: 968 KB beside a 1,692 KB store for the example suite), which
     * the store makes redundant. PoCL reads only the environment, before it
     * loads. NVRTC has no such cache, and warm loads no module into the
     * driver, so the CUDA JIT cache is never touched. */
    setenv("POCL_KERNEL_CACHE", "0", 0);
    warm w = {.manifest = argv[optind], .max_line = max_line, .have_opencl = -1, .have_cuda = -1, .have_glsl = -1,
              .have_hlsl = -1, .fmt = fmt, .verbose = verbose, .check = check, .force = force,
              .deps_mode = deps_opts->deps_mode, .pp = deps_opts->pp, .defer_mu = PTHREAD_MUTEX_INITIALIZER};
    char why[512];
    if (shards && !shard) {
        cli_error("warm: --shards is for --shard auto");
        return CLI_USAGE;
    }
    if (shard && cli_shard_parse(shard, shards, &w.shard, why, sizeof why) != 0) {
        cli_error("warm: %s", why);
        return CLI_USAGE;
    }
    int rc = open_store(&w, dir, max_bytes, remotes);
    if (rc == CLI_OK) {
        if (!jobs) {
            long n = sysconf(_SC_NPROCESSORS_ONLN);
            jobs = n > 0 ? (unsigned)n : 1;
        }
        rc = run(&w, jobs, quiet);
        if (fmt == CLI_TEXT) cli_remotes_report(w.store, "warm");
    }
    /* The Vulkan devices go before exit: lavapipe frees what it keeps per
     * pipeline only with its device. */
    if (w.have_glsl > 0 || w.have_hlsl > 0) warm_vulkan_release();
    cckey_dep_memo_free(w.memo);
    warm_deps_end(&w.deps);
    if (w.probe != w.store) cckey_store_close(w.probe);
    cckey_store_close(w.local);
    pthread_mutex_destroy(&w.defer_mu);
    cckey_store_close(w.store);
    return rc;
}

int cli_cmd_warm(int argc, char **argv)
{
    enum { OPT_DIR = 256, OPT_MAX, OPT_SHARD, OPT_SHARDS, OPT_MAX_LINE, OPT_FORMAT, OPT_JSON, OPT_CHECK, OPT_FORCE,
           OPT_DEPS, OPT_PP };
    static const struct option longopts[] = {
        {"cache-dir", required_argument, NULL, OPT_DIR}, {"max-size", required_argument, NULL, OPT_MAX},
        {"jobs", required_argument, NULL, 'j'},          {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},             {"help", no_argument, NULL, 'h'},
        {"shard", required_argument, NULL, OPT_SHARD},   {"shards", required_argument, NULL, OPT_SHARDS},
                {"format", required_argument, NULL, OPT_FORMAT}, {"json", no_argument, NULL, OPT_JSON},
        {"check", no_argument, NULL, OPT_CHECK},         {"force", no_argument, NULL, OPT_FORCE},
        CLI_REMOTE_LONGOPTS,                             {"max-line", required_argument, NULL, OPT_MAX_LINE},
        {"deps", required_argument, NULL, OPT_DEPS},     {"preprocessor", required_argument, NULL, OPT_PP},
        {NULL, 0, NULL, 0}};
    const char *dir = NULL;
    char default_dir[4096];
    cli_format fmt = CLI_TEXT;
    uint64_t max_bytes = 0;
    unsigned long jobs = 0;
    bool quiet = false, verbose = false, check = false, force = false;
    const char *shard = NULL;
    unsigned long shards = 0;
    cli_remotes remotes = {0};
    warm deps_opts = {.deps_mode = WARM_DEPS_AUTO};
    int c, taken;
    size_t max_line = MANIFEST_DEFAULT_MAX_LINE;
    optind = 1;
    while ((c = cli_getopt("warm", argc, argv, "j:qvh", longopts)) != -1) {
        if ((taken = cli_remotes_option(&remotes, c, optarg)) != 0) {
            if (taken > 0) continue;
            cli_remotes_free(&remotes);
            cli_error("warm: out of memory");
            return CLI_FAIL;
        }
        switch (c) {
        case OPT_SHARD: shard = optarg; break;
        case OPT_SHARDS:
            if (!cli_parse_uint(optarg, 1, 1000000, &shards)) {
                cli_error("warm: --shards wants a number from 1 to 1000000, not \"%s\"", optarg);
                cli_remotes_free(&remotes);
                return CLI_USAGE;
            }
            break;
        case OPT_DIR: dir = optarg; break;
        case OPT_MAX:
            if (cckey_size_parse(optarg, &max_bytes) != CCKEY_OK || max_bytes == 0) {
                cli_error("warm: --max-size wants a size such as 500M or 2G, not \"%s\"", optarg);
                return CLI_USAGE;
            }
            break;
        case OPT_MAX_LINE:
            if (!manifest_parse_max_line(optarg, &max_line)) {
                cli_error("warm: --max-line wants a size of at least 1K, such as 64M or 2G, not \"%s\"", optarg);
                return CLI_USAGE;
            }
            break;
        case 'j':
            if (!cli_parse_uint(optarg, 1, 1024, &jobs)) {
                cli_error("warm: --jobs wants a number from 1 to 1024, not \"%s\"", optarg);
                return CLI_USAGE;
            }
            break;
        case 'q': quiet = cli_quiet = true; break;
        case 'v': verbose = true; break;
        case OPT_FORMAT:
            if (!cli_format_parse("warm", optarg, CLI_FMT_ALL, &fmt)) {
                cli_remotes_free(&remotes);
                return CLI_USAGE;
            }
            break;
        case OPT_JSON: fmt = CLI_JSON; break;
        case OPT_CHECK: check = true; break;
        case OPT_FORCE: force = true; break;
        case OPT_DEPS:
            if (!warm_deps_mode_parse(optarg, &deps_opts.deps_mode)) {
                cli_error("warm: --deps wants auto, text or preprocessor, not \"%s\"", optarg);
                cli_remotes_free(&remotes);
                return CLI_USAGE;
            }
            break;
        case OPT_PP: deps_opts.pp = optarg; break;
        case 'h': cli_remotes_free(&remotes); cli_warm_usage(stdout); return CLI_OK;
        default: cli_remotes_free(&remotes); return CLI_USAGE;
        }
    }
    if (check && force) {
        cli_error("warm: --check compiles nothing and --force compiles everything: give one of them");
        cli_remotes_free(&remotes);
        return CLI_USAGE;
    }
    dir = cli_cache_dir(dir, default_dir, sizeof default_dir);
    int rc = start(argc, argv, dir, max_bytes, (unsigned)jobs, quiet, shard, (unsigned)shards, max_line, &remotes,
                   fmt, verbose, check, force, &deps_opts);
    cli_remotes_free(&remotes);
    return rc;
}
