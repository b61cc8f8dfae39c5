/* `cckey scan --exact`: the entry points as the compilers themselves see
 * them, per file and option set, with the compiler runs in parallel. */
#ifndef CCKEY_CLI_SCAN_EXACT_H
#define CCKEY_CLI_SCAN_EXACT_H

#include "cckey.h"
#include "../scan/scan.h"

#include <stdbool.h>
#include <stddef.h>

/* One option set, as the key reads it. */
typedef struct scan_exact_set {
    cckey_option *opts;
    size_t n;
} scan_exact_set;

/* One file's entry points: entries sorted by line (line 0 when the source
 * shows no definition by that name, e.g. a name pasted by a macro), each
 * with the option sets whose build holds it (in_set[e * n_sets + s]). */
typedef struct scan_exact_file {
    scan_result r;
    bool *in_set;
    bool text;   /* string-held programs and no device to build them: list the text scan's */
} scan_exact_file;

typedef struct scan_exact_in {
    const scan_source_list *files;
    const scan_exact_set *sets;
    size_t n_sets;
    const char *const *macros;   /* --kernel-macro, to find each entry's line */
    size_t n_macros;
    unsigned jobs;               /* compiler runs at once; 0: the number of cores */
    const char *nvcc;            /* NULL: found on PATH or in /usr/local/cuda/bin;
                                    "none": NVRTC builds CUDA */
    bool quiet;                  /* no warnings */
} scan_exact_in;

/* Builds every file with every set and fills out[files->n]. A file that
 * does not compile, or has no compiler here, is a warning (its first error)
 * and lists nothing for that set. CLI_OK, or CLI_FAIL when out of memory
 * (printed). */
int scan_exact_run(const scan_exact_in *in, scan_exact_file *out);
void scan_exact_free(scan_exact_file *f, size_t n);

/* The first line of a compiler log that reports an error (else its first
 * non-blank line), into buf; false when the log has neither. */
bool scan_exact_first_error(const char *log, char *buf, size_t len);

#endif
