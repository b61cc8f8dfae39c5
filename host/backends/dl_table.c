/* See dl_table.h. */
#include "dl_table.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool cckey_dl_bind(const char *env, const char *default_path, const cckey_dl_entry *entries, size_t n,
                   void *table, const char *absent, const char *too_old, char *why, size_t why_len)
{
    const char *path = getenv(env);
    if (!path || !*path) path = default_path;
    dlerror();
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(why, why_len, "%s: %s", absent, e ? e : path);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        void *sym = dlsym(lib, entries[i].symbol);
        if (!sym && entries[i].fallback) sym = dlsym(lib, entries[i].fallback);
        if (!sym && !entries[i].optional) {
            snprintf(why, why_len, "%s lacks %s (%s)", path, entries[i].symbol, too_old);
            dlclose(lib);
            return false;
        }
        /* POSIX guarantees a data pointer from dlsym converts to a function
         * pointer; memcpy avoids the ISO C warning about the cast. */
        memcpy((char *)table + entries[i].offset, &sym, sizeof sym);
    }
    return true;
}
