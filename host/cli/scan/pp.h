/* The part of the C preprocessor the scanner models: the object-like macros
 * a translation unit defines (and an option set's -D / -U), and the value of
 * #if conditions over them, in three-valued logic. Macros are never
 * expanded into the token stream; their bodies are kept for conditions,
 * parameter types and template arguments.
 *
 * A name no #define or -D gave is undefined (0), as the preprocessor has it,
 * unless the toolchain or the device may define it: reserved names (__x,
 * _X), OpenCL's extension and version macros (cl_*, CL_*), the CUDA
 * toolkit's (CUDA*, CUDART_*, NV*, ...), platform ones (WIN32, GL_*). Those
 * are unknown, and a condition over them is scanned both ways. */
#ifndef CCKEY_SCAN_PP_H
#define CCKEY_SCAN_PP_H

#include "scan.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct scan_macro {
    char *name;
    char *body;          /* object-like: the replacement text (trimmed); NULL when function-like */
    bool defined;        /* false: #undef'd, known to be undefined */
    bool ambiguous;      /* given two different bodies: its value is not one thing */
    bool uncertain;      /* (un)defined in a group scanned both ways: maybe not */
    bool device;         /* uncertain because of a condition only the device decides */
} scan_macro;

typedef struct scan_macro_env {
    scan_macro *m;
    size_t n, cap;
    scan_lang lang;
    bool oom;
} scan_macro_env;

/* Values of a condition. */
enum { CCKEY_PP_FALSE = 0, CCKEY_PP_TRUE = 1, CCKEY_PP_UNKNOWN = -1 };

void scan_env_init(scan_macro_env *e, scan_lang lang);
void scan_env_free(scan_macro_env *e);
/* An independent copy (the state of a translation unit at a point). 0 or -1. */
int scan_env_copy(scan_macro_env *dst, const scan_macro_env *src);

/* #define: the text after the word "define" (NAME, an optional parameter
 * list right after it, the body). #undef: the text after "undef". */
void scan_env_define_text(scan_macro_env *e, const char *text, size_t len, bool uncertain, bool device);
void scan_env_undef_text(scan_macro_env *e, const char *text, size_t len, bool uncertain, bool device);
/* -DNAME[=VALUE] / -UNAME as an option set has them: name, and the value
 * (empty: "1" is the compilers' default; pass it). */
void scan_env_define(scan_macro_env *e, const char *name, size_t nlen, const char *body, size_t blen,
                      bool function_like);
void scan_env_undef(scan_macro_env *e, const char *name, size_t nlen);

/* The macro of that name (defined or #undef'd) this unit knows, or NULL. */
const scan_macro *scan_env_find(const scan_macro_env *e, const char *name, size_t len);

/* Whether a name no #define gave may still be defined by the toolchain, the
 * platform or (*device, OpenCL) the device. */
bool scan_pp_unknown_name(const scan_macro_env *e, const char *name, size_t len, bool *device);

/* #ifdef NAME: CCKEY_PP_TRUE, FALSE or UNKNOWN. */
int scan_pp_defined(const scan_macro_env *e, const char *name, size_t len, bool *device);
/* An #if / #elif condition's value; *device is set when it is unknown
 * because of a macro only the device knows. */
int scan_pp_eval(const scan_macro_env *e, const char *expr, size_t len, bool *device);
/* The integer value of an expression (template arguments): true with
 * *value, false when it is not a constant the unit spells. A name that is no
 * defined macro is asked of resolve (may be NULL): template parameters,
 * constexpr variables; else the value is unknown. */
typedef bool (*scan_pp_resolve)(void *user, const char *name, size_t len, long long *value);
bool scan_pp_value(const scan_macro_env *e, const char *expr, size_t len, scan_pp_resolve resolve, void *user,
                    long long *value);

#endif
