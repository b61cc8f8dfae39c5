/* The command-line tool's shared pieces. */
#ifndef CCKEY_CLI_H
#define CCKEY_CLI_H

#include "cckey.h"

#include <stdbool.h>
#include <stdio.h>

/* Exit statuses: 2 for bad usage or bad input, 1 for any other failure. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

/* Each subcommand: argv[0] is the subcommand's name. */
typedef struct cli_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} cli_command;

int cckey_cmd_key(int argc, char **argv);
int cckey_cmd_batch(int argc, char **argv);
int cckey_cmd_scan(int argc, char **argv);
int cckey_cmd_warm(int argc, char **argv);
int cckey_cmd_cache(int argc, char **argv);
int cckey_cmd_devices(int argc, char **argv);
int cckey_cmd_selftest(int argc, char **argv);

/* The one entry of known[0..n) one edit (insertion, deletion, substitution,
 * neighbour swap) from word, or NULL when none or several are (suggest.c). */
const char *cli_suggest(const char *word, const char *const *known, size_t n);

/* cckey --version (version.c). */
int cli_print_version(void);

/* "cckey: " + message + newline on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parse a decimal count in [lo, hi]; false on anything else. */
bool cli_parse_uint(const char *s, unsigned long lo, unsigned long hi, unsigned long *out);

/* An output that is either stdout or FILE written atomically: a temporary
 * file beside it, renamed over it only on cli_output_commit. */
typedef struct cli_output {
    FILE *f;
    char *path;   /* NULL for stdout */
    char *tmp;
} cli_output;
int cli_output_open(cli_output *o, const char *path);   /* 0 or -1 (error printed) */
int cli_output_commit(cli_output *o);                   /* 0 or -1 (error printed) */
void cli_output_abort(cli_output *o);                   /* removes the temporary */

/* A whole file's bytes, mapped read-only (or empty). */
typedef struct cli_file {
    const void *ptr;
    size_t len;
    void *map;     /* munmap target, NULL when nothing is mapped */
} cli_file;
/* 0 on success; otherwise -1 and why (strerror-like text) in why. */
int cli_file_map(const char *path, cli_file *f, char *why, size_t why_len);
void cli_file_unmap(cli_file *f);

/* A progress bar on stderr, drawn only when stderr is a terminal and the
 * work has run for a while. */
typedef struct cli_progress {
    bool enabled, drawn;
    double start, last;
    const char *what;
    const char *note;   /* shown after the counts when not NULL, e.g. "3 compiled, 1 failed" */
} cli_progress;
void cli_progress_init(cli_progress *p, const char *what);
/* done/total in units; total 0 when unknown. */
void cli_progress_update(cli_progress *p, uint64_t done, uint64_t total, uint64_t items);
void cli_progress_finish(cli_progress *p);
double cli_now(void);

#endif
