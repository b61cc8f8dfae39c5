/* The table of strings decoded before (see manifest_reuse.h). */
#include "manifest_reuse.h"

#include <stdlib.h>

int mj_reuse_init(mj_reuse *r, unsigned bits)
{
    r->e = calloc((size_t)1 << bits, sizeof *r->e);
    r->mask = r->e ? ((size_t)1 << bits) - 1 : 0;
    return r->e ? 0 : -1;
}

void mj_reuse_free(mj_reuse *r)
{
    free(r->e);
    r->e = NULL;
    r->mask = 0;
}
