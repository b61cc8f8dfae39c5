/* Inside the manifest component only: how reader.c reads through the
 * windows that window.c maps (manifest_map). */
#ifndef CCKEY_MANIFEST_WINDOW_H
#define CCKEY_MANIFEST_WINDOW_H

#include "manifest.h"

/* More bytes after buf[end] (0, with eof set at the end of the file),
 * MANIFEST_FULL, or -1 with errno. */
int manifest_window_more(manifest *m);
/* manifest_swap's work for a mapped manifest. */
int manifest_window_swap(manifest *m, char **buf, size_t *cap);

#endif
