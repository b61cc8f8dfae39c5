/* --gpu: the device parts of the benchmark, for bench/gpu.sh.
 *
 *  1. end to end: 4 GiB of 4 KiB messages through the device backend
 *     (packing, copies, kernel, copy back), next to the CPU and OpenSSL, and
 *     against the pinned host-to-device bandwidth when the backend exposes a
 *     probe (gpu_hooks.h);
 *  2. kernel only, on device-resident 1 KiB messages (hook as well);
 *  3. mixed 16 B..64 KiB lengths;
 *  4. auto vs cpu only vs device only across batch sizes 1..10^8 tuples, as
 *     far as the time budget and memory allow.
 * Every row is cross-checked against OpenSSL like the CPU bench. */
#include "bench.h"
#include "gpu_hooks.h"
#include "cckey_advanced.h"   /* cckey_backend_digests */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One backend's digests with no CPU fallback (a device row must measure
 * the device): cckey_backend_digests, the public check of an engine. */
static uint64_t run_digests(const bench_candidate *c, const bench_workload *w, void *out, char *msg, size_t len)
{
    cckey_backend_kind kind = (cckey_backend_kind)c->param;
    cckey_batch_config *cfg = NULL;
    cckey_status st = cckey_batch_config_new(&cfg);
    if (st == CCKEY_OK) st = cckey_batch_config_set_backend(cfg, kind);
    if (st == CCKEY_OK) st = cckey_batch_config_set_threads(cfg, c->threads);
    if (st == CCKEY_OK) st = cckey_backend_digests(cfg, w->views, w->n, out);
    if (st != CCKEY_OK)
        snprintf(msg, len, "%s digest: %s: %s", cckey_backend_name(kind), cckey_strerror(st), cckey_last_error());
    cckey_batch_config_free(cfg);
    return st == CCKEY_OK ? w->n : 0;
}

static uint64_t run_ossl_mt(const bench_candidate *c, const bench_workload *w, void *out, char *msg, size_t len)
{
    (void)msg, (void)len;
    bench_ossl_digests(w->msgs, w->n, out, c->threads);
    return w->n;
}

static void add_row(bench_result *r)
{
    bench_results_add(r);
    if (!strcmp(r->status, "ok"))
        printf("  %-16s %9.3f GB/s %12.4g %s/s  %s\n", r->candidate, r->gbps, r->per_s,
               r->output == BENCH_OUT_DIGEST ? "digests" : "keys", r->note);
    else
        printf("  %-16s %s: %s\n", r->candidate, r->status, r->note);
    fflush(stdout);
}

/* After every workload, so a run cut short by gpu.sh's time limit still
 * leaves its numbers behind. */
static void save_csv(const bench_opts *o)
{
    bench_results_ratios();
    if (bench_write_csv(o->csv) != 0) fprintf(stderr, "cckey_bench: cannot write %s\n", o->csv);
}

static void run_set(bench_workload *w, const bench_candidate *c, size_t nc, const bench_opts *o)
{
    char human[32];
    bench_human_bytes(human, sizeof human, (double)w->bytes);
    printf("%s: %zu items, %s\n", w->name, w->n, human);
    for (size_t i = 0; i < nc; i++) {
        if (!(c[i].kinds & w->kind)) continue;
        bench_result r = bench_measure(&c[i], w, o);
        add_row(&r);
    }
    save_csv(o);
}

static bench_result hook_row(const char *workload, const char *candidate, int kind, int output)
{
    bench_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.workload, sizeof r.workload, "%s", workload);
    snprintf(r.candidate, sizeof r.candidate, "%s", candidate);
    r.kind = kind;
    r.output = output;
    r.threads = 1;
    return r;
}

static const bench_result *find(const char *workload, const char *candidate)
{
    for (size_t i = 0; i < bench_results_count(); i++) {
        const bench_result *r = bench_results_at(i);
        if (!strcmp(r->workload, workload) && !strcmp(r->candidate, candidate) && !strcmp(r->status, "ok"))
            return r;
    }
    return NULL;
}

/* A host-to-device copy probe's row (r from hook_row): reps copies of
 * 1 GiB from `from` memory through probe, the hook named hook (NULL when
 * this build lacks it). The bandwidth, or 0 when the row is not ok. */
static double copy_row(bench_result *r, const bench_opts *o, cckey_status (*probe)(size_t, unsigned, double *),
                       const char *hook, unsigned reps, const char *from)
{
    double gbps = 0;
    if (o->gpu_kind != CCKEY_BACKEND_CUDA || !probe) {
        snprintf(r->status, sizeof r->status, "skip");
        if (o->gpu_kind != CCKEY_BACKEND_CUDA) snprintf(r->note, sizeof r->note, "CUDA only");
        else snprintf(r->note, sizeof r->note, "not in this build: no %s (bench/gpu_hooks.h)", hook);
        return 0;
    }
    if (probe((size_t)1 << 30, reps, &gbps) != CCKEY_OK || gbps <= 0) {
        snprintf(r->status, sizeof r->status, "FAIL");
        snprintf(r->note, sizeof r->note, "probe failed: %s", cckey_last_error());
        return 0;
    }
    snprintf(r->status, sizeof r->status, "ok");
    snprintf(r->note, sizeof r->note, "%u copies of 1 GiB from %s memory", reps, from);
    r->gbps = gbps;
    r->bytes = (double)reps * (1 << 30);
    r->seconds = r->bytes / (gbps * 1e9);
    r->items = reps;
    r->per_s = reps / r->seconds;
    r->samples = 1;
    return gbps;
}

/* Pinned host-to-device bandwidth, through the backend's probe. */
static double probe_h2d(const bench_opts *o)
{
    bench_result r = hook_row("pinned H2D copy", "cuda-h2d-probe", BENCH_WL_MSGS, BENCH_OUT_DIGEST);
    double gbps = copy_row(&r, o, cckey_cuda_bench_h2d, "cckey_cuda_bench_h2d", 8, "pinned");
    printf("pinned host-to-device bandwidth:\n");
    add_row(&r);

    /* The same from pageable memory: what a copy without staging costs. */
    bench_result pg = hook_row("pageable H2D copy", "cuda-h2d-pageable", BENCH_WL_MSGS, BENCH_OUT_DIGEST);
    double pg_gbps = copy_row(&pg, o, cckey_cuda_bench_h2d_pageable, "cckey_cuda_bench_h2d_pageable", 4, "malloc");
    if (pg_gbps > 0 && gbps > 0) {
        size_t at = strlen(pg.note);
        snprintf(pg.note + at, sizeof pg.note - at, ": %.0f%% of pinned", 100 * pg_gbps / gbps);
    }
    add_row(&pg);
    return gbps;
}

/* Kernel only: 1 KiB messages already on the device. */
static void kernel_only(const bench_opts *o, uint64_t total)
{
    bench_result r = hook_row("1KiB kernel-only", "cuda-kernel", BENCH_WL_MSGS, BENCH_OUT_DIGEST);
    printf("%s:\n", r.workload);
    if (o->gpu_kind != CCKEY_BACKEND_CUDA || !cckey_cuda_bench_kernel) {
        snprintf(r.status, sizeof r.status, "skip");
        snprintf(r.note, sizeof r.note, "%s", o->gpu_kind != CCKEY_BACKEND_CUDA
                     ? "CUDA only"
                     : "not in this build: no cckey_cuda_bench_kernel (bench/gpu_hooks.h)");
        add_row(&r);
        return;
    }
    bench_workload w;
    bench_wl_messages(&w, r.workload, 1024, total, 1, (size_t)-1, o->seed + 301, o->threads);
    double s = 0;
    {
        uint8_t (*out)[CCKEY_MD5_DIGEST] = bench_alloc(w.n * sizeof *out);
        memset(out, 0xee, w.n * sizeof *out);
        if (cckey_cuda_bench_kernel(w.msgs, w.n, o->min_time, out, &s) != CCKEY_OK || s <= 0) {
            snprintf(r.status, sizeof r.status, "FAIL");
            snprintf(r.note, sizeof r.note, "kernel probe failed: %s", cckey_last_error());
        } else {
            size_t bad = 0;
            for (size_t i = 0; i < w.n; i++) bad += memcmp(out[i], w.ref_dig[i], CCKEY_MD5_DIGEST) != 0;
            if (bad) {
                snprintf(r.status, sizeof r.status, "FAIL");
                snprintf(r.note, sizeof r.note, "%zu of %zu kernel digests differ from OpenSSL's", bad, w.n);
            } else {
                snprintf(r.status, sizeof r.status, "ok");
                snprintf(r.note, sizeof r.note, "best launch, data resident on the device");
                r.items = w.n;
                r.bytes = (double)w.bytes;
                r.seconds = s;
                r.samples = 1;
                r.gbps = r.bytes / s / 1e9;
                r.per_s = (double)w.n / s;
            }
        }
        free(out);
    }
    add_row(&r);
    bench_wl_free(&w);
}

/* Tuples with distinct 512-byte sources (overlapping windows of one random
 * buffer, so 10^8 of them fit in memory), 4 devices, 64 entry names. */
static void wl_sweep(bench_workload *w, size_t n, uint64_t seed, unsigned threads)
{
    enum { SRC = 512, STRIDE = 64, DEVS = 4, NAMES = 64 };
    memset(w, 0, sizeof *w);
    snprintf(w->name, sizeof w->name, "sweep n=%zu", n);
    w->kind = BENCH_WL_SUITE;
    size_t buf_len = n * STRIDE + SRC;
    uint8_t *buf = bench_alloc(buf_len);
    bench_fill(buf, buf_len, seed, threads);
    char *names = bench_alloc((DEVS + NAMES) * 32);
    cckey_bytes field[DEVS + NAMES];
    for (int i = 0; i < DEVS + NAMES; i++) {
        int l = i < DEVS ? snprintf(names + 32 * i, 32, "NVIDIA H200 (%d)|580.159.04", i)
                         : snprintf(names + 32 * i, 32, "kernel_%d", i - DEVS);
        field[i] = (cckey_bytes){names + 32 * i, (size_t)l};
    }
    w->tuples = calloc(n, sizeof *w->tuples);
    if (!w->tuples) {
        fprintf(stderr, "cckey_bench: out of memory for %zu tuples\n", n);
        exit(1);
    }
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        cckey_tuple *t = &w->tuples[i];
        t->device = field[i % DEVS];
        t->name = field[DEVS + (i / DEVS) % NAMES];
        t->source = (cckey_bytes){buf + i * STRIDE, SRC};
        bytes += t->device.len + t->name.len + SRC;
    }
    w->n = n;
    w->bytes = bytes;
    w->storage[0] = buf;
    w->storage[1] = names;
    bench_wl_reference(w, threads);
}

static double free_memory(void)
{
    long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (double)pages * (double)size : 0;
}

static void sweep(const bench_opts *o, const char *dev)
{
    bench_candidate c[3] = {
        {"batch-auto", BENCH_ROLE_CANDIDATE, BENCH_WL_SUITE, BENCH_OUT_KEY, o->threads, CCKEY_BACKEND_AUTO, bench_backend_unavailable, bench_run_batch},
        {"batch-cpu-mt", BENCH_ROLE_CANDIDATE, BENCH_WL_SUITE, BENCH_OUT_KEY, o->threads, CCKEY_BACKEND_CPU, bench_backend_unavailable, bench_run_batch},
        {"", BENCH_ROLE_CANDIDATE, BENCH_WL_SUITE, BENCH_OUT_KEY, o->threads, o->gpu_kind, bench_backend_unavailable, bench_run_batch},
    };
    snprintf(c[2].name, sizeof c[2].name, "batch-%s", dev);
    /* Short samples for small batches; a big batch's one checked run is its
     * measurement. */
    bench_opts so = *o;
    so.min_time = o->min_time / 4;
    so.single_shot = 1.0;
    double start = bench_now();
    printf("sweep: auto vs cpu only vs %s only, budget %.0f s\n", dev, o->gpu_budget);
    for (size_t n = 1; n <= 100000000; n *= 10) {
        double step_start = bench_now();
        bench_workload w;
        wl_sweep(&w, n, o->seed + n, o->threads);
        run_set(&w, c, 3, &so);
        bench_wl_free(&w);
        double step = bench_now() - step_start, spent = bench_now() - start;
        /* Work grows tenfold per step; stop before the budget or memory ends. */
        double next_s = step * 10 * 1.5;   /* big batches scale a little worse than linearly */
        double next_bytes = (double)n * 10 * 700;
        if (n < 100000000 && spent + next_s > o->gpu_budget) {
            printf("sweep: stopping after n=%zu: n=%zu would take about %.0f s more (budget %.0f s, spent %.0f s)\n",
                   n, n * 10, next_s, o->gpu_budget, spent);
            break;
        }
        if (n < 100000000 && next_bytes > 0.6 * free_memory()) {
            printf("sweep: stopping after n=%zu: n=%zu needs about %.1f GiB, more than 60%% of free memory\n", n,
                   n * 10, next_bytes / (1 << 30));
            break;
        }
    }
}

static void print_summary(const char *dev, double h2d)
{
    char e2e_name[32], dig[32], batch[32];
    snprintf(dig, sizeof dig, "%s-digest", dev);
    snprintf(batch, sizeof batch, "batch-%s", dev);
    printf("\n== gpu summary ==\n");
    const bench_result *r;
    for (size_t i = 0; i < bench_results_count(); i++) {
        r = bench_results_at(i);
        if (strncmp(r->workload, "4KiB", 4) == 0) {
            snprintf(e2e_name, sizeof e2e_name, "%s", r->workload);
            break;
        }
    }
    const bench_result *e2e = find(e2e_name, dig), *cpu = find(e2e_name, "cpu-digest-mt");
    if (e2e) {
        printf("%-44s %8.2f GB/s", "end to end, 4 KiB messages, device digest", e2e->gbps);
        if (h2d > 0) printf("  = %.0f%% of pinned H2D (%.2f GB/s)", 100 * e2e->gbps / h2d, h2d);
        else printf("  (pinned H2D: no probe in this build)");
        if (cpu) printf("  %.2fx cpu-digest-mt", e2e->gbps / cpu->gbps);
        printf("\n");
    }
    if ((r = find(e2e_name, batch))) printf("%-44s %8.2f GB/s  %.4g keys/s\n", "end to end, 4 KiB, keys (make_keys)", r->gbps, r->per_s);
    if ((r = find("1KiB kernel-only", "cuda-kernel")))
        printf("%-44s %8.2f GB/s  %.4g digests/s\n", "kernel only, device-resident 1 KiB", r->gbps, r->per_s);
    else
        printf("%-44s %8s  (no hook in this build, or not measured)\n", "kernel only, device-resident 1 KiB", "-");
    const bench_result *mixed = find("mixed 16B-64KiB", dig), *mcpu = find("mixed 16B-64KiB", "cpu-digest-mt");
    if (mixed) {
        printf("%-44s %8.2f GB/s", "mixed 16 B..64 KiB, device digest", mixed->gbps);
        if (mcpu) printf("  %.2fx cpu-digest-mt", mixed->gbps / mcpu->gbps);
        printf("\n");
    }
    printf("\n%-12s %14s %14s %14s  %s\n", "tuples", "auto keys/s", "cpu keys/s", "device keys/s", "auto ran on");
    for (size_t i = 0; i < bench_results_count(); i++) {
        r = bench_results_at(i);
        if (strncmp(r->workload, "sweep", 5) != 0 || strcmp(r->candidate, "batch-auto") != 0) continue;
        const bench_result *cp = find(r->workload, "batch-cpu-mt"), *dv = find(r->workload, batch);
        const char *on = strstr(r->note, "ran on ");
        printf("%-12s %14.4g", r->workload + 8, r->per_s);
        if (cp) printf(" %14.4g", cp->per_s);
        else printf(" %14s", "-");
        if (dv) printf(" %14.4g", dv->per_s);
        else printf(" %14s", "-");
        printf("  %s\n", on ? on + 7 : strcmp(r->status, "ok") ? r->status : "?");
    }
}

int bench_gpu_main(const bench_opts *in)
{
    bench_opts o = *in;
    const char *dev = cckey_backend_name((cckey_backend_kind)o.gpu_kind);
    bench_candidate probe = {"", 0, 0, 0, 1, o.gpu_kind, NULL, NULL};
    char why[512] = "";
    const char *no = bench_backend_unavailable(&probe, why, sizeof why);
    if (no) {
        printf("cckey_bench --gpu: the %s backend cannot run here: %s\n", dev, no);
        /* The hooks are linked or not whatever the machine: say which, so a
         * CPU-only build check shows that bench/gpu.sh will have them. */
        const struct {
            const char *name;
            bool linked;
        } hooks[] = {{"cckey_cuda_bench_h2d", cckey_cuda_bench_h2d != NULL},
                     {"cckey_cuda_bench_h2d_pageable", cckey_cuda_bench_h2d_pageable != NULL},
                     {"cckey_cuda_bench_kernel", cckey_cuda_bench_kernel != NULL}};
        for (size_t i = 0; i < sizeof hooks / sizeof *hooks; i++)
            printf("  %-30s %s\n", hooks[i].name,
                   hooks[i].linked ? "skip: linked, but no device to run it on" : "skip: not in this build (built without CUDA)");
        printf("cckey_bench --gpu: nothing measured (exit 77: skipped)\n");
        return 77;
    }
    cckey_device info[8];
    size_t count = 0;
    if (cckey_devices(NULL, (cckey_backend_kind)o.gpu_kind, info, 8, &count) == CCKEY_OK)
        for (size_t i = 0; i < count && i < 8; i++)
            printf("%s device %u: %s (%s, %s)%s\n", dev, info[i].index, info[i].name, info[i].driver,
                   info[i].platform, info[i].selected ? " [chosen]" : "");
    printf("cckey_bench --gpu: %u host threads, min %.2f s per sample, best of %d, sweep budget %.0f s\n",
           o.threads, o.min_time, o.samples, o.gpu_budget);
    double start = bench_now();

    bench_candidate c[6] = {
        {"openssl-mt", BENCH_ROLE_OSSLN, BENCH_WL_MSGS, BENCH_OUT_DIGEST, o.threads, 0, NULL, run_ossl_mt},
        {"cpu-digest-mt", BENCH_ROLE_CANDIDATE, BENCH_WL_MSGS, BENCH_OUT_DIGEST, o.threads, CCKEY_BACKEND_CPU, NULL, run_digests},
        {"", BENCH_ROLE_CANDIDATE, BENCH_WL_MSGS, BENCH_OUT_DIGEST, o.threads, o.gpu_kind, bench_backend_unavailable, run_digests},
        {"batch-cpu-mt", BENCH_ROLE_CANDIDATE, BENCH_WL_MSGS, BENCH_OUT_KEY, o.threads, CCKEY_BACKEND_CPU, bench_backend_unavailable, bench_run_batch},
        {"", BENCH_ROLE_CANDIDATE, BENCH_WL_MSGS, BENCH_OUT_KEY, o.threads, o.gpu_kind, bench_backend_unavailable, bench_run_batch},
        /* The other device backend, where the same GPU also speaks OpenCL. */
        {"opencl-digest", BENCH_ROLE_CANDIDATE, BENCH_WL_MSGS, BENCH_OUT_DIGEST, o.threads, CCKEY_BACKEND_OPENCL, bench_backend_unavailable, run_digests},
    };
    snprintf(c[2].name, sizeof c[2].name, "%s-digest", dev);
    snprintf(c[4].name, sizeof c[4].name, "batch-%s", dev);
    size_t nc = o.gpu_kind == CCKEY_BACKEND_OPENCL ? 5 : 6;

    double h2d = probe_h2d(&o);

    bench_workload w;
    char name[32];
    char human[16];
    bench_human_bytes(human, sizeof human, (double)o.gpu_bytes);
    snprintf(name, sizeof name, "4KiB x %s e2e", human);
    bench_wl_messages(&w, name, 4096, o.gpu_bytes, 1, (size_t)-1, o.seed + 300, o.threads);
    run_set(&w, c, nc, &o);
    bench_wl_free(&w);

    kernel_only(&o, o.gpu_bytes / 4);

    bench_wl_messages(&w, "mixed 16B-64KiB", 0, o.gpu_bytes / 4, 1, (size_t)-1, o.seed + 302, o.threads);
    run_set(&w, c, nc, &o);
    bench_wl_free(&w);

    sweep(&o, dev);
    printf("gpu bench done in %.0f s\n", bench_now() - start);

    bench_results_ratios();
    if (bench_write_csv(o.csv) == 0) printf("csv: wrote %s\n", o.csv);
    const char *outdir = getenv("OUT");
    if (outdir && *outdir) {
        char path[4096];
        const char *base = strrchr(o.csv, '/');
        snprintf(path, sizeof path, "%s/%s", outdir, base ? base + 1 : o.csv);
        if (strcmp(path, o.csv) != 0 && bench_write_csv(path) == 0) printf("csv: wrote %s\n", path);
    }
    bench_print_table(stdout);
    print_summary(dev, h2d);
    int failures = bench_failures();
    if (failures) printf("\n%d GPU bench row(s) FAILED (output differed from OpenSSL's or an error)\n", failures);
    return failures ? 1 : 0;
}
