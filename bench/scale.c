/* cckey_bench_scale: cckey_make_keys against the OpenSSL loop as the batch
 * grows, 10^3 .. 10^7 tuples of short distinct names (the planner's
 * scaling: deduplication, digesting, formatting), on 1 thread and on all.
 *
 * Each tuple: a distinct 40-byte name; one of 10 devices, 64 sources of
 * 256 bytes and 3 option sets (2 pairs each), shared by pointer as a
 * caller's tables would be. Public API only, but for the OpenSSL reference.
 * Every candidate's keys are checked against OpenSSL's (all of them up to
 * 10^6 tuples, a stride above). Prints CSV: n,candidate,threads,keys_per_s,
 * keys_per_cpu_s (keys over the process's CPU seconds: on a shared, loaded
 * machine this is the steadier figure for 1 thread; wall time is what shows
 * the threads' scaling). Best of a few repetitions each.
 *
 * --shape short: the Python binding's "short" batch instead (4 devices, a
 * distinct name and a distinct ~55-byte source per tuple, 0, 1 or 2 option
 * pairs in an options array of its own per tuple, the option strings shared),
 * so the library's cost on that shape can be profiled without Python. */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { DEVICES = 10, SOURCES = 64, SOURCE_LEN = 256, SETS = 3, NAME_LEN = 40 };
#define OSSL_MAX ((size_t)1000000)   /* the loop has no state: its rate does not depend on n */

typedef struct scale_wl {
    size_t n;
    cckey_tuple *t;
    char *names;
    cckey_option *opts;   /* --shape short: each tuple's own options array */
    char (*keys)[CCKEY_KEY_LEN + 1];
} scale_wl;

static char devices[DEVICES][16];
static uint8_t sources[SOURCES][SOURCE_LEN];
static cckey_option sets[SETS][2];
static const char *const set_text[SETS][4] = {{"-O", "3", "-arch", "sm_80"},
                                              {"-O", "2", "-DBLOCK", "128"},
                                              {"-DTILE", "16", "-O", "3"}};

static void tables(void)
{
    uint64_t rs = 42;
    for (int i = 0; i < DEVICES; i++) snprintf(devices[i], sizeof devices[i], "device-%d", i);
    for (int i = 0; i < SOURCES; i++)
        for (int j = 0; j < SOURCE_LEN; j++) sources[i][j] = (uint8_t)(32 + bench_rand(&rs) % 90);
    for (int s = 0; s < SETS; s++)
        for (int k = 0; k < 2; k++)
            sets[s][k] = (cckey_option){{set_text[s][2 * k], strlen(set_text[s][2 * k])},
                                        {set_text[s][2 * k + 1], strlen(set_text[s][2 * k + 1])}};
}

static void build(scale_wl *w, size_t n)
{
    w->n = n;
    w->t = bench_alloc(n * sizeof *w->t);
    w->names = bench_alloc(n * NAME_LEN + 1);
    w->keys = bench_alloc(n * sizeof *w->keys);
    w->opts = NULL;
    for (size_t i = 0; i < n; i++) {
        char *nm = w->names + i * NAME_LEN;
        char tmp[NAME_LEN + 1];
        snprintf(tmp, sizeof tmp, "kernel_%033zu", i * 2654435761u % 10000000000000u + i);
        memcpy(nm, tmp, NAME_LEN);
        const char *dev = devices[i % DEVICES];
        w->t[i] = (cckey_tuple){.device = {dev, strlen(dev)}, .name = {nm, NAME_LEN},
                                .source = {sources[(i / 7) % SOURCES], SOURCE_LEN},
                                .options = sets[(i / 3) % SETS], .n_options = 2};
    }
}

enum { SHORT_DEVICES = 4, SHORT_STRIDE = 96, SHORT_NAME = 24 };
static char short_devices[SHORT_DEVICES][24];
static const cckey_option short_sets[3][2] = {{{{NULL, 0}, {NULL, 0}}},
                                              {{{"-O", 2}, {"3", 1}}},
                                              {{{"-arch", 5}, {"sm_90", 5}}, {{"-O", 2}, {"2", 1}}}};

/* The binding bench's short_tuples(n), laid out as its ctypes caller does. */
static void build_short(scale_wl *w, size_t n)
{
    w->n = n;
    w->t = bench_alloc(n * sizeof *w->t);
    w->names = bench_alloc(n * SHORT_STRIDE);
    w->opts = bench_alloc(2 * n * sizeof *w->opts);
    w->keys = bench_alloc(n * sizeof *w->keys);
    for (int d = 0; d < SHORT_DEVICES; d++) snprintf(short_devices[d], sizeof short_devices[d], "GPU %d|580.159.04", d);
    for (size_t i = 0; i < n; i++) {
        char *nm = w->names + i * SHORT_STRIDE, *src = nm + SHORT_NAME;
        int nl = snprintf(nm, SHORT_NAME, "kernel_%zu", i);
        int sl = snprintf(src, SHORT_STRIDE - SHORT_NAME, "__global__ void kernel_%zu(float *x) { x[0] = %zu; }", i, i);
        size_t k = i % 3;
        memcpy(w->opts + 2 * i, short_sets[k], sizeof short_sets[k]);
        const char *dev = short_devices[i % SHORT_DEVICES];
        w->t[i] = (cckey_tuple){.device = {dev, strlen(dev)}, .name = {nm, (size_t)nl}, .source = {src, (size_t)sl},
                                .options = w->opts + 2 * i, .n_options = k};
    }
}

static void unbuild(scale_wl *w)
{
    free(w->t), free(w->names), free(w->opts), free(w->keys);
}

/* Keys checked against OpenSSL's: all up to OSSL_MAX, else a stride. */
static int check(const scale_wl *w, const char *who)
{
    size_t step = w->n <= OSSL_MAX ? 1 : w->n / OSSL_MAX + 1;
    for (size_t i = 0; i < w->n; i += step) {
        char ref[CCKEY_KEY_LEN + 1];
        bench_ossl_key(ref, &w->t[i]);
        if (memcmp(ref, w->keys[i], CCKEY_KEY_LEN) != 0) {
            fprintf(stderr, "cckey_bench_scale: %s: key %zu of %zu differs from OpenSSL's\n", who, i, w->n);
            return -1;
        }
    }
    return 0;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct rate {
    double wall, cpu;   /* keys per second of each */
} rate;

static void keep_best(rate *best, size_t n, double wall, double cpu)
{
    if (n / wall > best->wall) best->wall = n / wall;
    if (n / cpu > best->cpu) best->cpu = n / cpu;
}

static rate time_ossl(const scale_wl *w, int reps)
{
    size_t n = w->n < OSSL_MAX ? w->n : OSSL_MAX;
    rate best = {0, 0};
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now(), c0 = cpu_now();
        for (size_t i = 0; i < n; i++) bench_ossl_key(w->keys[i], &w->t[i]);
        keep_best(&best, n, bench_now() - t0, cpu_now() - c0);
    }
    return best;
}

/* One config per thread count for the whole run, as a caller making many
 * batches would keep one: it keeps the batch's tables between calls. */
static cckey_batch_config *config_for(unsigned threads)
{
    cckey_batch_config *cfg;
    if (cckey_batch_config_new(&cfg) != CCKEY_OK) exit(1);
    cckey_batch_config_set_backend(cfg, CCKEY_BACKEND_CPU);
    cckey_batch_config_set_threads(cfg, threads);
    return cfg;
}

static rate time_cckey(scale_wl *w, cckey_batch_config *cfg, unsigned threads, int reps, int *bad)
{
    rate best = {0, 0};
    for (int r = 0; r < reps; r++) {
        memset(w->keys, 0, w->n * sizeof *w->keys);
        double t0 = bench_now(), c0 = cpu_now();
        cckey_status st = cckey_make_keys(w->keys, w->t, w->n, cfg);
        double dt = bench_now() - t0, dc = cpu_now() - c0;
        if (st != CCKEY_OK) {
            fprintf(stderr, "cckey_bench_scale: cckey_make_keys: %s: %s\n", cckey_strerror(st), cckey_last_error());
            exit(1);
        }
        keep_best(&best, w->n, dt, dc);
    }
    char who[32];
    snprintf(who, sizeof who, "cckey-%ut", threads);
    if (check(w, who)) *bad = 1;
    return best;
}

int main(int argc, char **argv)
{
    size_t max_n = 10000000;
    int profile = 0, short_shape = 0;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned all = online > 0 ? (unsigned)online : 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--max") == 0 && i + 1 < argc) max_n = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--profile") == 0) profile = 1;   /* cckey only, 1 thread, for perf */
        else if (strcmp(argv[i], "--shape") == 0 && i + 1 < argc && strcmp(argv[i + 1], "short") == 0) short_shape = 1, i++;
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) all = (unsigned)strtoul(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: cckey_bench_scale [--max N] [--threads N] [--shape short] [--profile]  (CSV on stdout)\n");
            return 2;
        }
    }
    tables();
    int bad = 0;
    cckey_batch_config *one = config_for(1), *every = config_for(all);
    printf("n,candidate,threads,keys_per_s,keys_per_cpu_s\n");
    static const size_t sizes[] = {1000, 10000, 100000, 200000, 1000000, 10000000};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes && sizes[k] <= max_n; k++) {
        size_t n = sizes[k];
        int reps = n <= 100000 ? 20 : n <= 1000000 ? 3 : 2;
        scale_wl w;
        if (short_shape) build_short(&w, n);
        else build(&w, n);
        time_cckey(&w, one, 1, 1, &bad);   /* warm-up: page faults, thread start, the kept tables */
        if (profile) {
            if (n == max_n) printf("%zu,cckey,1,%.0f\n", n, time_cckey(&w, one, 1, n >= 10000000 ? 1 : 10, &bad).cpu);
            unbuild(&w);
            continue;
        }
        rate r = time_ossl(&w, n <= 100000 ? 5 : 1);
        printf("%zu,openssl-loop,1,%.0f,%.0f\n", n, r.wall, r.cpu);
        r = time_cckey(&w, one, 1, reps, &bad);
        printf("%zu,cckey,1,%.0f,%.0f\n", n, r.wall, r.cpu);
        time_cckey(&w, every, all, 1, &bad);
        r = time_cckey(&w, every, all, reps, &bad);
        printf("%zu,cckey,%u,%.0f,%.0f\n", n, all, r.wall, r.cpu);
        fflush(stdout);
        unbuild(&w);
    }
    cckey_batch_config_free(one);
    cckey_batch_config_free(every);
    return bad;
}
