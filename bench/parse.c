/* Manifest parsing alone: cckey's strict parser (host/cli/manifest/json.c)
 * against simdjson On-Demand iterate_many, on the same JSON Lines file in
 * memory, one thread each, every field of every line walked (strings
 * decoded). Both walks must report the same strings and bytes before any
 * time is taken. Rates are the best of the repetitions, candidates
 * interleaved so that load on a shared machine falls on both.
 *
 * Usage: cckey_bench_parse MANIFEST [REPS]   (bench/cli/gen_manifest.py
 * writes the manifest) */
#include "cli/manifest/manifest.h"
#include "parse_walk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* What the CLI's reader does per line, minus the tuple checks: find the
 * end, drop a CR, skip blank lines, parse, and read every field the parse
 * handed out. (A raw NUL always fails the parse; the reader looks for one
 * only then, to say so.) */
static int walk_ours(const char *buf, size_t len, parse_walk_sum *s)
{
    mj_parser ps = {0};
    char *out = NULL;
    size_t out_cap = 0;
    int rc = 0;
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(buf + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - buf) : len, n = end - at;
        const char *line = buf + at;
        at = end + 1;
        if (n && line[n - 1] == '\r') n--;
        if (!n) continue;
        if (n > out_cap) {
            free(out);
            out_cap = n * 2;
            if (!(out = malloc(out_cap))) { rc = -1; break; }
        }
        mj_line j;
        size_t bad;
        char what[160];
        if (mj_parse(&ps, line, n, out, &j, &bad, what, sizeof what)) {
            fprintf(stderr, "ours: line at byte %zu: %s\n", (size_t)(line - buf), what);
            rc = -1;
            break;
        }
        const mj_member *m[] = {&j.device, &j.name, &j.source, &j.source_file, &j.language};
        for (size_t k = 0; k < sizeof m / sizeof *m; k++)
            if (m[k]->present && m[k]->kind == MJ_STRING) parse_walk_add(s, (const char *)m[k]->str.ptr, m[k]->str.len);
        for (size_t k = 0; k < j.n_opts; k++) {
            parse_walk_add(s, (const char *)j.opts[k].key.ptr, j.opts[k].key.len);
            parse_walk_add(s, (const char *)j.opts[k].value.ptr, j.opts[k].value.len);
        }
        s->lines++;
    }
    free(out);
    mj_parser_free(&ps);
    return rc;
}

typedef struct cand {
    const char *name;
    int threads;
    double best_wall, best_cpu;
    parse_walk_sum sum;
} cand;

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help")) {
        fprintf(stderr, "usage: %s MANIFEST [REPS]\n", argv[0]);
        return argc < 2 ? 2 : 0;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (reps < 1) reps = 1;
    size_t len;
    char *buf = slurp(argv[1], &len);
    if (!buf) {
        perror(argv[1]);
        return 1;
    }
    cand c[3] = {{"cckey-manifest_json", 1, 1e9, 1e9, {0}},
                 {"simdjson-iterate_many", 1, 1e9, 1e9, {0}},
                 {"simdjson-threaded", 2, 1e9, 1e9, {0}}};
    size_t nc = 1;
    parse_sj *sj = NULL, *sj_thr = NULL;
#ifdef CCKEY_BENCH_HAVE_SIMDJSON
    sj = parse_sj_new(buf, len, 0);
    sj_thr = parse_sj_new(buf, len, 1);
    if (!sj || !sj_thr) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    nc = 3;
#endif
    /* simdjson needs each document inside one batch: the longest line. */
    size_t longest = 0;
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(buf + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - buf) : len;
        if (end - at > longest) longest = end - at;
        at = end + 1;
    }
    size_t batch = longest + 1 > 1000000 ? longest + 1 : 1000000;
    for (int r = 0; r < reps; r++) {
        for (size_t k = 0; k < nc; k++) {
            parse_walk_sum s = {0};
            char err[200] = "";
            double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
            int rc = k == 0 ? walk_ours(buf, len, &s) : parse_sj_walk(k == 1 ? sj : sj_thr, batch, &s, err, sizeof err);
            double wall = now(CLOCK_MONOTONIC) - w0, cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
            if (rc) {
                fprintf(stderr, "%s failed: %s\n", c[k].name, err);
                return 1;
            }
            if (wall < c[k].best_wall) c[k].best_wall = wall;
            if (cpu < c[k].best_cpu) c[k].best_cpu = cpu;
            c[k].sum = s;
        }
    }
    for (size_t k = 1; k < nc; k++)
        if (memcmp(&c[k].sum, &c[0].sum, sizeof c[0].sum)) {
            fprintf(stderr, "%s walked different fields: lines %llu/%llu strings %llu/%llu bytes %llu/%llu\n", c[k].name,
                    (unsigned long long)c[k].sum.lines, (unsigned long long)c[0].sum.lines,
                    (unsigned long long)c[k].sum.strings, (unsigned long long)c[0].sum.strings,
                    (unsigned long long)c[k].sum.bytes, (unsigned long long)c[0].sum.bytes);
            return 1;
        }
    printf("manifest %s: %llu lines, %.1f MB, %llu strings (%.1f MB decoded); best of %d\n", argv[1],
           (unsigned long long)c[0].sum.lines, len / 1e6, (unsigned long long)c[0].sum.strings, c[0].sum.bytes / 1e6,
           reps);
    printf("%-24s %4s %8s %12s %9s %8s %14s %10s\n", "candidate", "thr", "wall_s", "lines/s", "MB/s", "cpu_s",
           "lines/cpu_s", "x_ours_cpu");
    for (size_t k = 0; k < nc; k++)
        printf("%-24s %4d %8.3f %12.0f %9.0f %8.3f %14.0f %9.2fx\n", c[k].name, c[k].threads, c[k].best_wall,
               c[k].sum.lines / c[k].best_wall, len / 1e6 / c[k].best_wall, c[k].best_cpu,
               c[k].sum.lines / c[k].best_cpu, c[0].best_cpu / c[k].best_cpu);
    printf("cckey string kernel %s (CCKEY_FORCE_ISA picks a narrower one)\n", mj_str_kernel_isa());
#ifdef CCKEY_BENCH_HAVE_SIMDJSON
    printf("simdjson %s; batch size %zu\n", parse_sj_impl(), batch);
#endif
    if (nc == 1) printf("simdjson: not found at configure time; only cckey's parser ran\n");
    parse_sj_free(sj);
    parse_sj_free(sj_thr);
    free(buf);
    return 0;
}
