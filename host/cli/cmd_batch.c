/* cckey batch: keys for every tuple of a manifest, streamed in bounded
 * chunks so that manifests larger than memory work. */
#include "manifest.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define DEFAULT_CHUNK_LINES 65536
#define CHUNK_BYTES (1ull << 30)   /* bytes of sources held (mapped) per chunk */

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
          "      --format FMT      keys (default): one key a line;\n"
          "                        jsonl: {\"line\", \"key\", \"device_md5\", \"name_md5\",\n"
          "                        \"source_md5\", \"options_md5\"} a line\n"
          "  -b, --backend B       auto (default), cpu, opencl or cuda\n"
          "  -j, --threads N       host threads (default: all cores)\n"
          "      --verify[=MODE]   recompute device digests on the CPU: all (default) or sample\n"
          "  -k, --keep-going      report bad lines and go on; a bad tuple's output line is\n"
          "                        empty (keys) or {\"line\", \"error\"} (jsonl); exit 2 at the end\n"
          "      --chunk N         tuples per chunk (default 65536)\n"
          "  -q, --quiet           no progress bar\n"
          "  -h, --help            show this help\n"
          "\n"
          "Exit status: 0 success, 2 bad usage or bad input, 1 any other failure.\n",
          f);
}

typedef struct slot {
    manifest_item item;
    char *error;   /* set for a bad line kept with --keep-going */
} slot;

typedef struct batch_progress {
    cli_progress bar;
    size_t items;   /* tuples read so far */
} batch_progress;

/* Within one chunk the library reports bytes digested; between chunks the
 * manifest position is the better measure. Both feed the same bar. */
static void on_progress(void *user, uint64_t done, uint64_t total)
{
    batch_progress *p = user;
    cli_progress_update(&p->bar, done, total, p->items);
}

typedef struct batch_opts {
    const char *input, *output;
    bool jsonl, keep_going, quiet;
    unsigned long chunk;
    cckey_batch_config *cfg;
} batch_opts;

static void write_result(FILE *out, const batch_opts *o, const slot *s, const char *key)
{
    if (!o->jsonl) {
        fputs(s->error ? "" : key, out);
        fputc('\n', out);
        return;
    }
    if (s->error) {
        json_t *j = json_string(s->error);
        char *txt = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
        fprintf(out, "{\"line\": %zu, \"error\": %s}\n", s->item.line, txt ? txt : "\"out of memory\"");
        free(txt);
        json_decref(j);
        return;
    }
    fprintf(out,
            "{\"line\": %zu, \"key\": \"%s\", \"device_md5\": \"%.32s\", \"name_md5\": \"%.32s\", "
            "\"source_md5\": \"%.32s\", \"options_md5\": \"%.32s\"}\n",
            s->item.line, key, key, key + 33, key + 66, key + 99);
}

/* Make and write the keys of one chunk. */
static int flush_chunk(const batch_opts *o, FILE *out, slot *slots, size_t n, cckey_tuple *tuples,
                       char (*keys)[CCKEY_KEY_LEN + 1], size_t *warned)
{
    size_t good = 0;
    for (size_t i = 0; i < n; i++)
        if (!slots[i].error) tuples[good++] = slots[i].item.tuple;
    cckey_status st = cckey_make_keys(keys, tuples, good, o->cfg);
    if (st != CCKEY_OK) {
        cli_error("batch: %s: %s", cckey_strerror(st), cckey_last_error());
        return -1;
    }
    const char *warning = cckey_batch_config_warning(o->cfg);
    if (*warning && !(*warned)++) cli_warn("%s", warning);
    for (size_t i = 0, k = 0; i < n; i++) write_result(out, o, &slots[i], slots[i].error ? NULL : keys[k++]);
    return 0;
}

static int run(const batch_opts *o)
{
    manifest m;
    if (manifest_open(&m, o->input) != 0) return CLI_USAGE;
    cli_output out;
    if (cli_output_open(&out, o->output) != 0) {
        manifest_close(&m);
        return CLI_FAIL;
    }
    uint64_t input_size = 0;
    struct stat st;
    if (fstat(fileno(m.f), &st) == 0 && S_ISREG(st.st_mode)) input_size = (uint64_t)st.st_size;

    slot *slots = calloc(o->chunk, sizeof *slots);
    cckey_tuple *tuples = calloc(o->chunk, sizeof *tuples);
    char (*keys)[CCKEY_KEY_LEN + 1] = calloc(o->chunk, sizeof *keys);
    manifest_files files = {0};
    batch_progress prog;
    cli_progress *bar = &prog.bar;
    cli_progress_init(bar, "batch");
    prog.items = 0;
    if (o->quiet) bar->enabled = false;
    if (bar->enabled) cckey_batch_config_set_progress(o->cfg, on_progress, &prog);
    int rc = CLI_OK;
    size_t n = 0, bad = 0, total = 0, warned = 0;
    uint64_t inline_bytes = 0;
    char err[1024];
    if (!slots || !tuples || !keys) {
        cli_error("batch: out of memory");
        rc = CLI_FAIL;
        goto out;
    }
    for (;;) {
        int r = manifest_next(&m, &slots[n].item, &files, err, sizeof err);
        if (r == MANIFEST_IO) {
            cli_error("%s", err);
            rc = CLI_FAIL;
            break;
        }
        if (r == MANIFEST_BAD) {
            cli_progress_finish(bar);
            fprintf(stderr, "%s\n", err);
            bad++;
            if (!o->keep_going) {
                rc = CLI_USAGE;
                break;
            }
            slots[n].item.line = m.line;
            slots[n].error = strdup(strchr(err, ' ') ? strchr(err, ' ') + 1 : err);
            if (!slots[n].error) {
                rc = CLI_FAIL;
                break;
            }
        }
        if (r == MANIFEST_ITEM) {
            inline_bytes += slots[n].item.tuple.source.len;
            total++;
            prog.items = total;
        }
        if (r != MANIFEST_EOF) n++;
        if (n && (r == MANIFEST_EOF || n == o->chunk || inline_bytes + files.bytes >= CHUNK_BYTES)) {
            if (flush_chunk(o, out.f, slots, n, tuples, keys, &warned) != 0) {
                rc = CLI_FAIL;
                break;
            }
            for (size_t i = 0; i < n; i++) {
                manifest_item_clear(&slots[i].item);
                free(slots[i].error);
                slots[i].error = NULL;
            }
            manifest_files_clear(&files);
            n = 0;
            inline_bytes = 0;
            prog.items = total;
            cli_progress_update(bar, (uint64_t)ftello(m.f), input_size, total);
        }
        if (r == MANIFEST_EOF) break;
    }
    cli_progress_finish(bar);
    if (rc == CLI_OK && bad) {
        cli_error("batch: %zu bad line%s (keys for the other %zu tuples were written)", bad, bad == 1 ? "" : "s",
                  total);
        rc = CLI_USAGE;
    }
    /* -o only ever holds a complete batch: any failure leaves no file. */
    if (rc == CLI_OK || (o->keep_going && rc == CLI_USAGE && !out.path)) {
        if (cli_output_commit(&out) != 0) rc = CLI_FAIL;
    } else {
        cli_output_abort(&out);
    }
out:
    for (size_t i = 0; slots && i < n; i++) {
        manifest_item_clear(&slots[i].item);
        free(slots[i].error);
    }
    if (out.f || out.path) cli_output_abort(&out);
    manifest_files_clear(&files);
    free(slots), free(tuples), free(keys);
    manifest_close(&m);
    return rc;
}

int cckey_cmd_batch(int argc, char **argv)
{
    enum { OPT_FORMAT = 256, OPT_VERIFY, OPT_CHUNK };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"format", required_argument, NULL, OPT_FORMAT},
        {"backend", required_argument, NULL, 'b'}, {"threads", required_argument, NULL, 'j'},
        {"verify", optional_argument, NULL, OPT_VERIFY}, {"keep-going", no_argument, NULL, 'k'},
        {"chunk", required_argument, NULL, OPT_CHUNK}, {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    batch_opts o = {.chunk = DEFAULT_CHUNK_LINES};
    if (cckey_batch_config_new(&o.cfg) != CCKEY_OK) {
        cli_error("out of memory");
        return CLI_FAIL;
    }
    int rc = CLI_USAGE, c;
    unsigned long v;
    cckey_backend_kind kind;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:b:j:kqh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': o.output = optarg; break;
        case OPT_FORMAT:
            if (strcmp(optarg, "keys") && strcmp(optarg, "jsonl")) {
                cli_error("batch: --format must be keys or jsonl, not \"%s\"", optarg);
                goto out;
            }
            o.jsonl = strcmp(optarg, "jsonl") == 0;
            break;
        case 'b':
            if (cckey_backend_from_name(optarg, &kind) != CCKEY_OK) {
                cli_error("batch: %s", cckey_last_error());
                goto out;
            }
            cckey_batch_config_set_backend(o.cfg, kind);
            break;
        case 'j':
            if (!cli_parse_uint(optarg, 1, 4096, &v)) {
                cli_error("batch: --threads wants a number from 1 to 4096, not \"%s\"", optarg);
                goto out;
            }
            cckey_batch_config_set_threads(o.cfg, (unsigned)v);
            break;
        case OPT_VERIFY:
            if (!optarg || strcmp(optarg, "all") == 0) cckey_batch_config_set_verify(o.cfg, CCKEY_VERIFY_ALL);
            else if (strcmp(optarg, "sample") == 0) cckey_batch_config_set_verify(o.cfg, CCKEY_VERIFY_SAMPLE);
            else {
                cli_error("batch: --verify takes all or sample, not \"%s\"", optarg);
                goto out;
            }
            break;
        case OPT_CHUNK:
            if (!cli_parse_uint(optarg, 1, 1ul << 26, &o.chunk)) {
                cli_error("batch: --chunk wants a number from 1 to %lu, not \"%s\"", 1ul << 26, optarg);
                goto out;
            }
            break;
        case 'k': o.keep_going = true; break;
        case 'q': o.quiet = true; break;
        case 'h': usage(stdout); rc = CLI_OK; goto out;
        default: usage(stderr); goto out;
        }
    }
    if (argc - optind > 1) {
        cli_error("batch: one manifest at most, got \"%s\" and \"%s\"", argv[optind], argv[optind + 1]);
        goto out;
    }
    o.input = optind < argc ? argv[optind] : "-";
    rc = run(&o);
out:
    cckey_batch_config_free(o.cfg);
    return rc;
}
