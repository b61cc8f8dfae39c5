/* What the manifest component's two JSON parsers share (json.c, the
 * strict one, and plain.c, the fast path before it); internal to
 * host/cli/manifest/. */
#ifndef CCKEY_MANIFEST_JSON_H
#define CCKEY_MANIFEST_JSON_H

#include "manifest.h"

/* Appends the option (k, v) to res, in p's reused table (both parsers):
 * 0, or -1 out of memory. */
int mj_push_option(mj_parser *p, mj_line *res, cckey_bytes k, cckey_bytes v);

#endif
