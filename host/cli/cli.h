/* The command-line tool's shared pieces. */
#ifndef CCKEY_CLI_H
#define CCKEY_CLI_H

#include "cckey.h"
#include "cckey_store.h"

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

int cli_cmd_key(int argc, char **argv);
int cli_cmd_batch(int argc, char **argv);
int cli_cmd_scan(int argc, char **argv);
int cli_cmd_warm(int argc, char **argv);
void cli_warm_usage(FILE *f);   /* warm --help (warm_help.c) */
void scan_usage(FILE *f);         /* scan --help (scan_help.c) */
int cli_cmd_cache(int argc, char **argv);
int cli_cmd_devices(int argc, char **argv);
int cli_cmd_selftest(int argc, char **argv);

/* Map the environment onto cfg: CCKEY_GPU_CHUNK_BYTES, CCKEY_GPU_LONG_BYTES,
 * CCKEY_GPU_CPU_SHARE, CCKEY_OPENCL_DEVICE, CCKEY_CUDA_DEVICE (and, in the
 * test build, CCKEY_FAULT_*). CLI_OK, or CLI_USAGE with the error printed. */
int cli_config_from_env(cckey_batch_config *cfg);
/* More of the environment for cli_config_from_env: NULL in the cckey
 * binary; the test CLI's own unit (host/testing/cli_faults.c) sets it
 * before main to map CCKEY_FAULT_* onto the test hooks, so the CLI's
 * sources are the same in both. False with the error printed. */
extern bool (*cli_env_hook)(cckey_batch_config *cfg);
/* Where drivers load from: CCKEY_OPENCL_LIBRARY, CCKEY_CUDA_LIBRARY (onto
 * cckey_set_driver_library), CCKEY_NVRTC_LIBRARY (warm's compiler) and
 * CUDA_HOME or CUDA_PATH (its toolkit headers, when none lie beside it), set
 * once at start-up. CLI_OK, or CLI_USAGE with the error printed. */
int cli_drivers_from_env(void);
/* CCKEY_FORCE_ISA, which the library reads itself and ignores when it names
 * no instruction set this CPU has: here that is an error (CLI_USAGE,
 * printed), as the README promises. CLI_OK when unset or in effect. */
int cli_check_isa_env(void);

/* The one entry of known[0..n) one edit (insertion, deletion, substitution,
 * neighbour swap) from word, or NULL when none or several are (suggest.c). */
const char *cli_suggest(const char *word, const char *const *known, size_t n);

/* ---- one grammar for every command (grammar.c) ---- */

/* -q/--quiet: no progress bar and no warnings, whatever the command. */
extern bool cli_quiet;

/* getopt_long with one-line errors and a hint instead of a help dump: an
 * unknown option (with the long option one edit away, if any), an option
 * missing its value, named as written. Returns '?' once it has said so. */
struct option;
int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts, const struct option *longopts);

/* --format text|json|jsonl (or --json): json is one document, jsonl one
 * object a line. allowed is a mask of CLI_FMT(f); false once it has said
 * why value is not one of them. */
typedef enum cli_format { CLI_TEXT = 0, CLI_JSON = 1, CLI_JSONL = 2 } cli_format;
#define CLI_FMT(f) (1u << (f))
#define CLI_FMT_ALL (CLI_FMT(CLI_TEXT) | CLI_FMT(CLI_JSON) | CLI_FMT(CLI_JSONL))
bool cli_format_parse(const char *cmd, const char *value, unsigned allowed, cli_format *out);
/* A compiler's log on stderr, each line indented, cut after 40 lines. */
void cli_put_log(const char *log);

/* Split a set of flags as sh would split a command line: separated by
 * white space or commas; '...' literal; "..." with \" and \\; \ escapes
 * one character. fn gets each word (NUL-terminated; len excludes the NUL).
 * 0, or -1 with why (an unterminated quote, out of memory). */
typedef int (*cli_flag_fn)(void *user, const char *word, size_t len);
int cli_split_flags(const char *text, cli_flag_fn fn, void *user, char *why, size_t why_len);

/* An option set as pairs that own their bytes (options.c). */
typedef struct cli_opts {
    cckey_option *v;
    size_t n, cap;
} cli_opts;
void cli_opts_free(cli_opts *o);
/* Append one pair (user is the cli_opts): 0, or -1 out of memory. */
int cli_opts_add(void *user, const char *k, size_t kl, const char *v, size_t vl);
/* Append the pairs of an option set written as flags (-O of key and scan):
 * split as cli_split_flags does, then each flag that takes an argument
 * paired with it, as warm.h describes (-I dir, -Idir -> ["-I", "dir"];
 * -DN=4 -> ["-D", "N=4"]; -cl-std=CL2.0 -> ["-cl-std", "CL2.0"]; a bare
 * flag -> [flag, ""]). "", only blanks, or "-" alone is the empty set. CLI_OK;
 * CLI_USAGE with why (a bad quote, a flag missing its argument); CLI_FAIL
 * when out of memory. */
int cli_opts_parse(const char *text, cli_opts *out, char *why, size_t why_len);

/* The cache folder: given (--cache-dir) if not NULL, else $CCKEY_CACHE_DIR,
 * else $XDG_CACHE_HOME/cckey, else ~/.cache/cckey (in buf); NULL when there
 * is no home folder either (cache_dir.c). */
const char *cli_cache_dir(const char *given, char *buf, size_t len);

/* cache list, put and trim (cache_more.c): argv holds the action's n
 * arguments; dir is the folder (NULL: none could be found); older_than:
 * trim --older-than's AGE, or NULL. */
int cli_cache_more(const char *what, int n, char **argv, const char *dir, cli_format fmt, const char *older_than);
/* cache stats (cache_stats.c): shown in fmt, or, with zero, zeroed. */
int cli_cache_stats(cckey_store *s, const char *dir, cli_format fmt, bool zero);

/* cckey --version (version.c). */
int cli_print_version(void);

/* "cckey: " + message + newline on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The length of the well-formed UTF-8 sequence at s (n bytes left), or 0. */
size_t cli_utf8_len(const unsigned char *s, size_t n);
/* Whether s is well-formed UTF-8 (what JSON text must be). */
bool cli_utf8_ok(const char *s);
bool cli_utf8_okn(const char *s, size_t n);   /* s[0..n); s may be NULL when n is 0 */
/* s with each byte that is not part of well-formed UTF-8 written as \xNN,
 * into buf (truncated to cap); returns buf. For messages that go into JSON. */
const char *cli_utf8_escape(const char *s, char *buf, size_t cap);

/* A size as cckey_size_parse reads it (500M, 10G, 1TiB), in [lo, hi]. */
bool cli_parse_size(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);

/* Parse a decimal count in [lo, hi]; false on anything else. */
bool cli_parse_uint(const char *s, unsigned long lo, unsigned long hi, unsigned long *out);

/* An output: stdout, a regular FILE written atomically (a temporary file
 * beside it, renamed over it only on cli_output_commit; a symlink's target
 * is what gets replaced), or a device, FIFO or /dev/fd/N written in place.
 * Opening one also arranges that SIGINT, SIGTERM, SIGHUP and SIGPIPE
 * remove the temporary file before the process dies of them. */
typedef struct cli_output {
    FILE *f;
    char *path;   /* NULL for stdout */
    char *tmp;    /* NULL for stdout and for outputs written in place */
} cli_output;
int cli_output_open(cli_output *o, const char *path);   /* 0 or -1 (error printed) */
int cli_output_commit(cli_output *o);                   /* 0 or -1 (error printed) */
void cli_output_abort(cli_output *o);                   /* removes the temporary */

/* A whole file's bytes, mapped read-only; or read into memory where the
 * size cannot be trusted (st_size 0, as /proc and /sys files say) or the
 * file cannot be mapped. While a file is mapped, a SIGBUS (it shrank) is
 * a clear error and exit 1 instead of a crash. */
typedef struct cli_file {
    const void *ptr;
    size_t len;
    void *map;     /* munmap target, NULL when nothing is mapped */
    void *heap;    /* free target for a file read into memory */
} cli_file;
/* The SIGBUS guard: cli_file_map calls these; so may other mappers. */
void cli_mapped_enter(void);
void cli_mapped_leave(void);
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
    const char *unit;   /* what items counts: "items" unless set ("tuples", "keys") */
    uint64_t items_total;   /* the items there are, when known: "12/46 tuples"; 0 unknown */
} cli_progress;
void cli_progress_init(cli_progress *p, const char *what);
/* done/total in units; total 0 when unknown. */
void cli_progress_update(cli_progress *p, uint64_t done, uint64_t total, uint64_t items);
void cli_progress_finish(cli_progress *p);
double cli_now(void);
/* Clear the bar now on the terminal, if any (before other output). */
void cli_progress_interrupt(void);
/* Route standard output through a stream that clears the bar first, when
 * standard output and standard error are terminals (main, once). */
void cli_progress_guard_stdout(void);

#endif
