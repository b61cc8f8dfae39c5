/* See dl_table.h. */
#include "dl_table.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool cckey_dl_set_path(cckey_dl_path *p, const char *path, const char *default_path, const char *what, char *why,
                       size_t why_len)
{
    if (!path) path = "";
    if (strlen(path) >= sizeof p->path) {
        snprintf(why, why_len, "%s library path of %zu bytes is too long", what, strlen(path));
        return false;
    }
    bool ok = true;
    pthread_mutex_lock(&p->lock);
    if (!p->fixed) snprintf(p->path, sizeof p->path, "%s", path);
    else if (strcmp(*p->path ? p->path : default_path, *path ? path : default_path) != 0) {
        /* The loaded library's functions are in use; swapping it would
         * leave engines pointing into two drivers. */
        snprintf(why, why_len, "the %s is already loaded from %s; set its path before its first use", what,
                 *p->path ? p->path : default_path);
        ok = false;
    }
    pthread_mutex_unlock(&p->lock);
    return ok;
}

bool cckey_dl_bind(cckey_dl_path *p, const char *default_path, const cckey_dl_entry *entries, size_t n, void *table,
                   const char *absent, const char *too_old, char *why, size_t why_len)
{
    char path[sizeof p->path];
    pthread_mutex_lock(&p->lock);
    p->fixed = true;
    snprintf(path, sizeof path, "%s", *p->path ? p->path : default_path);
    pthread_mutex_unlock(&p->lock);
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
    pthread_mutex_lock(&p->lock);
    p->lib = lib;
    pthread_mutex_unlock(&p->lock);
    return true;
}

void *cckey_dl_symbol(cckey_dl_path *p, const char *name)
{
    pthread_mutex_lock(&p->lock);
    void *lib = p->lib;
    pthread_mutex_unlock(&p->lock);
    return lib ? dlsym(lib, name) : NULL;
}

const void *cckey_dl_driver_load(cckey_dl_driver *d, void (*load)(void), const char **why)
{
    pthread_once(&d->once, load);
    if (!d->loaded && why) *why = d->reason;
    return d->loaded;
}

void *cckey_dl_driver_symbol(cckey_dl_driver *d, void (*load)(void), const char *name, const char **why)
{
    if (!cckey_dl_driver_load(d, load, why)) return NULL;
    void *sym = cckey_dl_symbol(&d->path, name);
    if (!sym && why) *why = d->no_symbol;
    return sym;
}
