/* The PNG plot: three matrix files (workload x candidate) for bench/plot.gp:
 * GB/s on message workloads, keys/s on key workloads, and every candidate's
 * speed-up over its workload's baseline. A candidate keeps one colour in
 * every panel (its place in the run's list of candidates), and the title
 * names the CPU and the MD5 path in use. gnuplot is optional; without it
 * the CSV and table are the results. */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_COLS 64
enum { VAL_GBPS, VAL_PER_S, VAL_SPEEDUP };

/* Candidate columns of some kinds of workload, in order of first appearance. */
static size_t columns(int kinds, const char **names, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < bench_results_count(); i++) {
        const bench_result *r = bench_results_at(i);
        if (!(r->kind & kinds) || strcmp(r->status, "ok") != 0) continue;
        bool seen = false;
        for (size_t j = 0; j < n && !seen; j++) seen = strcmp(names[j], r->candidate) == 0;
        if (!seen && n < cap) names[n++] = r->candidate;
    }
    return n;
}

/* The speed-up shown: over OpenSSL on 1 thread for digests, over the naive
 * cckey_make_key loop for keys; 0 when the workload has no such baseline. */
static double value_of(const bench_result *r, int what)
{
    if (what == VAL_GBPS) return r->gbps;
    if (what == VAL_PER_S) return r->per_s;
    return (r->kind & BENCH_WL_MSGS) ? r->x_ossl1 : r->x_naive;
}

/* Writes the matrix; colors receives each column's colour, the 1-based
 * place of its candidate among all (space-separated, for gnuplot's word()). */
static int write_matrix(const char *path, int kinds, int what, size_t *ncols, char *colors, size_t colors_len)
{
    const char *all[MAX_COLS], *cols[MAX_COLS];
    size_t na = columns(BENCH_WL_MSGS | BENCH_WL_SUITE | BENCH_WL_MEMO, all, MAX_COLS);
    size_t nc = columns(kinds, cols, MAX_COLS);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs("workload", f);
    colors[0] = '\0';
    for (size_t c = 0; c < nc; c++) {
        fprintf(f, " %s", cols[c]);
        size_t place = 0;
        while (place < na && strcmp(all[place], cols[c]) != 0) place++;
        snprintf(colors + strlen(colors), colors_len - strlen(colors), "%s%zu", c ? " " : "", place + 1);
    }
    fputc('\n', f);
    const char *last = "";
    for (size_t i = 0; i < bench_results_count(); i++) {
        const bench_result *r = bench_results_at(i);
        if (!(r->kind & kinds) || strcmp(r->workload, last) == 0) continue;
        last = r->workload;
        fprintf(f, "\"%s\"", r->workload);
        for (size_t c = 0; c < nc; c++) {
            const bench_result *hit = NULL;
            for (size_t j = 0; j < bench_results_count() && !hit; j++) {
                const bench_result *q = bench_results_at(j);
                if (strcmp(q->workload, r->workload) == 0 && strcmp(q->candidate, cols[c]) == 0 &&
                    strcmp(q->status, "ok") == 0)
                    hit = q;
            }
            double v = hit ? value_of(hit, what) : 0;
            if (v > 0) fprintf(f, " %.6g", v);
            else fputs(" -", f);
        }
        fputc('\n', f);
    }
    *ncols = nc;
    return fclose(f) == 0 ? 0 : -1;
}

/* "Intel(R) Xeon(R) Processor" from /proc/cpuinfo; "unknown CPU" elsewhere.
 * Quotes are dropped: the name goes into a gnuplot string. */
static void cpu_name(char *buf, size_t len)
{
    snprintf(buf, len, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) != 0 || !colon) continue;
        char *p = colon + 1;
        while (*p == ' ' || *p == '\t') p++;
        p[strcspn(p, "\n")] = '\0';
        size_t n = 0;
        for (; *p && n + 1 < len; p++)
            if (*p != '\'' && *p != '"' && *p != '\\') buf[n++] = *p;
        buf[n] = '\0';
        break;
    }
    fclose(f);
}

void bench_plot(const bench_opts *o)
{
    if (!o->png) return;
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
        printf("plot: gnuplot is not installed; skipping %s (the CSV has every number)\n", o->png);
        return;
    }
    if (access(o->plot_script, R_OK) != 0) {
        printf("plot: no plot script at %s; skipping (pass --plot-script)\n", o->plot_script);
        return;
    }
    if (strchr(o->png, '\'') || strchr(o->plot_script, '\'')) {
        printf("plot: paths with a quote character are not supported; skipping\n");
        return;
    }
    char dir[] = "/tmp/cckey_bench.XXXXXX";
    if (!mkdtemp(dir)) {
        printf("plot: no temporary directory; skipping\n");
        return;
    }
    char msgs[64], keys[64], ratios[64], mc[256], kc[256], rc[256], cpu[160];
    snprintf(msgs, sizeof msgs, "%s/msgs.dat", dir);
    snprintf(keys, sizeof keys, "%s/keys.dat", dir);
    snprintf(ratios, sizeof ratios, "%s/ratios.dat", dir);
    cpu_name(cpu, sizeof cpu);
    size_t nm = 0, nk = 0, nr = 0;
    if (write_matrix(msgs, BENCH_WL_MSGS, VAL_GBPS, &nm, mc, sizeof mc) == 0 &&
        write_matrix(keys, BENCH_WL_SUITE | BENCH_WL_MEMO, VAL_PER_S, &nk, kc, sizeof kc) == 0 &&
        write_matrix(ratios, BENCH_WL_MSGS | BENCH_WL_SUITE | BENCH_WL_MEMO, VAL_SPEEDUP, &nr, rc, sizeof rc) == 0 &&
        (nm || nk)) {
        char cmd[4096];
        snprintf(cmd, sizeof cmd,
                 "gnuplot -e \"msgs='%s'; keys='%s'; ratios='%s'; nm=%zu; nk=%zu; nr=%zu; mc='%s'; kc='%s'; rc='%s'; "
                 "out='%s'; heading='cckey_bench %s, %u threads - %s, MD5 path %s'\" '%s' 2>&1",
                 msgs, keys, ratios, nm, nk, nr, mc, kc, rc, o->png, o->quick ? "--quick" : o->smoke ? "--smoke" : "full",
                 o->threads, cpu, cckey_cpu_isa(), o->plot_script);
        if (system(cmd) == 0) printf("plot: wrote %s\n", o->png);
        else printf("plot: gnuplot failed; no plot (the CSV has every number)\n");
    } else {
        printf("plot: nothing to plot\n");
    }
    unlink(msgs);
    unlink(keys);
    unlink(ratios);
    rmdir(dir);
}
