/* Filling a table of function pointers from a library opened at run time:
 * what the OpenCL and CUDA loaders share. The table is described by its
 * entries' offsets, so one list of names sits next to one struct instead
 * of a hand-written assignment per function that could drift from it. */
#ifndef CCKEY_DL_TABLE_H
#define CCKEY_DL_TABLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct cckey_dl_entry {
    const char *symbol;
    const char *fallback;   /* tried when symbol is missing; NULL for none */
    size_t offset;          /* of the function pointer in the table */
    bool optional;          /* when missing too, the pointer stays NULL */
} cckey_dl_entry;

/* Where a driver is loaded from: a path a caller set (the public
 * cckey_set_driver_library), else the loader's default name. A driver is
 * loaded once per process, so the first load fixes the path. */
typedef struct cckey_dl_path {
    pthread_mutex_t lock;
    bool fixed;             /* a load was attempted with path */
    char path[4096];        /* "" for the default */
    void *lib;              /* the open library, once bound */
} cckey_dl_path;
#define CCKEY_DL_PATH_INIT {PTHREAD_MUTEX_INITIALIZER, false, "", NULL}

/* Sets p to path (NULL or "" for the default). True, or false with why
 * when the path is too long or the driver (what, for the message) was
 * already loaded from another path. */
bool cckey_dl_set_path(cckey_dl_path *p, const char *path, const char *default_path, const char *what, char *why,
                       size_t why_len);

/* Opens the library p names (default_path when none was set), fixing p, and
 * fills table. True on success, the library staying open for the life of
 * the process; else false with why: "<absent>: <dlerror>" when it cannot be
 * opened, "<path> lacks <symbol> (<too_old>)" when a required function is
 * missing. */
bool cckey_dl_bind(cckey_dl_path *p, const char *default_path, const cckey_dl_entry *entries, size_t n, void *table,
                   const char *absent, const char *too_old, char *why, size_t why_len);

/* A driver loaded once per process: the loader's load() binds its table
 * under once, setting loaded, or writes the reason. */
typedef struct cckey_dl_driver {
    cckey_dl_path path;
    pthread_once_t once;
    const void *loaded;       /* the table, once bound */
    char reason[512];
    const char *no_symbol;    /* the reason for a function the driver lacks */
} cckey_dl_driver;
#define CCKEY_DL_DRIVER_INIT(no_symbol) {CCKEY_DL_PATH_INIT, PTHREAD_ONCE_INIT, NULL, "", no_symbol}

/* The driver's table, running load first (once per process), or NULL with
 * the reason in *why (when why is not NULL). */
const void *cckey_dl_driver_load(cckey_dl_driver *d, void (*load)(void), const char **why);

/* The address of name in the driver, loading it first, for a tool that
 * calls the driver itself (the public cckey_driver_symbol); NULL with the
 * reason in *why (when why is not NULL). */
void *cckey_dl_driver_symbol(cckey_dl_driver *d, void (*load)(void), const char *name, const char **why);

/* The address of name in the library p bound (cckey_dl_bind succeeded),
 * for a tool that calls the driver itself (the public cckey_driver_symbol):
 * NULL when p is not bound or the library has no such symbol. */
void *cckey_dl_symbol(cckey_dl_path *p, const char *name);

#endif
