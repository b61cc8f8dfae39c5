/* Looking a compiler's devices up by identity; see warm.h. */
#include "warm.h"

#include <stdio.h>
#include <string.h>

int warm_find(const warm_devices *d, const char *ident, size_t len)
{
    for (size_t i = 0; i < d->n; i++)
        if (strlen(d->ident[i]) == len && memcmp(d->ident[i], ident, len) == 0) return (int)i;
    return -1;
}

void warm_names(const warm_devices *d, char *buf, size_t len)
{
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < d->n && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s\"%s\"", i ? ", " : "", d->ident[i]);
}
