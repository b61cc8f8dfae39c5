/* warm's own state and the units that work on it: plan.c (read the
 * manifest, key it, shard it, look it up, group it into builds), run.c
 * (compile the builds on worker threads, claimed while they compile),
 * report.c (what became of each tuple). cmd_warm.c wires them to the
 * command line. CLI-internal: nothing here is the library's. */
#ifndef CCKEY_WARM_RUN_H
#define CCKEY_WARM_RUN_H

#include "../manifest/manifest.h"
#include "../scan/scan.h"
#include "shard.h"
#include "claims.h"
#include "warm.h"
#include "warm_deps.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { T_PENDING, T_CACHED, T_COMPILED, T_FAILED, T_DUPLICATE, T_EVICTED };

/* Failures listed in full before the rest are only counted (see -v). */
#define SHOWN_FAILURES 50

typedef struct tuple {
    manifest_item item;
    char key[CCKEY_KEY_LEN + 1];
    char *root;           /* the source's folder (real path): the first include root */
    scan_lang lang;
    int state;
    char *why;            /* T_FAILED: the reason */
    bool is_dup;          /* another tuple has the same key and stands for it: */
    size_t dup_of;        /* that one */
    cckey_miss miss;      /* what the look-up found (CCKEY_MISS_NONE: a hit) */
    char *miss_detail;    /* its detail, for a miss other than absent */
    uint32_t variants;    /* the builds its entry holds (after the put, when compiled) */
    uint32_t variant;     /* the build a hit served: 0 the newest */
    const char *deps_how; /* compiled: how its headers were found (warm_deps.h) */
    size_t group;         /* 1 + the index of its build group; 0 for none */
} tuple;

typedef struct group {
    size_t *members;      /* tuple indices */
    size_t n;
    warm_compiler *compiler;
    int dev;
    char *log;            /* the compiler's log, kept for the summary */
    bool log_shown;
} group;

typedef struct warm {
    const char *manifest;
    size_t max_line;   /* manifest lines longer than this are refused */
    tuple *t;
    size_t n;
    group *g;
    size_t n_groups;
    cckey_store *store;
    warm_compiler opencl, cuda, glsl, hlsl;
    char opencl_why[512], cuda_why[512], vulkan_why[512];
    int have_opencl, have_cuda, have_glsl, have_hlsl;   /* -1 unknown, 0 no, 1 yes */
    atomic_size_t next_group, groups_done, tuples_done, n_compiled, n_failed;
    atomic_size_t n_elsewhere;   /* stored by another warm while this one waited for its claim */
    atomic_size_t building;      /* builds compiling now */
    warm_claims claims;          /* builds other warms of this folder are compiling */
    pthread_mutex_t defer_mu;    /* guards deferred: builds another warm had claimed when tried */
    size_t *deferred, n_deferred, next_deferred;
    cckey_store *local;          /* the folder alone (read-only): what another warm just stored */
    atomic_uint_fast64_t bytes_done;
    cckey_dep_memo *memo;     /* header digests, shared by look-ups and builds */
    warm_deps_cfg deps;       /* how builds' headers are found (--deps, --preprocessor) */
    uint64_t max_bytes;
    size_t n_cached;          /* found in the store (checked) before building */
    bool verbose;
    cli_shard shard;
    size_t n_manifest;    /* tuples in the manifest, before sharding */
    unsigned jobs;
    cli_format fmt;       /* of the summary */
    bool check;           /* --check: look up only; store is read-only */
    bool force;           /* --force: compile every tuple, cached or not */
    cckey_store *probe;   /* where look-ups go: store, a read-only handle of its
                             folder (--force --format jsonl), or NULL (none) */
    warm_deps_mode deps_mode;   /* --deps */
    const char *pp;             /* --preprocessor, NULL: clang on PATH */
} warm;

/* Exit status of --check when any tuple is not cached. */
enum { WARM_NOT_WARM = 3 };

/* What a tuple's build reads and is checked against: the toolchain (when
 * its compiler and device are here), the flags and the folders searched. */
typedef struct toolchain {
    warm_compiler *c;
    int dev;
    char version[512];
    warm_flags flags;
    bool flags_ok;
    char flags_why[512];
    warm_search search;
} toolchain;

/* ---- plan.c ---- */
/* Mark t failed with the reason. */
void warm_fail(tuple *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Read the whole manifest into w; 0, or an exit status. */
int warm_load(warm *w, manifest_files *files);
/* Every tuple's key, this shard's tuples, and duplicates marked; an exit status. */
int warm_keys(warm *w);
/* Load the compilers, then look every distinct key up (jobs at once). */
void warm_look_up_all(warm *w, unsigned jobs);
/* The compiler for a language, loaded on first use; NULL with why. */
warm_compiler *warm_compiler_for(warm *w, scan_lang lang, const char **why);
void warm_toolchain_make(warm *w, const tuple *t, toolchain *k);
cckey_lookup warm_toolchain_lookup(const toolchain *k, cckey_dep_memo *memo);
void warm_toolchain_free(toolchain *k);
/* Group what is left to build into builds; 0, or -1 out of memory. */
int warm_plan(warm *w);
int warm_take_shard(warm *w);
/* Look tuple i up in s (again: a second look, after a claim; no warning). */
void warm_look_up_in(warm *w, cckey_store *s, size_t i, bool again);
void warm_look_up(void *arg, size_t i);

/* ---- run.c ---- */
/* Compile every build on up to jobs threads, with a progress bar unless quiet. */
void warm_build_all(warm *w, unsigned jobs, bool quiet);

/* ---- report.c ---- */
size_t warm_mark_evicted(warm *w);
int warm_report_check(warm *w);
int warm_summary(warm *w);

#endif
