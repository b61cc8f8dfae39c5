/* cckey selftest: random batches on every available backend, each digest
 * (cckey_backend_digests, no fallback) compared with the library's
 * streaming MD5 (cckey_digest_*, the portable scalar code the SIMD and
 * device paths are checked against everywhere). Public API only. */
#include "cli.h"
#include "cckey_advanced.h"

#include <getopt.h>
#include "json_out.h"
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

static void usage(FILE *f)
{
    fputs("usage: cckey selftest [--backend B] [--seed N] [-j N] [--format FMT]\n"
          "\n"
          "Hash random batches on each available backend and compare every digest with\n"
          "the CPU reference: every length 0..300, the MD5 block boundaries, long\n"
          "messages around the device's long-message threshold, an empty batch, all-\n"
          "duplicate batches, a batch of many chunks, and keys through cckey_make_keys.\n"
          "Prints a line per check and the throughput seen.\n"
          "\n"
          "  -b, --backend B   only this backend: cpu, opencl or cuda (default: all; an\n"
          "                    unavailable one is skipped, or fails when named here)\n"
          "      --seed N      random seed (default: from the clock; printed)\n"
          "  -j, --jobs N      host threads (default: all cores; --threads is the same)\n"
          "      --format FMT  text (default); json: one summary {\"seed\", \"passed\",\n"
          "                    \"failed\", \"backends\": [{\"backend\", \"status\", \"passed\",\n"
          "                    \"failed\", \"reason\"}]}; jsonl: one backend object a line.\n"
          "                    The per-check lines then go to standard error.\n"
          "      --json        the same as --format json\n"
          "  -h, --help        show this help\n"
          "\n"
          "Exit status: 0 when every check passes, 1 when one fails or a named backend\n"
          "is unavailable, 2 for bad usage.\n",
          f);
}

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next(rng *r)
{
    /* splitmix64 */
    uint64_t z = (r->s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* A batch whose messages point into one random pool. */
typedef struct batch {
    cckey_bytes *msgs;
    size_t n, cap;
    uint8_t *pool;
    size_t pool_len;
} batch;

static bool batch_init(batch *b, rng *r, size_t pool_len)
{
    memset(b, 0, sizeof *b);
    b->pool = malloc(pool_len + 1);
    if (!b->pool) return false;
    b->pool_len = pool_len;
    for (size_t i = 0; i < pool_len; i += 8) {
        uint64_t v = next(r);
        memcpy(b->pool + i, &v, pool_len - i < 8 ? pool_len - i : 8);
    }
    return true;
}

static bool add(batch *b, rng *r, size_t len)
{
    if (len > b->pool_len) return false;
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 256;
        cckey_bytes *m = realloc(b->msgs, cap * sizeof *m);
        if (!m) return false;
        b->msgs = m, b->cap = cap;
    }
    size_t off = (size_t)(next(r) % (b->pool_len - len + 1));
    b->msgs[b->n++] = (cckey_bytes){b->pool + off, len};
    return true;
}

static void batch_free(batch *b)
{
    free(b->msgs);
    free(b->pool);
}

typedef struct session {
    cckey_backend_kind kind;
    cckey_batch_config *cfg;   /* the environment's settings, this backend, the threads */
    unsigned threads;
    unsigned passed, failed;
} session;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Digest on the backend, compare with scalar MD5; print one line. Returns
 * the seconds the backend took, or a negative value on failure. */
static double check(session *s, const char *what, const cckey_bytes *msgs, size_t n)
{
    unsigned char (*out)[CCKEY_DIGEST_LEN] = malloc((n ? n : 1) * sizeof *out);
    if (!out) {
        printf("  FAIL  %-34s out of memory\n", what);
        s->failed++;
        return -1;
    }
    double t0 = now();
    cckey_status st = cckey_backend_digests(s->cfg, msgs, n, out);
    double dt = now() - t0;
    size_t bad = 0, first = 0;
    for (size_t i = 0; st == CCKEY_OK && i < n; i++) {
        unsigned char ref[CCKEY_DIGEST_LEN];
        cckey_digest d;
        cckey_digest_init(&d);
        cckey_digest_update(&d, msgs[i].ptr, msgs[i].len);
        cckey_digest_final(&d, NULL, ref);
        if (memcmp(ref, out[i], sizeof ref) != 0 && bad++ == 0) first = i;
    }
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; i++) bytes += msgs[i].len;
    free(out);
    if (st != CCKEY_OK) {
        printf("  FAIL  %-34s %s: %s\n", what, cckey_strerror(st), cckey_last_error());
    } else if (bad) {
        printf("  FAIL  %-34s %zu of %zu digests differ (first: message %zu, length %zu)\n", what, bad, n, first,
               n ? msgs[first].len : 0);
    } else {
        printf("  ok    %-34s %zu messages, %.1f MB, %.3f s\n", what, n, (double)bytes / 1e6, dt);
        s->passed++;
        return dt;
    }
    s->failed++;
    return -1;
}

static void check_keys(session *s, rng *r)
{
    enum { N = 2000 };
    cckey_tuple *t = calloc(N, sizeof *t);
    cckey_option *opts = calloc(2 * N, sizeof *opts);
    char (*keys)[CCKEY_KEY_LEN + 1] = calloc(N, sizeof *keys);
    batch pool;
    cckey_batch_config *cfg = NULL;
    if (!t || !opts || !keys || !batch_init(&pool, r, 1 << 16) || cckey_batch_config_new(&cfg) != CCKEY_OK ||
        cli_config_from_env(cfg) != CLI_OK) {
        printf("  FAIL  %-34s out of memory\n", "keys through cckey_make_keys");
        s->failed++;
        free(t), free(opts), free(keys);
        return;
    }
    for (size_t i = 0; i < N; i++) {
        cckey_bytes m[5];
        size_t lens[5] = {next(r) % 3 * 9, 1 + next(r) % 30, next(r) % 3000, 1 + next(r) % 4, next(r) % 12};
        for (int k = 0; k < 5; k++) {
            add(&pool, r, lens[k]);
            m[k] = pool.msgs[pool.n - 1];
        }
        t[i].device = (cckey_bytes){m[0].ptr, m[0].len};
        t[i].name = (cckey_bytes){m[1].ptr, m[1].len};
        t[i].source = (cckey_bytes){m[2].ptr, m[2].len};
        t[i].n_options = next(r) % 3;
        t[i].options = opts + 2 * i;
        for (size_t k = 0; k < t[i].n_options; k++)
            opts[2 * i + k] = (cckey_option){{m[3].ptr, m[3].len}, {m[4].ptr, m[4].len}};
    }
    /* The last 200 tuples are one tuple repeated: an all-duplicate tail. */
    for (size_t i = N - 200; i < N; i++) t[i] = t[N - 201];
    cckey_batch_config_set_backend(cfg, s->kind);
    cckey_batch_config_set_threads(cfg, s->threads);
    cckey_status st = cckey_make_keys(keys, t, N, cfg);
    size_t bad = 0;
    for (size_t i = 0; st == CCKEY_OK && i < N; i++) {
        char want[CCKEY_KEY_LEN + 1];
        cckey_make_key(want, t[i].device, t[i].name, t[i].source, t[i].options, t[i].n_options);
        bad += strcmp(want, keys[i]) != 0;
    }
    const char *what = "keys through cckey_make_keys";
    if (st != CCKEY_OK) printf("  FAIL  %-34s %s: %s\n", what, cckey_strerror(st), cckey_last_error());
    else if (bad) printf("  FAIL  %-34s %zu of %d keys differ from cckey_make_key\n", what, bad, N);
    else if (*cckey_batch_config_warning(cfg)) printf("  FAIL  %-34s %s\n", what, cckey_batch_config_warning(cfg));
    else printf("  ok    %-34s %d tuples, used %s\n", what, N, cckey_batch_config_used(cfg));
    if (st == CCKEY_OK && !bad && !*cckey_batch_config_warning(cfg)) s->passed++;
    else s->failed++;
    cckey_batch_config_free(cfg);
    batch_free(&pool);
    free(t), free(opts), free(keys);
}

static void run_backend(session *s, uint64_t seed)
{
    rng r = {seed};
    batch b;
    if (!batch_init(&b, &r, (size_t)4 << 20)) {
        printf("  FAIL  out of memory\n");
        s->failed++;
        return;
    }
    /* First, and timed apart: the first device call sets the device up. */
    b.n = 0;
    check(s, "empty batch", b.msgs, 0);
    for (size_t len = 0; len <= 300; len++) add(&b, &r, len);
    double first = check(s, "every length 0..300", b.msgs, b.n);

    b.n = 0;
    for (size_t blocks = 1; blocks <= 1024; blocks = blocks < 4 ? blocks + 1 : blocks * 2)
        for (long d = -9; d <= 9; d++) add(&b, &r, (size_t)((long)(64 * blocks) + d));
    check(s, "MD5 block boundaries", b.msgs, b.n);

    b.n = 0;
    size_t t = cckey_batch_config_long_bytes(s->cfg);
    const size_t longs[] = {t - 1, t, t + 1, 3 * t + 5, (size_t)3 << 20};
    for (size_t i = 0; i < sizeof longs / sizeof *longs; i++) {
        add(&b, &r, longs[i]);
        for (int k = 0; k < 50; k++) add(&b, &r, next(&r) % 2000);
    }
    check(s, "long messages among short ones", b.msgs, b.n);

    b.n = 0;
    add(&b, &r, 100);
    for (int i = 0; i < 20000; i++) {
        add(&b, &r, 0);
        b.msgs[b.n - 1] = b.msgs[0];
    }
    check(s, "all duplicates (one pointer)", b.msgs, b.n);
    b.n = 0;
    for (int i = 0; i < 20000; i++) add(&b, &r, 0);
    check(s, "all empty", b.msgs, b.n);

    /* Many chunks: shrink the device's chunk unless the user chose one. */
    const char *env_chunk = getenv("CCKEY_GPU_CHUNK_BYTES");
    bool user_chunk = env_chunk && *env_chunk;
    size_t chunk = cckey_batch_config_chunk_bytes(s->cfg);
    if (!user_chunk) cckey_batch_config_set_chunk_bytes(s->cfg, (size_t)64 << 10);
    b.n = 0;
    for (int i = 0; i < 6000; i++) add(&b, &r, next(&r) % 700);
    check(s, user_chunk ? "many chunks (CCKEY_GPU_CHUNK_BYTES)" : "many chunks (64 KiB each)", b.msgs, b.n);
    cckey_batch_config_set_chunk_bytes(s->cfg, chunk);

    check_keys(s, &r);

    /* Throughput: a mixed batch of short and medium messages. */
    b.n = 0;
    uint64_t bytes = 0;
    while (bytes < ((uint64_t)24 << 20)) {
        size_t len = next(&r) % 4 ? next(&r) % 256 : next(&r) % 4096;
        add(&b, &r, len);
        bytes += len;
    }
    double dt = check(s, "throughput batch", b.msgs, b.n);
    if (dt > 0)
        printf("  throughput: %.1f MB/s, %.2f M messages/s (%zu messages, %.1f MB); first call %.3f s\n",
               (double)bytes / dt / 1e6, (double)b.n / dt / 1e6, b.n, (double)bytes / 1e6, first);
    batch_free(&b);
}

#define ST_NEXT (-1)   /* an option taken; anything else is the exit code */

/* What selftest's command line asks for. */
typedef struct st_args {
    cckey_backend_kind only;   /* AUTO: every backend that can run here */
    uint64_t seed;
    unsigned threads;
    cli_format fmt;
} st_args;

/* The counts over the backends run, and the exit code so far. */
/* One backend's line in the JSON output. */
typedef struct st_result {
    const char *backend, *status;
    unsigned passed, failed;
    char reason[512];   /* "": none */
} st_result;

typedef struct st_tally {
    unsigned passed, failed, ran;
    int rc;
    size_t n;
    st_result res[3];   /* cpu, opencl, cuda */
} st_tally;

static int st_option(st_args *a, int c, const char *arg)
{
    unsigned long v;
    switch (c) {
    case 'b':
        if (cckey_backend_from_name(arg, &a->only) == CCKEY_OK && a->only != CCKEY_BACKEND_AUTO) return ST_NEXT;
        cli_error("selftest: --backend wants cpu, opencl or cuda, not \"%s\"", arg);
        return CLI_USAGE;
    case 'S':
        if (!cli_parse_uint(arg, 0, ~0ul, &v)) {
            cli_error("selftest: --seed wants a number, not \"%s\"", arg);
            return CLI_USAGE;
        }
        a->seed = v;
        return ST_NEXT;
    case 'j':
        if (!cli_parse_uint(arg, 1, 4096, &v)) {
            cli_error("selftest: --jobs wants a number from 1 to 4096, not \"%s\"", arg);
            return CLI_USAGE;
        }
        a->threads = (unsigned)v;
        return ST_NEXT;
    case 'F': return cli_format_parse("selftest", arg, CLI_FMT_ALL, &a->fmt) ? ST_NEXT : CLI_USAGE;
    case 'J': a->fmt = CLI_JSON; return ST_NEXT;
    case 'h': usage(stdout); return CLI_OK;
    default: return CLI_USAGE;
    }
}

/* One backend: skipped (or, when asked for alone, unavailable) where it
 * cannot run here, else every check; its line goes to backends. */
static void st_backend(cckey_batch_config *cfg, cckey_backend_kind kind, const st_args *a, st_tally *t)
{
    const char *name = cckey_backend_name(kind);
    bool asked = a->only != CCKEY_BACKEND_AUTO;
    cckey_batch_config_set_backend(cfg, kind);
    /* No message: only whether the backend can run here. */
    if (cckey_backend_digests(cfg, NULL, 0, NULL) != CCKEY_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", cckey_last_error());
        printf("%s: %s: %s\n", name, asked ? "UNAVAILABLE" : "skipped", why);
        if (asked) t->rc = CLI_FAIL;
        st_result *r = &t->res[t->n++];
        *r = (st_result){.backend = name, .status = asked ? "unavailable" : "skipped"};
        snprintf(r->reason, sizeof r->reason, "%s", why);
        return;
    }
    printf("%s:\n", name);
    session s = {.kind = kind, .cfg = cfg, .threads = a->threads};
    run_backend(&s, a->seed);
    t->passed += s.passed, t->failed += s.failed, t->ran++;
    t->res[t->n++] = (st_result){
        .backend = name, .status = s.failed ? "failed" : "ok", .passed = s.passed, .failed = s.failed};
}

static void st_result_json(cli_json *w, const st_result *r)
{
    cli_json_object(w);
    cli_json_kstr(w, "backend", r->backend);
    cli_json_kstr(w, "status", r->status);
    cli_json_kint(w, "passed", r->passed);
    cli_json_kint(w, "failed", r->failed);
    if (r->reason[0]) cli_json_kstr(w, "reason", r->reason);
    cli_json_end(w);
}

/* The JSON document (or, for jsonl, one line per backend) on standard
 * output, put back where it was (saved_stdout). */
static int st_write_json(const st_args *a, const st_tally *t, int saved_stdout)
{
    int rc = t->rc;
    fflush(stdout);
    dup2(saved_stdout, STDOUT_FILENO);
    close(saved_stdout);
    cli_json w;
    cli_json_init(&w, a->fmt == CLI_JSONL ? CLI_JSON_COMPACT : CLI_JSON_INDENT, false);
    if (a->fmt == CLI_JSONL) {
        for (size_t i = 0; i < t->n; i++) {
            st_result_json(&w, &t->res[i]);
            if (cli_json_put(&w, stdout, "\n") != 0) rc = CLI_FAIL;
        }
    } else {
        cli_json_object(&w);
        cli_json_kint(&w, "seed", (long long)a->seed);
        cli_json_kint(&w, "passed", t->passed);
        cli_json_kint(&w, "failed", t->failed);
        cli_json_key(&w, "backends");
        cli_json_array(&w);
        for (size_t i = 0; i < t->n; i++) st_result_json(&w, &t->res[i]);
        cli_json_end(&w);
        cli_json_end(&w);
        if (cli_json_put(&w, stdout, "\n") != 0) rc = CLI_FAIL;
    }
    cli_json_free(&w);
    fflush(stdout);
    return rc;
}

/* A config with the environment's device settings and the threads asked
 * for; NULL with the exit code in *rc. */
static cckey_batch_config *st_config(const st_args *a, int *rc)
{
    cckey_batch_config *cfg = NULL;
    if (cckey_batch_config_new(&cfg) != CCKEY_OK) {
        cli_error("selftest: out of memory");
        *rc = CLI_FAIL;
        return NULL;
    }
    *rc = cli_config_from_env(cfg);
    if (*rc == CLI_OK) {
        cckey_batch_config_set_threads(cfg, a->threads);
        return cfg;
    }
    cckey_batch_config_free(cfg);
    return NULL;
}

/* JSON out: the check lines go to standard error, the document alone to
 * standard output. The saved standard output, or -1 with the error printed. */
static int st_redirect(void)
{
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    if (saved >= 0 && dup2(STDERR_FILENO, STDOUT_FILENO) >= 0) return saved;
    if (saved >= 0) close(saved);
    cli_error("selftest: cannot set up the output");
    return -1;
}

static int st_run(const st_args *a, cckey_batch_config *cfg)
{
    int saved_stdout = -1;
    if (a->fmt != CLI_TEXT && (saved_stdout = st_redirect()) < 0) return CLI_FAIL;
    printf("cckey selftest, seed %llu\n", (unsigned long long)a->seed);
    static const cckey_backend_kind all[] = {CCKEY_BACKEND_CPU, CCKEY_BACKEND_OPENCL, CCKEY_BACKEND_CUDA};
    st_tally t = {.rc = CLI_OK};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (a->only == CCKEY_BACKEND_AUTO || all[i] == a->only) st_backend(cfg, all[i], a, &t);
    fflush(stdout);
    if (t.failed) {
        printf("selftest: %u of %u checks FAILED\n", t.failed, t.passed + t.failed);
        t.rc = CLI_FAIL;
    } else if (t.rc != CLI_OK) {
        printf("selftest: FAILED: the %s backend is unavailable\n", cckey_backend_name(a->only));
    } else {
        printf("selftest: %u checks passed on %u backend(s)\n", t.passed, t.ran);
    }
    return a->fmt != CLI_TEXT ? st_write_json(a, &t, saved_stdout) : t.rc;
}

int cli_cmd_selftest(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"backend", required_argument, NULL, 'b'},
        {"seed", required_argument, NULL, 'S'},
        {"threads", required_argument, NULL, 'j'},
        {"jobs", required_argument, NULL, 'j'},
        {"format", required_argument, NULL, 'F'},
        {"json", no_argument, NULL, 'J'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    st_args a = {.only = CCKEY_BACKEND_AUTO, .seed = (uint64_t)time(NULL), .fmt = CLI_TEXT};
    int rc = ST_NEXT, c;
    optind = 1;
    while (rc == ST_NEXT && (c = cli_getopt("selftest", argc, argv, "b:j:h", longopts)) != -1)
        rc = st_option(&a, c, optarg);
    if (rc != ST_NEXT) return rc;
    if (optind < argc) {
        cli_error("selftest: unexpected argument \"%s\" (see 'cckey help selftest')", argv[optind]);
        return CLI_USAGE;
    }
    cckey_batch_config *cfg = st_config(&a, &rc);
    if (!cfg) return rc;
    rc = st_run(&a, cfg);
    cckey_batch_config_free(cfg);
    return rc;
}
