/* cckey: the command-line front end. Each subcommand lives in its own file. */
#include "cli.h"

#include <string.h>

static const cli_command commands[] = {
    {"key", "print the key of one kernel", cli_cmd_key},
    {"batch", "print the keys of a JSON Lines manifest of tuples", cli_cmd_batch},
    {"scan", "find kernel entry points and write a manifest of them", cli_cmd_scan},
    {"warm", "compile a manifest's uncached kernels into a cache folder", cli_cmd_warm},
    {"cache", "stats, verify, clear or read a cache folder", cli_cmd_cache},
    {"devices", "list backends, devices and their manifest device ids", cli_cmd_devices},
    {"selftest", "check every backend's digests against the CPU reference", cli_cmd_selftest},
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
          "Run 'cckey help COMMAND' or 'cckey COMMAND --help' for a command's options.\n"
          "  -h, --help       show this help\n"
          "  -V, --version    show the version\n"
          "Exit status: 0 success, 2 bad usage or bad input, 1 any other failure.\n",
          f);
}

static const cli_command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(name, commands[i].name) == 0) return &commands[i];
    return NULL;
}

/* One line and a hint, never a help dump: a close command is named. */
static int unknown_command(const char *name)
{
    const char *known[sizeof commands / sizeof *commands];
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) known[i] = commands[i].name;
    const char *guess = cli_suggest(name, known, sizeof known / sizeof *known);
    if (guess) cli_error("unknown command \"%s\"; did you mean \"%s\"? (see 'cckey --help')", name, guess);
    else cli_error("unknown command \"%s\" (see 'cckey --help')", name);
    return CLI_USAGE;
}

/* cckey help [CMD]: the top-level help, or CMD --help. */
static int help(int argc, char **argv)
{
    if (argc < 3) {
        usage(stdout);
        return CLI_OK;
    }
    const cli_command *c = find_command(argv[2]);
    if (!c) return unknown_command(argv[2]);
    char *args[] = {(char *)c->name, (char *)"--help", NULL};
    return c->run(2, args);
}

int main(int argc, char **argv)
{
    cli_progress_guard_stdout();
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0) {
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(cmd, "help") == 0) return help(argc, argv);
    /* Before --version too: it says whether the drivers load. */
    if (cli_drivers_from_env() != CLI_OK) return CLI_USAGE;
    if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "--version") == 0) {
        return cli_print_version();
    }
    const cli_command *c = find_command(cmd);
    if (!c) return unknown_command(cmd);
    if (cli_check_isa_env() != CLI_OK) return CLI_USAGE;
    return c->run(argc - 1, argv + 1);
}
