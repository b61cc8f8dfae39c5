/* The PNG plot: two matrix files (workload x candidate) for bench/plot.gp.
 * gnuplot is optional; without it the CSV and table are the results. */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Candidate columns of one kind of workload, in order of first appearance. */
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

static int write_matrix(const char *path, int kinds, bool gbps, size_t *ncols)
{
    const char *cols[64];
    size_t nc = columns(kinds, cols, 64);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs("workload", f);
    for (size_t c = 0; c < nc; c++) fprintf(f, " %s", cols[c]);
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
            if (hit) fprintf(f, " %.6g", gbps ? hit->gbps : hit->per_s);
            else fputs(" -", f);
        }
        fputc('\n', f);
    }
    *ncols = nc;
    return fclose(f) == 0 ? 0 : -1;
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
    char msgs[64], keys[64];
    snprintf(msgs, sizeof msgs, "%s/msgs.dat", dir);
    snprintf(keys, sizeof keys, "%s/keys.dat", dir);
    size_t nm = 0, nk = 0;
    if (write_matrix(msgs, BENCH_WL_MSGS, true, &nm) == 0 &&
        write_matrix(keys, BENCH_WL_SUITE | BENCH_WL_MEMO, false, &nk) == 0 && (nm || nk)) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd,
                 "gnuplot -e \"msgs='%s'; keys='%s'; nm=%zu; nk=%zu; out='%s'; heading='cckey_bench %s, %u threads'\" "
                 "'%s' 2>&1",
                 msgs, keys, nm, nk, o->png, o->quick ? "--quick" : o->smoke ? "--smoke" : "full", o->threads,
                 o->plot_script);
        if (system(cmd) == 0) printf("plot: wrote %s\n", o->png);
        else printf("plot: gnuplot failed; no plot (the CSV has every number)\n");
    } else {
        printf("plot: nothing to plot\n");
    }
    unlink(msgs);
    unlink(keys);
    rmdir(dir);
}
