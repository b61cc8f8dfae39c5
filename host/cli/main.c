/* cckey: the command-line front end. Each subcommand lives in its own file. */
#include "cli.h"

#include <string.h>

static const cli_command commands[] = {
    {"key", "print the key of one kernel", cckey_cmd_key},
    {"batch", "print the keys of a JSON Lines manifest of tuples", cckey_cmd_batch},
    {"scan", "find kernel entry points and write a manifest of them", cckey_cmd_scan},
    {"warm", "compile a manifest's uncached kernels into a cache folder", cckey_cmd_warm},
    {"cache", "stats, verify, clear or read a cache folder", cckey_cmd_cache},
    {"devices", "list backends, devices and their manifest device ids", cckey_cmd_devices},
    {"selftest", "check every backend's digests against the CPU reference", cckey_cmd_selftest},
};

static void usage(FILE *f)
{
    fputs("usage: cckey COMMAND [ARGS]...\n"
          "\n"
          "Standardized compile-cache keys for GPU kernels:\n"
          "  hex(md5(device)):hex(md5(name)):hex(md5(source)):hex(md5(canon(options)))\n"
          "\n"
          "Commands:\n",
          f);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fputs("\n"
          "Run 'cckey COMMAND --help' for a command's options.\n"
          "  -h, --help       show this help\n"
          "  -V, --version    show the version\n"
          "Exit status: 0 success, 2 bad usage or bad input, 1 any other failure.\n",
          f);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "--version") == 0) {
        printf("cckey %s\n", cckey_version());
        return CLI_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(cmd, commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
    cli_error("unknown command \"%s\" (see 'cckey --help')", cmd);
    return CLI_USAGE;
}
