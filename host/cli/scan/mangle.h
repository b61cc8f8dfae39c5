/* Itanium C++ names of CUDA kernels with simple signatures: builtin
 * arithmetic types (and the usual typedefs of them: size_t, int32_t, ...),
 * CUDA's vector, half and library types (cuRAND states, cuFFT and cuComplex
 * numbers, cudaExtent, stream, event and graph handles, ...), classes and
 * enums of the unit, template parameters, pointers and references to those
 * with const/volatile/__restrict__, and arrays (which decay to pointers);
 * and the names of function template instances (template arguments that
 * are such types or integers). Anything else (function pointers, class
 * template instances, std::) is reported as unsupported. */
#ifndef CCKEY_SCAN_MANGLE_H
#define CCKEY_SCAN_MANGLE_H

#include "lexer.h"

#define CCKEY_CTYPE_MAX_PTR 8
enum { CCKEY_Q_CONST = 1, CCKEY_Q_VOLATILE = 2, CCKEY_Q_RESTRICT = 4 };

/* One parameter type. */
typedef struct scan_ctype {
    char builtin[4];      /* Itanium code of a builtin ("f", "y", "Ds"); "" for a class */
    char cls[256];        /* a class: "ns::inner::Name" (no leading ::) */
    unsigned nptr;        /* pointer levels */
    /* quals[0]: of the base type; quals[k]: of pointer level k. The
     * outermost level's qualifiers are dropped (they are not part of a
     * function's type). */
    unsigned char quals[CCKEY_CTYPE_MAX_PTR + 1];
    unsigned char ref;    /* 0, 1 for &, 2 for && */
    /* The top-level qualifiers dropped from quals[nptr]: a parameter's are
     * not part of its type, but a typedef's are (typedef volatile int vint;
     * vint *p is a pointer to volatile int). */
    unsigned char top_quals;
    /* k + 1: the base is the function template's k-th template parameter
     * (mangled T_, T0_, ...); 0: builtin or cls. */
    unsigned short tparam;
} scan_ctype;

/* A template argument: a type, or an integer of its parameter's type. */
typedef struct scan_targ {
    bool is_type;
    scan_ctype type;   /* is_type */
    char code[4];       /* an integer: its parameter's builtin code ("i", "j", "b", "m") */
    long long value;
} scan_targ;

/* Resolves a type name written in a parameter: fills out and returns true
 * for a known typedef or class. */
typedef bool (*scan_type_lookup)(void *user, const char *name, size_t len, scan_ctype *out);

/* Parse one declaration's tokens (parameter or typedef): type, then an
 * optional declarator name. name/name_len receive the declared name (NULL
 * when there is none). Returns 0, 1 for a lone "void" (an empty parameter
 * list), 2 for "..." or -1 with a reason in why. */
int scan_parse_decl(const scan_token *t, size_t n, scan_type_lookup lookup, void *user, scan_ctype *out,
                     const char **name, size_t *name_len, const char **why);

/* Well-known names: builtins' typedefs and CUDA's classes. */
bool scan_known_type(const char *name, size_t len, scan_ctype *out);

/* _Z name of function `name` in namespaces ns[0]::ns[1]::..., with params
 * (n == 0: no parameters, "v"). Writes a NUL-terminated name into out;
 * false when it does not fit. */
bool scan_mangle(char *out, size_t cap, const char *const *ns, size_t n_ns, const char *name,
                  const scan_ctype *params, size_t n);
/* The same for the instance name<args...> of a function template returning
 * void, whose parameters may name its template parameters. */
bool scan_mangle_template(char *out, size_t cap, const char *const *ns, size_t n_ns, const char *name,
                           const scan_targ *args, size_t n_args, const scan_ctype *params, size_t n);

#endif
