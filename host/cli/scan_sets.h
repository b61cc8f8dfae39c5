/* scan's option sets, from -O and --options-file (scan_sets.c). */
#ifndef CCKEY_SCAN_SETS_H
#define CCKEY_SCAN_SETS_H

#include "cli.h"

#include <jansson.h>

/* Each set a JSON array of [KEY, VALUE] pairs, as the manifest holds it. */
typedef struct scan_sets {
    json_t **v;
    size_t n;
} scan_sets;

/* One set from its text form (cli_opts_parse; "-" alone is the empty set),
 * checked as warm checks it (warm_options_check): 0, -1 out of memory, or
 * CLI_USAGE once the error is reported (where names the text's origin). */
int scan_sets_add(scan_sets *s, const char *text, const char *where);
/* --options-file: one set a line, as text or as a JSON array of pairs;
 * errors as FILE:LINE:COLUMN. CLI_OK, CLI_USAGE or CLI_FAIL (reported). */
int scan_sets_read(scan_sets *s, const char *path);
void scan_sets_free(scan_sets *s);
/* A set's pairs as options pointing into it (one spare slot), or NULL
 * when out of memory; json_array_size(pairs) of them. */
cckey_option *scan_set_options(json_t *pairs);

#endif
