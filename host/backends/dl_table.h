/* Filling a table of function pointers from a library opened at run time:
 * what the OpenCL and CUDA loaders share. The table is described by its
 * entries' offsets, so one list of names sits next to one struct instead
 * of a hand-written assignment per function that could drift from it. */
#ifndef CCKEY_DL_TABLE_H
#define CCKEY_DL_TABLE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cckey_dl_entry {
    const char *symbol;
    const char *fallback;   /* tried when symbol is missing; NULL for none */
    size_t offset;          /* of the function pointer in the table */
    bool optional;          /* when missing too, the pointer stays NULL */
} cckey_dl_entry;

/* Opens the library named by the environment variable env (default_path
 * when it is unset or empty) and fills table. True on success, the library
 * staying open for the life of the process; else false with why: "<absent>:
 * <dlerror>" when it cannot be opened, "<path> lacks <symbol> (<too_old>)"
 * when a required function is missing. */
bool cckey_dl_bind(const char *env, const char *default_path, const cckey_dl_entry *entries, size_t n,
                   void *table, const char *absent, const char *too_old, char *why, size_t why_len);

#endif
