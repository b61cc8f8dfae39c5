/* cckey_bench: the library against OpenSSL and against itself, on fixed,
 * mixed and suite-shaped workloads. How to run it: bench/RESULTS.md. */
#include "bench.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CCKEY_BENCH_PLOT_GP
#define CCKEY_BENCH_PLOT_GP "bench/plot.gp"
#endif

static void usage(FILE *f)
{
    fputs("usage: cckey_bench [--quick | --smoke] [OPTIONS]\n"
          "       cckey_bench --gpu [OPTIONS]     (the GPU parts; see bench/gpu.sh)\n"
          "\n"
          "Compares the library's MD5 paths and key APIs with OpenSSL and with a\n"
          "naive cckey_make_key loop. Every candidate's output is checked against\n"
          "OpenSSL's once per workload; a mismatch fails the run (exit 1).\n"
          "\n"
          "  --quick            small workloads, short samples (under 30 s on 2 cores)\n"
          "  --smoke            tiny workloads, one sample: a correctness check (ctest)\n"
          "  --csv FILE         CSV output (default bench-results.csv; also written to $OUT)\n"
          "  --png FILE         plot (default: the CSV's name with .png); --no-plot to skip\n"
          "  --plot-script FILE gnuplot script (default: the source tree's bench/plot.gp)\n"
          "  --threads N        what \"all threads\" means (default: online cores)\n"
          "  --min-time S       seconds per sample (default 0.5, --quick 0.08)\n"
          "  --samples N        best of N samples (default 3)\n"
          "  --only TEXT        only workloads whose name contains TEXT\n"
          "  --seed N           workload seed\n"
          "  --inject-mismatch CANDIDATE  flip a bit of that candidate's output (tests the check)\n"
          "  --gpu-budget S     seconds for the --gpu size sweep (default 120)\n"
          "  --gpu-backend B    the device --gpu measures: cuda (default) or opencl\n"
          "                     (opencl with a small --gpu-bytes is a dry run on PoCL)\n"
          "  --gpu-bytes N      --gpu end-to-end workload, bytes (default 4 GiB)\n"
          "Exit status: 0 success (targets missed are reported, not failed), 1 a\n"
          "candidate's output differed or it failed, 2 bad usage.\n",
          f);
}

static int parse_num(const char *flag, const char *arg, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = arg ? strtod(arg, &end) : 0;
    if (!arg || errno || end == arg || *end || v < lo || v > hi) {
        fprintf(stderr, "cckey_bench: %s needs a number in [%g, %g]\n", flag, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* A byte count with an optional K, M or G (binary) suffix. */
static int parse_bytes(const char *flag, const char *arg, uint64_t *out)
{
    char *end;
    errno = 0;
    double v = arg ? strtod(arg, &end) : 0;
    if (arg && !errno && end != arg) {
        double scale = *end == 'K' ? 1 << 10 : *end == 'M' ? 1 << 20 : *end == 'G' ? 1 << 30 : 1;
        if (scale > 1) end++;
        v *= scale;
        if (!*end && v >= (1 << 20) && v <= 1e12) {
            *out = (uint64_t)v;
            return 0;
        }
    }
    fprintf(stderr, "cckey_bench: %s needs a size from 1M to 1e12 bytes (suffix K, M or G)\n", flag);
    return -1;
}

static int parse_args(int argc, char **argv, bench_opts *o, bool *no_plot, bool *min_time_set)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        double v;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--quick")) o->quick = true;
        else if (!strcmp(a, "--smoke")) o->smoke = true;
        else if (!strcmp(a, "--gpu")) o->gpu = true;
        else if (!strcmp(a, "--no-plot")) *no_plot = true;
        else if (!strcmp(a, "--csv") && next) o->csv = argv[++i];
        else if (!strcmp(a, "--png") && next) o->png = argv[++i];
        else if (!strcmp(a, "--plot-script") && next) o->plot_script = argv[++i];
        else if (!strcmp(a, "--only") && next) o->only = argv[++i];
        else if (!strcmp(a, "--inject-mismatch") && next) o->inject = argv[++i];
        else if (!strcmp(a, "--threads")) {
            if (parse_num(a, next, 1, 4096, &v)) return -1;
            o->threads = (unsigned)v, i++;
        } else if (!strcmp(a, "--min-time")) {
            if (parse_num(a, next, 0, 60, &v)) return -1;
            o->min_time = v, *min_time_set = true, i++;
        } else if (!strcmp(a, "--samples")) {
            if (parse_num(a, next, 1, 100, &v)) return -1;
            o->samples = (int)v, i++;
        } else if (!strcmp(a, "--seed")) {
            if (parse_num(a, next, 0, 9e15, &v)) return -1;
            o->seed = (uint64_t)v, i++;
        } else if (!strcmp(a, "--gpu-backend") && next) {
            cckey_backend_kind k;
            if (cckey_backend_from_name(argv[++i], &k) != CCKEY_OK || k == CCKEY_BACKEND_AUTO || k == CCKEY_BACKEND_CPU) {
                fprintf(stderr, "cckey_bench: --gpu-backend takes cuda or opencl\n");
                return -1;
            }
            o->gpu_kind = (int)k;
        } else if (!strcmp(a, "--gpu-bytes")) {
            if (parse_bytes(a, next, &o->gpu_bytes)) return -1;
            i++;
        } else if (!strcmp(a, "--gpu-budget")) {
            if (parse_num(a, next, 1, 3600, &v)) return -1;
            o->gpu_budget = v, i++;
        } else {
            fprintf(stderr, "cckey_bench: unknown or incomplete option \"%s\" (see --help)\n", a);
            return -1;
        }
    }
    return 0;
}

typedef struct sizes {
    uint64_t total;        /* bytes per message workload */
    size_t min_count, max_count;
    size_t S, E, D, O;
    unsigned memo_passes;
} sizes;

static sizes sizes_for(const bench_opts *o)
{
    /* Enough messages to fill every SIMD lane of every thread even at 1 MiB. */
    size_t lanes = 16 * (size_t)(o->threads > 2 ? o->threads : 2);
    if (o->smoke) return (sizes){256 << 10, 4, 4096, 8, 2, 2, 2, 64};
    if (o->quick) return (sizes){8 << 20, lanes, 128 << 10, 64, 8, 4, 4, 4096};
    return (sizes){64 << 20, lanes, 1 << 20, 256, 8, 8, 8, 16384};
}

static int run_workload(bench_workload *w, const bench_candidate *cands, size_t nc, const bench_opts *o)
{
    char human[32];
    bench_human_bytes(human, sizeof human, (double)w->bytes);
    printf("%s: %zu items, %s\n", w->name, w->n, human);
    fflush(stdout);
    for (size_t i = 0; i < nc; i++) {
        if (!(cands[i].kinds & w->kind)) continue;
        bench_result r = bench_measure(&cands[i], w, o);
        bench_results_add(&r);
        if (!strcmp(r.status, "ok"))
            printf("  %-15s %9.3f GB/s %12.4g %s/s  %s\n", r.candidate, r.gbps, r.per_s,
                   r.output == BENCH_OUT_DIGEST ? "digests" : "keys", r.note);
        else
            printf("  %-15s %s: %s\n", r.candidate, r.status, r.note);
        fflush(stdout);
    }
    bench_wl_free(w);
    /* The CSV so far, so an interrupted run still leaves its numbers. */
    bench_results_ratios();
    bench_write_csv(o->csv);
    return 0;
}

static bool wanted(const bench_opts *o, const char *name)
{
    return !o->only || strstr(name, o->only);
}

static void write_outputs(bench_opts *o)
{
    if (bench_write_csv(o->csv) == 0) printf("csv: wrote %s\n", o->csv);
    else fprintf(stderr, "cckey_bench: cannot write %s: %s\n", o->csv, strerror(errno));
    bench_plot(o);
    const char *dir = getenv("OUT");
    if (!dir || !*dir) return;
    const char *base = strrchr(o->csv, '/');
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, base ? base + 1 : o->csv);
    if (bench_write_csv(path) == 0) printf("csv: wrote %s\n", path);
    if (o->png) {
        const char *pb = strrchr(o->png, '/');
        char png[4096];
        snprintf(png, sizeof png, "%s/%s", dir, pb ? pb + 1 : o->png);
        bench_opts copy = *o;
        copy.png = png;
        bench_plot(&copy);
    }
}

int main(int argc, char **argv)
{
    bench_opts o = {.samples = 3, .csv = "bench-results.csv", .plot_script = CCKEY_BENCH_PLOT_GP,
                    .gpu_budget = 120, .seed = 20240601,
                    .gpu_kind = CCKEY_BACKEND_CUDA, .gpu_bytes = (uint64_t)4 << 30};
    bool no_plot = false, min_time_set = false;
    if (parse_args(argc, argv, &o, &no_plot, &min_time_set) != 0) return 2;
    if (!o.threads) o.threads = cckey_cpu_threads();
    if (!min_time_set) o.min_time = o.smoke ? 0 : o.quick ? 0.08 : 0.5;
    if (o.smoke) o.samples = 1;
    static char png[4096];
    if (no_plot) o.png = NULL;
    else if (!o.png) {
        snprintf(png, sizeof png, "%s", o.csv);
        char *dot = strrchr(png, '.'), *slash = strrchr(png, '/');
        if (dot && (!slash || dot > slash)) *dot = '\0';
        strncat(png, ".png", sizeof png - strlen(png) - 1);
        o.png = png;
    }
    if (o.gpu) return bench_gpu_main(&o);

    printf("cckey_bench %s: mode %s, %u threads, min %.2f s per sample, best of %d, md5 dispatch: %s\n",
           cckey_version(), o.smoke ? "smoke" : o.quick ? "quick" : "full", o.threads, o.min_time, o.samples,
           bench_isa_active());
    bench_candidate cands[64];
    size_t nc = bench_digest_candidates(cands, 64, o.threads);
    nc += bench_key_candidates(cands + nc, 64 - nc, o.threads);
    nc += bench_memo_candidates(cands + nc, 64 - nc);

    sizes z = sizes_for(&o);
    static const struct {
        const char *name;
        size_t len;
    } fixed[] = {{"16B", 16}, {"64B", 64}, {"1KiB", 1024}, {"16KiB", 16384}, {"1MiB", 1 << 20}, {"mixed 16B-64KiB", 0}};
    double start = bench_now();
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
        if (!wanted(&o, fixed[i].name)) continue;
        bench_workload w;
        bench_wl_messages(&w, fixed[i].name, fixed[i].len, z.total, z.min_count, z.max_count, o.seed + i, o.threads);
        run_workload(&w, cands, nc, &o);
    }
    bench_workload w;
    if (wanted(&o, "suite")) {
        bench_wl_suite(&w, z.S, z.E, z.D, z.O, o.seed + 100, o.threads);
        run_workload(&w, cands, nc, &o);
    }
    if (wanted(&o, "memo 4KiB")) {
        bench_wl_memo(&w, z.memo_passes, o.seed + 200);
        run_workload(&w, cands, nc, &o);
    }
    printf("done in %.1f s\n", bench_now() - start);

    bench_results_ratios();
    write_outputs(&o);
    printf("\nresults (%s mode, %u threads; best of %d samples of >= %.2f s; ratios are items/s over the baseline on the same workload):",
           o.smoke ? "smoke" : o.quick ? "quick" : "full", o.threads, o.samples, o.min_time);
    bench_print_table(stdout);
    bench_print_targets(stdout, o.smoke);
    int failures = bench_failures();
    if (failures) {
        printf("\n%d candidate run(s) FAILED: their output differed from OpenSSL's or they reported an error\n", failures);
        return 1;
    }
    return 0;
}
