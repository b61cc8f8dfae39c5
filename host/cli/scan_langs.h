/* Languages on scan's command line (scan_langs.c). */
#ifndef CCKEY_SCAN_LANGS_H
#define CCKEY_SCAN_LANGS_H

#include "cli.h"
#include "scan/scan.h"

/* Every language: a device that takes every source. */
#define SCAN_ALL_LANGS (~0u)

/* names[0..len), comma-separated language names (opencl, cuda, hip,
 * metal) or group names (vulkan, once its languages exist), as a mask of
 * 1 << scan_lang; 0 with *bad the first unknown name. */
unsigned scan_langs_parse(const char *names, size_t len, const char **bad, size_t *bad_len);
/* The known names, ", "-separated, for messages. */
void scan_langs_known(char *buf, size_t len);
/* The known name one edit from word[0..len), or NULL. */
const char *scan_langs_suggest(const char *word, size_t len);

/* -d [LANGS:]ID. LANGS (names as above, comma-separated) ties the device to
 * those languages' sources; without it, or with ID written ":ID" (for an
 * identity that itself starts with a language name and a colon), the
 * device takes every source. *id points into arg: the identity exactly as
 * written after the prefix. 0, or -1 when the identity is empty. */
int scan_device_spec(const char *arg, unsigned *langs, const char **id);

#endif
