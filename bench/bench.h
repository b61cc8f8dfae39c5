/* cckey_bench: shared types of the benchmark program.
 *
 * A workload is a set of inputs (messages, or key tuples); a candidate is
 * one way of turning them into digests or keys. Every candidate's output is
 * compared with OpenSSL's on every workload it runs, so a fast wrong answer
 * is a failure, never a result. */
#ifndef CCKEY_BENCH_H
#define CCKEY_BENCH_H

#include "cckey.h"
#include "md5/md5.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Workload kinds, also used as a mask of what a candidate can run. */
enum {
    BENCH_WL_MSGS = 1,   /* independent messages: digests (or keys of source-only tuples) */
    BENCH_WL_SUITE = 2,  /* S sources x E entries x D devices x O option sets */
    BENCH_WL_MEMO = 4,   /* one 4 KiB source, a few repeated tuples */
};

typedef struct bench_workload {
    char name[32];
    int kind;
    size_t n;                      /* messages or tuples */
    uint64_t bytes;                /* input bytes of all n items (every field of a tuple) */
    cckey_msg *msgs;               /* BENCH_WL_MSGS */
    cckey_bytes *views;            /* BENCH_WL_MSGS: the same messages, for the public calls */
    cckey_tuple *tuples;           /* every kind; for messages: the source field only */
    uint8_t (*ref_dig)[CCKEY_MD5_DIGEST];   /* BENCH_WL_MSGS: OpenSSL's digests */
    char (*ref_key)[CCKEY_KEY_LEN + 1];     /* keys assembled from OpenSSL's digests */
    cckey_source *memo;            /* BENCH_WL_MEMO: a handle on the source */
    unsigned memo_passes;          /* BENCH_WL_MEMO: how often one rep walks the tuples */
    void *storage[4];              /* everything to free */
} bench_workload;

/* What a candidate writes: n digests or n keys. */
enum { BENCH_OUT_DIGEST = 0, BENCH_OUT_KEY = 1 };

/* Candidate roles: the baselines every ratio is taken against. */
enum { BENCH_ROLE_CANDIDATE = 0, BENCH_ROLE_OSSL1, BENCH_ROLE_OSSLN, BENCH_ROLE_NAIVE };

typedef struct bench_candidate bench_candidate;
struct bench_candidate {
    char name[32];
    int role;
    int kinds;                     /* workload kinds it runs */
    int output;                    /* BENCH_OUT_* */
    unsigned threads;              /* threads it uses (resolved: never 0) */
    int param;                     /* ISA id, backend kind, ... */
    /* NULL when it can run here; else why not (static or in why). */
    const char *(*unavailable)(const bench_candidate *c, char *why, size_t len);
    /* One repetition over the workload; returns the items done. 0 is an
     * error, explained in msg; on success msg may carry a note (e.g. which
     * backend a batch used). */
    uint64_t (*run)(const bench_candidate *c, const bench_workload *w, void *out, char *msg, size_t len);
};

/* ---- options --------------------------------------------------------------- */
typedef struct bench_opts {
    bool quick, smoke, gpu;
    double min_time;               /* seconds per sample */
    int samples;                   /* best of */
    unsigned threads;              /* "all threads" */
    const char *csv;
    const char *plot_script;
    const char *png;
    const char *only;              /* run only workloads whose name contains this */
    double gpu_budget;             /* seconds for the GPU scaling sweep */
    double single_shot;            /* > 0: a warm-up longer than this is the measurement */
    int gpu_kind;                  /* the device backend --gpu measures (CUDA; OpenCL for dry runs) */
    uint64_t gpu_bytes;            /* --gpu end-to-end workload size */
    uint64_t seed;
    const char *inject;            /* corrupt this candidate's output: proves the cross-check bites */
} bench_opts;

/* ---- util.c ---------------------------------------------------------------- */
double bench_now(void);
uint64_t bench_rand(uint64_t *state);
double bench_rand_unit(uint64_t *state);          /* [0, 1) */
double bench_rand_normal(uint64_t *state);
void bench_fill(uint8_t *buf, size_t len, uint64_t seed, unsigned threads);
void *bench_alloc(size_t bytes);                  /* exits on failure */
/* body(ctx, begin, end) over [0, n) in grains claimed dynamically. */
/* fn(arg, tid) for tid in [0, threads), tid 0 on the calling thread: 0, or
 * -1 when a thread could not start (the started ones have finished). */
int bench_parallel_run(unsigned threads, void (*fn)(void *arg, unsigned tid), void *arg);
void bench_parallel_for(size_t n, size_t grain, unsigned threads,
                        void (*body)(void *ctx, size_t begin, size_t end), void *ctx);
/* A claim size that gives each thread several claims, so uneven items balance. */
size_t bench_grain(size_t n, unsigned threads);
void bench_human_bytes(char *buf, size_t len, double bytes);

/* ---- ossl.c: the independent reference -------------------------------------- */
void bench_ossl_md5(const void *data, size_t len, uint8_t out[CCKEY_MD5_DIGEST]);
void bench_ossl_key(char out[CCKEY_KEY_LEN + 1], const cckey_tuple *t);
void bench_ossl_digests(const cckey_msg *m, size_t n, uint8_t (*out)[CCKEY_MD5_DIGEST], unsigned threads);
void bench_ossl_keys(const cckey_tuple *t, size_t n, char (*out)[CCKEY_KEY_LEN + 1], unsigned threads);

/* ---- workloads.c --------------------------------------------------------------- */
/* Messages of one fixed length, or (len == 0) log-uniform 16 B..64 KiB. */
void bench_wl_messages(bench_workload *w, const char *name, size_t len, uint64_t total,
                       size_t min_count, size_t max_count, uint64_t seed, unsigned threads);
void bench_wl_suite(bench_workload *w, size_t S, size_t E, size_t D, size_t O, uint64_t seed,
                    unsigned threads);
void bench_wl_memo(bench_workload *w, unsigned passes, uint64_t seed);
void bench_wl_free(bench_workload *w);
/* OpenSSL's digests (for messages) and keys of a built workload. */
void bench_wl_reference(bench_workload *w, unsigned threads);

/* ---- candidates ---------------------------------------------------------------- */
/* Append this build's candidates to list (capacity cap); returns the count. */
size_t bench_digest_candidates(bench_candidate *list, size_t cap, unsigned threads);
size_t bench_key_candidates(bench_candidate *list, size_t cap, unsigned threads);
size_t bench_memo_candidates(bench_candidate *list, size_t cap);
/* cckey_make_keys on backend c->param with c->threads threads. */
uint64_t bench_run_batch(const bench_candidate *c, const bench_workload *w, void *out, char *msg, size_t len);
/* NULL when backend c->param is compiled in and usable here. */
const char *bench_backend_unavailable(const bench_candidate *c, char *why, size_t len);

/* ---- isa.c: the SIMD multi-buffer paths, forced one at a time ------------------ */
int bench_isa_count(void);
const char *bench_isa_name(int isa);
/* NULL when the path runs on this CPU, else why not. */
const char *bench_isa_unavailable(int isa);
void bench_isa_digest(int isa, const cckey_msg *m, size_t n, uint8_t (*out)[CCKEY_MD5_DIGEST]);
/* The path cckey_md5_many picks here. */
const char *bench_isa_active(void);

/* ---- measure.c ------------------------------------------------------------------ */
typedef struct bench_result {
    char workload[32], candidate[32], status[8], note[200];
    int role, output, kind;
    unsigned threads;
    uint64_t items;                /* per rep */
    double bytes;                  /* per rep */
    double seconds;                /* best rep */
    int samples;
    double gbps, per_s;            /* per_s: digests/s or keys/s by output */
    double x_ossl1, x_ossln, x_naive;   /* 0: no such baseline on this workload */
} bench_result;

/* Run c on w: warm up, cross-check against the reference, then time. */
bench_result bench_measure(const bench_candidate *c, const bench_workload *w, const bench_opts *o);

/* ---- report.c ------------------------------------------------------------------- */
void bench_results_add(const bench_result *r);
size_t bench_results_count(void);
bench_result *bench_results_at(size_t i);
void bench_results_ratios(void);
int bench_write_csv(const char *path);
void bench_print_table(FILE *f);
void bench_plot(const bench_opts *o);
/* The targets section; returns how many were missed. */
int bench_print_targets(FILE *f, bool smoke);
int bench_failures(void);

/* ---- gpu.c ---------------------------------------------------------------------- */
int bench_gpu_main(const bench_opts *o);

#endif
