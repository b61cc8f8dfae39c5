/* The text scan of a file under a manifest's option sets (see scan_text.c). */
#ifndef CCKEY_CLI_SCAN_TEXT_H
#define CCKEY_CLI_SCAN_TEXT_H

#include "warm/scan_exact.h"

/* The entries of path (its text src[0..len)) under each of the sets into
 * out (in_set NULL when every entry is in every set). 0, or
 * scan_file's error (-1 out of memory, CCKEY_SCAN_TOO_DEEP with
 * out->r.deep_line, CCKEY_SCAN_UNREADABLE: a header). */
int scan_text_sets(const char *path, const char *src, size_t len, scan_lang lang, const scan_exact_set *sets,
                   size_t n_sets, const char *const *macros, size_t n_macros, scan_exact_file *out);

#endif
