/* Results: ratios, CSV, the table and the targets. */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bench_result *results;
static size_t n_results, cap_results;

void bench_results_add(const bench_result *r)
{
    if (n_results == cap_results) {
        cap_results = cap_results ? 2 * cap_results : 64;
        bench_result *grown = realloc(results, cap_results * sizeof *results);
        if (!grown) {
            fprintf(stderr, "cckey_bench: out of memory\n");
            exit(1);
        }
        results = grown;
    }
    results[n_results++] = *r;
}

size_t bench_results_count(void) { return n_results; }
bench_result *bench_results_at(size_t i) { return &results[i]; }

static const bench_result *find(const char *workload, const char *candidate)
{
    for (size_t i = 0; i < n_results; i++)
        if (strcmp(results[i].workload, workload) == 0 && strcmp(results[i].candidate, candidate) == 0 &&
            strcmp(results[i].status, "ok") == 0)
            return &results[i];
    return NULL;
}

static const bench_result *find_role(const char *workload, int role)
{
    for (size_t i = 0; i < n_results; i++)
        if (results[i].role == role && strcmp(results[i].workload, workload) == 0 &&
            strcmp(results[i].status, "ok") == 0)
            return &results[i];
    return NULL;
}

void bench_results_ratios(void)
{
    for (size_t i = 0; i < n_results; i++) {
        bench_result *r = &results[i];
        if (strcmp(r->status, "ok") != 0) continue;
        const bench_result *b;
        if ((b = find_role(r->workload, BENCH_ROLE_OSSL1))) r->x_ossl1 = r->per_s / b->per_s;
        if ((b = find_role(r->workload, BENCH_ROLE_OSSLN))) r->x_ossln = r->per_s / b->per_s;
        if ((b = find_role(r->workload, BENCH_ROLE_NAIVE))) r->x_naive = r->per_s / b->per_s;
    }
}

int bench_failures(void)
{
    int bad = 0;
    for (size_t i = 0; i < n_results; i++) bad += strcmp(results[i].status, "FAIL") == 0;
    return bad;
}

static const char *role_name(int role)
{
    switch (role) {
    case BENCH_ROLE_OSSL1: return "baseline-openssl-1t";
    case BENCH_ROLE_OSSLN: return "baseline-openssl-mt";
    case BENCH_ROLE_NAIVE: return "baseline-naive";
    default: return "candidate";
    }
}

static void csv_text(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_num(FILE *f, double v, bool present)
{
    if (present) fprintf(f, ",%.6g", v);
    else fputs(",", f);
}

int bench_write_csv(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs("workload,candidate,role,threads,status,items_per_rep,bytes_per_rep,seconds_per_rep,samples,"
          "gb_per_s,digests_per_s,keys_per_s,x_openssl_1t,x_openssl_mt,x_naive,note\n",
          f);
    for (size_t i = 0; i < n_results; i++) {
        const bench_result *r = &results[i];
        bool ok = strcmp(r->status, "ok") == 0;
        csv_text(f, r->workload);
        fputc(',', f);
        csv_text(f, r->candidate);
        fprintf(f, ",%s,%u,%s", role_name(r->role), r->threads, r->status);
        if (ok) fprintf(f, ",%llu,%.0f,%.9g,%d", (unsigned long long)r->items, r->bytes, r->seconds, r->samples);
        else fputs(",,,,", f);
        csv_num(f, r->gbps, ok);
        csv_num(f, r->per_s, ok && r->output == BENCH_OUT_DIGEST);
        csv_num(f, r->per_s, ok && r->output == BENCH_OUT_KEY);
        csv_num(f, r->x_ossl1, r->x_ossl1 > 0);
        csv_num(f, r->x_ossln, r->x_ossln > 0);
        csv_num(f, r->x_naive, r->x_naive > 0);
        fputc(',', f);
        csv_text(f, r->note);
        fputc('\n', f);
    }
    return fclose(f) == 0 ? 0 : -1;
}

static void ratio(FILE *f, double x)
{
    if (x > 0) fprintf(f, " %8.2fx", x);
    else fprintf(f, " %9s", "-");
}

void bench_print_table(FILE *f)
{
    fprintf(f, "\n%-20s %-15s %3s %9s %12s %12s %9s %9s %9s  %s\n", "workload", "candidate", "thr", "GB/s",
            "digests/s", "keys/s", "x ossl-1t", "x ossl-mt", "x naive", "note");
    const char *last = "";
    for (size_t i = 0; i < n_results; i++) {
        const bench_result *r = &results[i];
        if (strcmp(r->status, "skip") == 0) continue;
        if (strcmp(r->workload, last) != 0 && *last) fputc('\n', f);
        last = r->workload;
        fprintf(f, "%-20s %-15s %3u", r->workload, r->candidate, r->threads);
        if (strcmp(r->status, "ok") != 0) {
            fprintf(f, " %s: %s\n", r->status, r->note);
            continue;
        }
        fprintf(f, " %9.3f", r->gbps);
        if (r->output == BENCH_OUT_DIGEST) fprintf(f, " %12.4g %12s", r->per_s, "-");
        else fprintf(f, " %12s %12.4g", "-", r->per_s);
        ratio(f, r->x_ossl1);
        ratio(f, r->x_ossln);
        ratio(f, r->x_naive);
        fprintf(f, "  %s\n", r->note);
    }
    /* Each skipped candidate once, with its reason. */
    bool header = false;
    for (size_t i = 0; i < n_results; i++) {
        const bench_result *r = &results[i];
        if (strcmp(r->status, "skip") != 0) continue;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(results[j].status, "skip") == 0 && strcmp(results[j].candidate, r->candidate) == 0;
        if (seen) continue;
        if (!header) fprintf(f, "\nskipped:\n"), header = true;
        fprintf(f, "  %-15s %s\n", r->candidate, r->note);
    }
}

/* The fastest SIMD path (forced or dispatched) on one thread. */
static const bench_result *best_simd(const char *workload)
{
    const bench_result *best = NULL;
    for (size_t i = 0; i < n_results; i++) {
        const bench_result *r = &results[i];
        if (strncmp(r->candidate, "simd-", 5) == 0 && strcmp(r->workload, workload) == 0 &&
            strcmp(r->status, "ok") == 0 && (!best || r->per_s > best->per_s))
            best = r;
    }
    return best;
}

static const char *suite_name(void)
{
    for (size_t i = 0; i < n_results; i++)
        if (results[i].kind == BENCH_WL_SUITE) return results[i].workload;
    return "suite";
}

static int target(FILE *f, const char *what, double need, const bench_result *a, const bench_result *b,
                  bool bytes, bool smoke)
{
    if (!a || !b) {
        fprintf(f, "  n/a   %-72s need >= %5.2fx  (not measured in this run)\n", what, need);
        return 0;
    }
    double x = bytes ? a->gbps / b->gbps : a->per_s / b->per_s;
    bool pass = x >= need;
    fprintf(f, "  %-5s %-72s need >= %5.2fx  got %7.2fx  (%s / %s)\n", smoke ? "info" : pass ? "PASS" : "MISS",
            what, need, x, a->candidate, b->candidate);
    return !pass && !smoke;
}

int bench_print_targets(FILE *f, bool smoke)
{
    fprintf(f, "\ntargets%s:\n", smoke ? " (smoke sizes: informational only)" : "");
    int miss = 0;
    const bench_result *mixed = best_simd("mixed 16B-64KiB");
    miss += target(f, "SIMD 1 thread vs OpenSSL 1 thread, 16 KiB messages, GB/s", 5.0, best_simd("16KiB"),
                   find("16KiB", "openssl-1t"), true, smoke);
    miss += target(f, "SIMD 1 thread vs OpenSSL 1 thread, 16 B (<= 55 B) messages, digests/s", 10.0,
                   best_simd("16B"), find("16B", "openssl-1t"), false, smoke);
    miss += target(f, "batch, all threads vs naive make_key loop, suite, keys/s", 50.0,
                   find(suite_name(), "batch-cpu-mt"), find(suite_name(), "naive-make_key"), false, smoke);
    miss += target(f, "mixed 16 B..64 KiB vs fixed 1 KiB, same SIMD path, 1 thread, GB/s", 0.7, mixed,
                   mixed ? find("1KiB", mixed->candidate) : NULL, true, smoke);
    miss += target(f, "memo hit vs make_key, 4 KiB source, keys/s", 10.0, find("memo 4KiB", "memo-hit-1t"),
                   find("memo 4KiB", "naive-make_key"), false, smoke);
    miss += target(f, "memo hits, 2 threads vs 1 thread, keys/s", 1.6, find("memo 4KiB", "memo-hit-2t"),
                   find("memo 4KiB", "memo-hit-1t"), false, smoke);
    return miss;
}
