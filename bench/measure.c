/* The harness: warm up, cross-check, then the best of a few samples, each
 * repeating the candidate until a minimum time has passed. */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Mismatches of out against the reference, and the first one's index. */
static size_t cross_check(const bench_candidate *c, const bench_workload *w, const void *out, size_t *first)
{
    size_t bad = 0;
    for (size_t i = 0; i < w->n; i++) {
        int differs = c->output == BENCH_OUT_DIGEST
                          ? memcmp((const uint8_t (*)[CCKEY_MD5_DIGEST])out + i, w->ref_dig[i], CCKEY_MD5_DIGEST)
                          : memcmp((const char (*)[CCKEY_KEY_LEN + 1])out + i, w->ref_key[i], CCKEY_KEY_LEN + 1);
        if (differs && bad++ == 0) *first = i;
    }
    return bad;
}

bench_result bench_measure(const bench_candidate *c, const bench_workload *w, const bench_opts *o)
{
    bench_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.workload, sizeof r.workload, "%s", w->name);
    snprintf(r.candidate, sizeof r.candidate, "%s", c->name);
    r.role = c->role;
    r.output = c->output;
    r.kind = w->kind;
    r.threads = c->threads;

    char why[200] = "";
    const char *no = c->unavailable ? c->unavailable(c, why, sizeof why) : NULL;
    if (no) {
        snprintf(r.status, sizeof r.status, "skip");
        snprintf(r.note, sizeof r.note, "%s", no);
        return r;
    }
    size_t item = c->output == BENCH_OUT_DIGEST ? CCKEY_MD5_DIGEST : CCKEY_KEY_LEN + 1;
    void *out = bench_alloc(w->n * item);
    /* A candidate that writes nothing must not pass on stale bytes. */
    memset(out, 0xee, w->n * item);

    char msg[200] = "";
    double t0 = bench_now();
    uint64_t items = c->run(c, w, out, msg, sizeof msg);
    double warm = bench_now() - t0;
    if (items == 0) {
        snprintf(r.status, sizeof r.status, "FAIL");
        snprintf(r.note, sizeof r.note, "%s", *msg ? msg : "the candidate reported an error");
        free(out);
        return r;
    }
    if (o->inject && strcmp(o->inject, c->name) == 0) ((uint8_t *)out)[(w->n / 2) * item + 3] ^= 0x40;
    size_t first = 0, bad = cross_check(c, w, out, &first);
    if (bad) {
        snprintf(r.status, sizeof r.status, "FAIL");
        snprintf(r.note, sizeof r.note, "%zu of %zu %s differ from OpenSSL's (first: item %zu)", bad, w->n,
                 c->output == BENCH_OUT_DIGEST ? "digests" : "keys", first);
        free(out);
        return r;
    }

    /* A rep far longer than the minimum already averages out the noise that
     * repeated samples are for; one sample then keeps the run short. Sweeps
     * over huge batches go further and take the checked run itself. */
    bool single = o->single_shot > 0 && warm > o->single_shot;
    int samples = single ? 0 : warm > 3 * o->min_time ? 1 : o->samples;
    double best = single ? warm : 0;
    for (int s = 0; s < samples; s++) {
        unsigned reps = 0;
        double start = bench_now(), elapsed;
        do {
            if (c->run(c, w, out, msg, sizeof msg) != items) {
                snprintf(r.status, sizeof r.status, "FAIL");
                snprintf(r.note, sizeof r.note, "a timed repetition failed: %s", msg);
                free(out);
                return r;
            }
            reps++;
            elapsed = bench_now() - start;
        } while (elapsed < o->min_time);
        double per_rep = elapsed / reps;
        if (s == 0 || per_rep < best) best = per_rep;
    }
    free(out);

    snprintf(r.status, sizeof r.status, "ok");
    snprintf(r.note, sizeof r.note, "%s", msg);
    r.items = items;
    /* Memo loops do several passes over the same tuples: bytes scale with items. */
    r.bytes = (double)w->bytes * (double)items / (double)w->n;
    r.seconds = best > 0 ? best : 1e-9;
    r.samples = single ? 1 : samples;
    if (single) snprintf(r.note, sizeof r.note, "single run; %s", msg);
    r.gbps = r.bytes / r.seconds / 1e9;
    r.per_s = (double)items / r.seconds;
    return r;
}
