/* cckey batch's command line: --help and the options, into batch_opts
 * (kept apart from cmd_batch.c, which is the run itself). */
#include "batch_args.h"
#include "manifest/manifest.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fputs("usage: cckey batch [OPTIONS] [MANIFEST | -]\n"
          "\n"
          "Print one key per tuple of a JSON Lines manifest, in input order. Each line is\n"
          "  {\"device\": S, \"name\": S, \"source\": S | \"source_file\": PATH,\n"
          "   \"options\": [[K, V], ...] | {K: V, ...}}\n"
          "Relative source_file paths resolve against the manifest's folder (the working\n"
          "directory for standard input). Blank lines are skipped.\n"
          "\n"
          "  -o, --output FILE     write FILE atomically, only if the whole batch succeeds\n"
          "                        (with --keep-going: bad lines included, each in its place)\n"
          "      --format FMT      text (default; also \"keys\"): one key a line;\n"
          "                        jsonl: {\"line\", \"key\", \"device_md5\", \"name_md5\",\n"
          "                        \"source_md5\", \"options_md5\"} a line; json: an array of them\n"
          "      --json            the same as --format json\n"
          "  -b, --backend B       auto (default), cpu, opencl or cuda\n"
          "  -j, --jobs N          host threads (default: all cores; --threads is the same)\n"
          "      --verify[=MODE]   recompute device digests on the CPU and replace wrong ones:\n"
          "                        all (default) or sample (46,052 drawn per chunk; a wrong one\n"
          "                        found makes it all); a warning names the device and count\n"
          "      --verify-seed N   the sample's seed (the warning prints the one used)\n"
          "  -k, --keep-going      report bad lines and go on; a bad tuple's output line is\n"
          "                        empty (keys) or {\"line\", \"error\"} (jsonl); exit 2 at the end\n"
          "      --chunk N         tuples per chunk (default: 4096 doubling up to 65536)\n"
          "      --max-line SIZE   refuse manifest lines longer than SIZE bytes (K, M, G\n"
          "                        suffixes; default 1G): exit 1, naming the line\n"
          "  -q, --quiet           no progress bar and no warnings\n"
          "  -h, --help            show this help\n"
          "\n"
          "Exit status: 0 success, 2 bad usage or bad input, 1 any other failure.\n",
          f);
}

enum { OPT_FORMAT = 256, OPT_VERIFY, OPT_CHUNK, OPT_MAX_LINE, OPT_JSON, OPT_SEED };

/* What the verify options said, checked once they are all read. */
typedef struct verify_args {
    bool seeded, sample;
} verify_args;

static int opt_format(batch_opts *o, const char *arg)
{
    cli_format fmt;
    if (strcmp(arg, "keys") == 0) fmt = CLI_TEXT;   /* its older name */
    else if (!cli_format_parse("batch", arg, CLI_FMT_ALL, &fmt)) return CLI_USAGE;
    o->jsonl = fmt != CLI_TEXT;
    o->json = fmt == CLI_JSON;
    return BATCH_RUN;
}

static int opt_backend(batch_opts *o, const char *arg)
{
    cckey_backend_kind kind;
    if (cckey_backend_from_name(arg, &kind) != CCKEY_OK) {
        cli_error("batch: %s", cckey_last_error());
        return CLI_USAGE;
    }
    cckey_batch_config_set_backend(o->cfg, kind);
    return BATCH_RUN;
}

static int opt_jobs(batch_opts *o, const char *arg)
{
    unsigned long v;
    if (!cli_parse_uint(arg, 1, 4096, &v)) {
        cli_error("batch: --jobs wants a number from 1 to 4096, not \"%s\"", arg);
        return CLI_USAGE;
    }
    cckey_batch_config_set_threads(o->cfg, (unsigned)v);
    o->threads = (unsigned)v;
    return BATCH_RUN;
}

static int opt_verify(batch_opts *o, const char *arg, verify_args *va)
{
    va->sample = arg && strcmp(arg, "sample") == 0;
    if (!arg || strcmp(arg, "all") == 0) cckey_batch_config_set_verify(o->cfg, CCKEY_VERIFY_ALL);
    else if (va->sample) cckey_batch_config_set_verify(o->cfg, CCKEY_VERIFY_SAMPLE);
    else {
        cli_error("batch: --verify takes all or sample, not \"%s\"", arg);
        return CLI_USAGE;
    }
    return BATCH_RUN;
}

static int opt_seed(batch_opts *o, const char *arg, verify_args *va)
{
    char *end;
    errno = 0;
    unsigned long long seed = strtoull(arg, &end, 10);
    if (!isdigit((unsigned char)arg[0]) || *end || errno) {
        cli_error("batch: --verify-seed wants a number from 0 to %llu, not \"%s\"", ULLONG_MAX, arg);
        return CLI_USAGE;
    }
    cckey_batch_config_set_verify_seed(o->cfg, seed);
    va->seeded = true;
    return BATCH_RUN;
}

static int opt_sizes(batch_opts *o, int c, const char *arg)
{
    if (c == OPT_CHUNK) {
        o->chunk_set = true;
        if (cli_parse_uint(arg, 1, 1ul << 26, &o->chunk)) return BATCH_RUN;
        cli_error("batch: --chunk wants a number from 1 to %lu, not \"%s\"", 1ul << 26, arg);
        return CLI_USAGE;
    }
    if (manifest_parse_max_line(arg, &o->max_line)) return BATCH_RUN;
    cli_error("batch: --max-line wants a size of at least 1K, such as 64M or 2G, not \"%s\"", arg);
    return CLI_USAGE;
}

/* One option of batch's command line (c as cli_getopt returned it). */
static int batch_option(batch_opts *o, int c, const char *arg, verify_args *va)
{
    switch (c) {
    case 'o': o->output = arg; return BATCH_RUN;
    case OPT_FORMAT: return opt_format(o, arg);
    case OPT_JSON: o->jsonl = o->json = true; return BATCH_RUN;
    case 'b': return opt_backend(o, arg);
    case 'j': return opt_jobs(o, arg);
    case OPT_VERIFY: return opt_verify(o, arg, va);
    case OPT_SEED: return opt_seed(o, arg, va);
    case OPT_CHUNK:
    case OPT_MAX_LINE: return opt_sizes(o, c, arg);
    case 'k': o->keep_going = true; return BATCH_RUN;
    case 'q': o->quiet = cli_quiet = true; return BATCH_RUN;
    case 'h': usage(stdout); return CLI_OK;
    default: return CLI_USAGE;
    }
}

/* The arguments as a whole: one manifest at most, a seed only for a
 * sample, and one seed for every chunk of the run, so that the one the
 * warning prints repeats the whole run. */
static int batch_check(batch_opts *o, const verify_args *va, int argc, char **argv)
{
    if (argc - optind > 1) {
        cli_error("batch: one manifest at most, got \"%s\" and \"%s\"", argv[optind], argv[optind + 1]);
        return CLI_USAGE;
    }
    if (va->seeded && !va->sample) {
        cli_error("batch: --verify-seed goes with --verify=sample");
        return CLI_USAGE;
    }
    if (va->sample && !va->seeded) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t seed = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^ (uint64_t)getpid() << 40;
        cckey_batch_config_set_verify_seed(o->cfg, seed % 1000000000000u);   /* short enough to retype */
    }
    o->input = optind < argc ? argv[optind] : "-";
    return BATCH_RUN;
}

int batch_args(int argc, char **argv, batch_opts *o)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"format", required_argument, NULL, OPT_FORMAT},
        {"json", no_argument, NULL, OPT_JSON},
        {"backend", required_argument, NULL, 'b'}, {"jobs", required_argument, NULL, 'j'},
        {"threads", required_argument, NULL, 'j'},
        {"verify", optional_argument, NULL, OPT_VERIFY}, {"verify-seed", required_argument, NULL, OPT_SEED},
        {"keep-going", no_argument, NULL, 'k'},
        {"chunk", required_argument, NULL, OPT_CHUNK}, {"quiet", no_argument, NULL, 'q'},
        {"max-line", required_argument, NULL, OPT_MAX_LINE},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    verify_args va = {false, false};
    int rc = BATCH_RUN, c;
    optind = 1;
    while (rc == BATCH_RUN && (c = cli_getopt("batch", argc, argv, "o:b:j:kqh", longopts)) != -1)
        rc = batch_option(o, c, optarg, &va);
    return rc == BATCH_RUN ? batch_check(o, &va, argc, argv) : rc;
}
