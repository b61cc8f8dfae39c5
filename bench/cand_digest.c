/* Digest candidates: OpenSSL (the baselines), the library's scalar MD5 and
 * each SIMD multi-buffer path, one thread each unless named otherwise.
 * Part of the bench's internal candidates, with isa.c and cuda_bench.c: the
 * MD5 paths have no public entry point, so these call md5/ directly. */
#include "bench.h"

#include <stdio.h>
#include <string.h>

static uint64_t run_ossl(const bench_candidate *c, const bench_workload *w, void *out, char *msg, size_t len)
{
    (void)msg, (void)len;
    bench_ossl_digests(w->msgs, w->n, out, c->threads);
    return w->n;
}

static uint64_t memo_compute_passes(const bench_workload *w)
{
    /* Loops that digest the source every time get fewer passes than hits,
     * so one rep takes about as long; rates are per item either way. */
    unsigned p = w->memo_passes / 64;
    return p ? p : 1;
}

static uint64_t run_ossl_keys(const bench_candidate *c, const bench_workload *w, void *out, char *msg, size_t len)
{
    (void)msg, (void)len;
    if (w->kind != BENCH_WL_MEMO) {
        bench_ossl_keys(w->tuples, w->n, out, c->threads);
        return w->n;
    }
    char (*keys)[CCKEY_KEY_LEN + 1] = out;
    uint64_t passes = memo_compute_passes(w);
    for (uint64_t p = 0; p < passes; p++)
        for (size_t i = 0; i < w->n; i++) bench_ossl_key(keys[i], &w->tuples[i]);
    return passes * w->n;
}

static uint64_t run_scalar(const bench_candidate *c, const bench_workload *w, void *out, char *msg, size_t len)
{
    (void)c, (void)msg, (void)len;
    uint8_t (*d)[CCKEY_MD5_DIGEST] = out;
    for (size_t i = 0; i < w->n; i++) cckey_md5(w->msgs[i].ptr, w->msgs[i].len, d[i]);
    return w->n;
}

static uint64_t run_isa(const bench_candidate *c, const bench_workload *w, void *out, char *msg, size_t len)
{
    (void)msg, (void)len;
    bench_isa_digest(c->param, w->msgs, w->n, out);
    return w->n;
}

static uint64_t run_many(const bench_candidate *c, const bench_workload *w, void *out, char *msg, size_t len)
{
    (void)c;
    cckey_md5_many(w->msgs, w->n, out);
    snprintf(msg, len, "dispatch picks %s", bench_isa_active());
    return w->n;
}

static const char *isa_unavailable(const bench_candidate *c, char *why, size_t len)
{
    (void)why, (void)len;
    return bench_isa_unavailable(c->param);
}

static size_t add(bench_candidate *list, size_t n, size_t cap, bench_candidate c)
{
    if (n < cap) list[n++] = c;
    return n;
}

size_t bench_digest_candidates(bench_candidate *list, size_t cap, unsigned threads)
{
    size_t n = 0;
    n = add(list, n, cap, (bench_candidate){"openssl-1t", BENCH_ROLE_OSSL1, BENCH_WL_MSGS, BENCH_OUT_DIGEST, 1, 0, NULL, run_ossl});
    n = add(list, n, cap, (bench_candidate){"openssl-mt", BENCH_ROLE_OSSLN, BENCH_WL_MSGS, BENCH_OUT_DIGEST, threads, 0, NULL, run_ossl});
    n = add(list, n, cap, (bench_candidate){"openssl-1t", BENCH_ROLE_OSSL1, BENCH_WL_SUITE | BENCH_WL_MEMO, BENCH_OUT_KEY, 1, 0, NULL, run_ossl_keys});
    n = add(list, n, cap, (bench_candidate){"openssl-mt", BENCH_ROLE_OSSLN, BENCH_WL_SUITE, BENCH_OUT_KEY, threads, 0, NULL, run_ossl_keys});
    n = add(list, n, cap, (bench_candidate){"scalar", BENCH_ROLE_CANDIDATE, BENCH_WL_MSGS, BENCH_OUT_DIGEST, 1, 0, NULL, run_scalar});
    for (int isa = 0; isa < bench_isa_count(); isa++) {
        bench_candidate c = {"", BENCH_ROLE_CANDIDATE, BENCH_WL_MSGS, BENCH_OUT_DIGEST, 1, isa, isa_unavailable, run_isa};
        snprintf(c.name, sizeof c.name, "simd-%s", bench_isa_name(isa));
        /* The scalar entry of the ISA table is the scalar candidate above. */
        if (strcmp(bench_isa_name(isa), "scalar") != 0) n = add(list, n, cap, c);
    }
    n = add(list, n, cap, (bench_candidate){"simd-auto", BENCH_ROLE_CANDIDATE, BENCH_WL_MSGS, BENCH_OUT_DIGEST, 1, 0, NULL, run_many});
    return n;
}
