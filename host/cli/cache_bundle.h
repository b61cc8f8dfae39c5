/* cckey cache export / import (see cckey_store_export in cckey.h). */
#ifndef CCKEY_CLI_CACHE_BUNDLE_H
#define CCKEY_CLI_CACHE_BUNDLE_H

#include "cli.h"

/* The entries manifest_path's keys need (every entry when NULL) to output
 * ("-" or NULL: standard output), written atomically. An exit status. */
int cli_cache_export(cckey_store *s, const char *manifest_path, const char *output);
/* A bundle from input ("-": standard input) into s, and with to_remotes
 * into its writable remotes (unsigned entries into those that sign only
 * with sign_unsigned). An exit status. */
int cli_cache_import(cckey_store *s, const char *input, bool to_remotes, bool sign_unsigned);

#endif
