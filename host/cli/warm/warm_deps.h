/* What `cckey warm` records as a build's dependencies: the folders its
 * compiler searches, from the flags as the build passes them; the text scan
 * where it is exact; a real preprocessor (clang -E -dI, the same flags)
 * where it is not; and, where neither can be sure, a build marked
 * unverified, which a look-up never serves. */
#ifndef CCKEY_WARM_DEPS_H
#define CCKEY_WARM_DEPS_H

#include "cckey_store.h"
#include "warm.h"
#include "../json_out.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

/* --deps: auto (the text scan; the preprocessor where the text cannot
 * resolve an include), text (never the preprocessor), preprocessor (for
 * every build, besides the text scan). */
typedef enum { WARM_DEPS_AUTO, WARM_DEPS_TEXT, WARM_DEPS_PREPROCESSOR } warm_deps_mode;

/* What a run's builds share; set up before they start. */
typedef struct warm_deps_cfg {
    warm_deps_mode mode;
    char pp[4096];          /* the preprocessor (clang); "" when there is none */
    char pp_why[512];       /* why there is none */
    char resource[4096];    /* clang's own headers, never a build's dependency */
    char cwd[4096];         /* warm's working folder, which the compilers search first */
    char tmp[4096];         /* a private folder for the preprocessor's files */
    pthread_mutex_t lock;   /* guards tmp's creation and first_unverified */
    atomic_uint serial;
    atomic_size_t n_unverified;    /* builds stored unverified in this run */
    atomic_size_t n_text, n_pp;    /* builds whose headers the text scan, the preprocessor found */
    atomic_uint_fast64_t ns;       /* time spent finding headers, all builds */
    char first_unverified[800];    /* the first one's reason */
} warm_deps_cfg;
/* pp: --preprocessor (NULL: clang on PATH, then clang-19 .. clang-14;
 * "none": none). 0, or -1 with why (no working folder). */
int warm_deps_init(warm_deps_cfg *cfg, warm_deps_mode mode, const char *pp, char *why, size_t why_len);
void warm_deps_end(warm_deps_cfg *cfg);
/* --format json's "headers" member, on one line: how each build's headers
 * were found and the time it took. */
void warm_deps_json(warm_deps_cfg *cfg, cli_json *w);
/* The warning to give when builds were stored unverified: true and buf. */
bool warm_deps_report(warm_deps_cfg *cfg, char *buf, size_t len);
/* "auto", "text" or "preprocessor"; false for anything else. */
bool warm_deps_mode_parse(const char *s, warm_deps_mode *out);

/* The folders a build searches, in the compiler's order: warm's working
 * folder (both PoCL and NVRTC search it first: PoCL for every include,
 * NVRTC for the source's quoted ones), the source's folder (warm passes it
 * first), then the flags' -iquote, -I / --include-path, -isystem and
 * -idirafter folders, each kind in the order given; and the files named by
 * -include / -imacros / --pre-include. Pointers into cfg, src and f. */
#define WARM_MAX_ROOTS 64
#define WARM_MAX_PRE 32
typedef struct warm_search {
    const char *roots[WARM_MAX_ROOTS];
    size_t n_roots;
    const char *pre[WARM_MAX_PRE];
    size_t n_pre;
    bool quote_dirs;   /* -iquote given: only the preprocessor knows that search exactly */
    bool text_only;    /* no preprocessor stands in for the compiler's (shaderc's): when the text
                          scan is not sure, the build is stored unverified */
} warm_search;
/* 0, or -1 with why (a flag missing its argument, too many folders). */
int warm_search_make(const warm_deps_cfg *cfg, const warm_flags *f, const char *src, warm_search *out, char *why,
                     size_t why_len);

/* The preprocessor's command for a build: argv (NULL-ended, malloc'ed,
 * pointing into build and the static strings), from the flags the build
 * passes (build), translated for clang: OpenCL C (-x cl, warm's working
 * folder first, as PoCL searches it) or CUDA as NVRTC sees it (-x c++, no
 * system folders, __CUDACC__, __CUDACC_RTC__, __CUDA_ARCH__, NVRTC's
 * version macros and CUDART_VERSION). NVRTC's toolkit folders are left out:
 * their headers are the compiler's own, given to clang as empty files
 * (warm_pp.c), which is faster than reading the CUDA runtime's headers and
 * immune to their checks of the compiler (CCCL #errors on a compiler it
 * does not know). owned receives strings to free with the argv. */
typedef struct warm_pp_argv {
    const char **argv;
    size_t argc;
    char *owned[8];
    size_t n_owned;
    bool cuda;   /* NVRTC's view: headers it has built in are always missing */
} warm_pp_argv;
int warm_pp_argv_make(const warm_deps_cfg *cfg, const warm_flags *build, bool cuda, const char *nvrtc_version,
                      warm_pp_argv *out);
void warm_pp_argv_free(warm_pp_argv *a);

/* A build's dependencies and how they were found. */
typedef struct warm_deps {
    cckey_deps_result r;
    const char *how;         /* "text", "preprocessor" or "unverified" */
    char unverified[600];    /* how == "unverified": what no one resolved, as the
                                entry records it ("k.cl:2: #include HDR") */
    const char *unverified_why;   /* and why (no preprocessor...) */
} warm_deps;
/* The dependencies of src (name: the source in messages) built with build
 * (the argv the compiler gets) searched as s says. 0, or -1 with why: a
 * header that cannot be read, a preprocessor that fails (its first error,
 * naming the file). */
int warm_deps_find(warm_deps_cfg *cfg, const warm_search *s, const warm_flags *build, bool cuda,
                   const char *nvrtc_version, const char *src, size_t len, const char *name, cckey_dep_memo *memo,
                   warm_deps *out, char *why, size_t why_len);
void warm_deps_free(warm_deps *d);
/* A source as messages name it: its file (len bytes, may be NULL), or the
 * manifest's line for an inline source. */
void warm_source_name(char *buf, size_t size, const void *file, size_t len, const char *manifest, size_t line);
/* --format jsonl's members about a tuple's builds: "variants" (when not 0),
 * "variant" (hit: the build served), "deps" (compiled: deps_how). */
void warm_json_builds(cli_json *w, uint32_t variants, bool hit, uint32_t variant, const char *deps_how);

/* The preprocessor run on src (on its standard input): its directives and
 * the files it entered, from `clang -E -dI` output (warm_pp.c). */
typedef struct warm_pp_result {
    cckey_include *inc;
    size_t n_inc;
    char **read;
    size_t n_read;
    char *text;   /* the output, which inc[].from and .name point into */
} warm_pp_result;
int warm_pp_run(warm_deps_cfg *cfg, const warm_pp_argv *a, const char *src, size_t len, const char *name,
                warm_pp_result *out, char *why, size_t why_len);
void warm_pp_result_free(warm_pp_result *r);
/* Remove a folder of ours and everything in it (no symlink followed). */
void warm_remove_tree(const char *dir);

#endif
