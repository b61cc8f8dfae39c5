/* cckey key: one key from the command line. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: cckey key --device D --name N (--source S | --source-file F) [-O KEY=VALUE]...\n"
          "\n"
          "Print the compile-cache key of one kernel.\n"
          "\n"
          "  -d, --device D        device identity, e.g. \"NVIDIA H200|580.159.04\"\n"
          "  -n, --name N          kernel entry-point name\n"
          "  -s, --source S        kernel source text\n"
          "  -f, --source-file F   read the source from F (\"-\" is standard input)\n"
          "  -O, --option K=V      a build option; repeat for more (split at the first '=')\n"
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

int cckey_cmd_key(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"device", required_argument, NULL, 'd'}, {"name", required_argument, NULL, 'n'},
        {"source", required_argument, NULL, 's'}, {"source-file", required_argument, NULL, 'f'},
        {"option", required_argument, NULL, 'O'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *device = NULL, *name = NULL, *source = NULL, *source_file = NULL;
    cckey_option *opts = calloc((size_t)argc, sizeof *opts);
    size_t n_opts = 0;
    int rc = CLI_USAGE, c;
    if (!opts) {
        cli_error("out of memory");
        return CLI_FAIL;
    }
    optind = 1;
    while ((c = getopt_long(argc, argv, "d:n:s:f:O:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'd': device = optarg; break;
        case 'n': name = optarg; break;
        case 's': source = optarg; break;
        case 'f': source_file = optarg; break;
        case 'O': {
            char *eq = strchr(optarg, '=');
            if (!eq) {
                cli_error("key: -O wants KEY=VALUE, got \"%s\"", optarg);
                goto out;
            }
            opts[n_opts++] = (cckey_option){{optarg, (size_t)(eq - optarg)}, {eq + 1, strlen(eq + 1)}};
            break;
        }
        case 'h': usage(stdout); rc = CLI_OK; goto out;
        default: usage(stderr); goto out;
        }
    }
    if (optind < argc) {
        cli_error("key: unexpected argument \"%s\"", argv[optind]);
        goto out;
    }
    if (!device || !name || (!source == !source_file)) {
        cli_error("key: --device, --name and exactly one of --source or --source-file are required");
        usage(stderr);
        goto out;
    }
    cli_file file = {0};
    char *stdin_buf = NULL;
    cckey_bytes src = {source, source ? strlen(source) : 0};
    if (source_file && strcmp(source_file, "-") == 0) {
        errno = 0;
        stdin_buf = slurp_stdin(&src.len);
        if (!stdin_buf) {
            cli_error("key: cannot read standard input: %s", errno ? strerror(errno) : "out of memory");
            rc = CLI_FAIL;
            goto out;
        }
        src.ptr = stdin_buf;
    } else if (source_file) {
        char why[256];
        if (cli_file_map(source_file, &file, why, sizeof why) != 0) {
            cli_error("key: %s: %s", source_file, why);
            goto out;
        }
        src = (cckey_bytes){file.ptr, file.len};
    }
    char key[CCKEY_KEY_LEN + 1];
    cckey_status st = cckey_make_key(key, (cckey_bytes){device, strlen(device)}, (cckey_bytes){name, strlen(name)},
                                     src, opts, n_opts);
    cli_file_unmap(&file);
    free(stdin_buf);
    if (st != CCKEY_OK) {
        cli_error("key: %s: %s", cckey_strerror(st), cckey_last_error());
        rc = CLI_FAIL;
        goto out;
    }
    puts(key);
    rc = fflush(stdout) == 0 ? CLI_OK : CLI_FAIL;
out:
    free(opts);
    return rc;
}
