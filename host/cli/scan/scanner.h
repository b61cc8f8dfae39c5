/* The entry-point finder's state, shared by its parts: entries.c (the walk
 * over a unit's tokens and the kernels it defines), types.c (the types and
 * constants a unit names), templates.c (template kernels and the instances
 * the unit asks for). Private to host/cli/scan. */
#ifndef CCKEY_SCAN_SCANNER_H
#define CCKEY_SCAN_SCANNER_H

#include "lexer.h"
#include "mangle.h"
#include "pp.h"
#include "scan.h"

#include <stdbool.h>
#include <stddef.h>

enum frame_kind { F_NS, F_ANON_NS, F_EXTERN_C, F_EXTERN_CXX, F_OTHER };

typedef struct frame {
    enum frame_kind kind;
    char name[256];   /* F_NS: "a" or "a::b" (C++17 nested) */
} frame;

typedef struct named_type {
    char full[256];   /* "ns::Name" */
    scan_ctype type;
} named_type;

/* An integer constant (constexpr int N = 16;), visible to the tokens in
 * [from, to]: a namespace-scope one everywhere, a block-scope one from its
 * declaration to its block's end. */
typedef struct named_const {
    char full[256];
    long long value;
    size_t from, to;
} named_const;

/* An open conditional scanned both ways (see entries.c). */
typedef struct pp_frame {
    size_t depth, stmt, end_depth;
    bool ended;   /* end_depth is set */
    bool device;  /* its groups exist on some devices only */
} pp_frame;

typedef struct tmpl_set tmpl_set;   /* templates.c */

typedef struct scanner {
    const scan_token *t;
    size_t n;
    scan_lang lang;
    const scan_macro_env *env;   /* the unit's macros as its end has them */
    frame *frames;
    size_t depth, cap_frames;
    named_type *types;
    size_t n_types, cap_types;
    named_const *consts;
    size_t n_consts, cap_consts;
    scan_result *out;
    pp_frame *pp;
    size_t n_pp, cap_pp;
    const char *const *markers;   /* extra kernel markers (--kernel-macro) */
    size_t n_markers;
    tmpl_set *tmpl;
    /* While a template's parameters are parsed: their names, so that a
     * parameter type T becomes template parameter k. */
    const char *const *tparam_names;
    const size_t *tparam_lens;
    size_t n_tparams;
    /* After the walk (templates.c): the namespace a use stands in, for the
     * names it looks up, and its token (which block constants it sees). */
    const char *ns_at;
    size_t tok_at;
    bool oom;
} scanner;

bool scan_is(const scanner *s, size_t i, const char *x);
bool scan_ident(const scanner *s, size_t i);
/* The index after the bracket group opening at i ('(', '[' or '{'). */
size_t scan_skip_group(const scanner *s, size_t i);
/* The index after the template argument list opening at the '<' at i, or
 * i when it does not close. */
size_t scan_skip_angles(const scanner *s, size_t i);
/* A warning at token at: "LINE: text", or "HEADER:LINE: text" for a header's token. */
void scan_warn(scanner *s, const scan_token *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The current namespace path as "a::b" ("" at global scope). */
void scan_ns_path(const scanner *s, char *buf, size_t cap, bool *anonymous);
/* Room for item n of the array *p (capacity *cap): false, with s->oom,
 * when there is none. */
bool scan_grow(scanner *s, void **p, size_t *cap, size_t n, size_t size);
/* "a::b::c" (changed in place) as its parts, at most cap; their count. */
size_t scan_ns_parts(char *ns, const char **parts, size_t cap);
/* ns "::" name into out; false when it does not fit. */
bool scan_join_name(char *out, size_t cap, const char *ns, const char *name, size_t len);
void scan_add_entry(scanner *s, const char *name, size_t name_len, const scan_token *src);

/* types.c: typedef / using / class declarations at namespace scope, and the
 * lookup parameter types resolve through (namespaces innermost first, then
 * the template parameters being parsed, then well-known names). */
void types_alias(scanner *s, size_t i);
void types_class_head(scanner *s, size_t i);
void types_constant(scanner *s, size_t i);
/* constexpr/const INTEGER-TYPE NAME = EXPR; inside a function body. */
void types_local_constant(scanner *s, size_t i);
bool types_lookup(void *user, const char *name, size_t len, scan_ctype *out);
bool types_const_value(void *user, const char *name, size_t len, long long *value);
/* Parse the declaration in t[0..n) (a parameter, a typedef's type) with
 * object-like macros expanded; as scan_parse_decl. */
int types_parse(scanner *s, const scan_token *t, size_t n, scan_ctype *out, const char **name, size_t *name_len,
                const char **why);
/* The parameters of the list between the parentheses at open and close,
 * into params (at most cap); their count, or -1 with a reason. */
int types_params(scanner *s, size_t open, size_t close, scan_ctype *params, size_t cap, const char **why);
void types_free(scanner *s);

/* templates.c */
int tmpl_init(scanner *s);
/* `template <...>` at i (the statement's start is stmt): notes what it
 * defines (a kernel template, a function or class whose body may name
 * template kernels). */
void tmpl_definition(scanner *s, size_t i);
/* A kernel marker inside a template declaration: the kernel template. */
void tmpl_kernel(scanner *s, size_t stmt, size_t marker, const scan_token *name, size_t open, size_t close);
/* An identifier followed by '<' at i: maybe a use of a template. */
void tmpl_note_use(scanner *s, size_t i);
/* After the walk: the instances the unit asks for, as entries. */
void tmpl_resolve(scanner *s);
void tmpl_free(scanner *s);

#endif
