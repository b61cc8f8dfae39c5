/* Multi-buffer MD5: every path this CPU supports, forced one at a time,
 * against OpenSSL's MD5 (support.c) and the scalar reference. Batches are
 * shaped to hit the lane manager's corners: lengths around block and
 * padding boundaries, lane refill beside long messages, the scalar drain at
 * the end, fewer messages than lanes, and messages sharing memory. */
#include "support.h"
#include "md5/md5_mb.h"
#include "testing/testing.h"   /* cckey_md5_count */

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1u << 20)

static const cckey_isa all_isas[] = {CCKEY_ISA_SCALAR, CCKEY_ISA_SSE2, CCKEY_ISA_AVX2,
                                     CCKEY_ISA_AVX512, CCKEY_ISA_NEON};
#define N_ISAS (sizeof all_isas / sizeof all_isas[0])

static void hex_of(char out[CCKEY_HEX_LEN + 1], const uint8_t d[CCKEY_MD5_DIGEST])
{
    cckey_hex(out, d);
    out[CCKEY_HEX_LEN] = 0;
}

/* One batch through one path two ways (per call, and forced process-wide
 * through cckey_md5_many), each digest against both oracles. */
static void check_batch_isa(cckey_isa isa, const cckey_msg *msgs, size_t n, const char *what)
{
    uint8_t (*got)[CCKEY_MD5_DIGEST] = malloc((n ? n : 1) * sizeof *got);
    uint8_t (*got2)[CCKEY_MD5_DIGEST] = malloc((n ? n : 1) * sizeof *got2);
    cr_assert(got && got2);
    memset(got, 0xa5, n * sizeof *got);
    memset(got2, 0x5a, n * sizeof *got2);
    const char *name = cckey_md5_isa_label(isa);
    uint64_t before = cckey_md5_count;
    cr_assert_eq(cckey_md5_many_isa(isa, msgs, n, got), 0, "%s: path refused", name);
    cr_assert_eq(cckey_md5_count - before, n, "%s: %s: digest count", name, what);
    cr_assert_eq(cckey_md5_force_isa(isa), 0, "%s: force refused", name);
    cr_assert_str_eq(cckey_md5_isa_name(), name);
    cckey_md5_many(msgs, n, got2);
    cr_assert_eq(cckey_md5_force_isa(CCKEY_ISA_AUTO), 0);
    for (size_t i = 0; i < n; i++) {
        uint8_t ref[CCKEY_MD5_DIGEST];
        char want[CCKEY_HEX_LEN + 1], have[CCKEY_HEX_LEN + 1];
        cckey_test_md5_hex(msgs[i].ptr, msgs[i].len, want);
        hex_of(have, got[i]);
        cr_assert_str_eq(have, want, "%s: %s: message %zu of %zu (%zu bytes) vs OpenSSL", name,
                         what, i, n, msgs[i].len);
        cckey_md5(msgs[i].ptr, msgs[i].len, ref);
        cr_assert(memcmp(got[i], ref, CCKEY_MD5_DIGEST) == 0,
                  "%s: %s: message %zu (%zu bytes) vs scalar", name, what, i, msgs[i].len);
        cr_assert(memcmp(got2[i], ref, CCKEY_MD5_DIGEST) == 0,
                  "%s: %s: message %zu (%zu bytes) forced through cckey_md5_many", name, what,
                  i, msgs[i].len);
    }
    free(got);
    free(got2);
}

/* Every supported path; scalar always is, so this never checks nothing. */
static unsigned check_batch(const cckey_msg *msgs, size_t n, const char *what)
{
    unsigned paths = 0;
    for (size_t k = 0; k < N_ISAS; k++) {
        if (!cckey_md5_isa_supported(all_isas[k])) continue;
        check_batch_isa(all_isas[k], msgs, n, what);
        paths++;
    }
    return paths;
}

/* n messages of the given lengths, each in its own block of random bytes
 * (so a path reading another lane's bytes shows). */
static cckey_msg *make_msgs(cckey_test_arena *a, uint64_t *rng, const size_t *lens, size_t n)
{
    cckey_msg *m = cckey_test_alloc(a, n * sizeof *m + 1);
    for (size_t i = 0; i < n; i++) {
        cckey_bytes b = cckey_test_random_bytes(a, rng, lens[i]);
        m[i] = (cckey_msg){(const uint8_t *)b.ptr, b.len};
    }
    return m;
}

Test(md5_mb, paths_detected)
{
    unsetenv("CCKEY_FORCE_ISA");   /* a fresh process: detection has not run yet */
    cr_assert(cckey_md5_isa_supported(CCKEY_ISA_SCALAR));
#if defined(__x86_64__)
    cr_assert(cckey_md5_isa_supported(CCKEY_ISA_SSE2), "SSE2 is part of x86-64");
    cr_assert_geq(cckey_md5_isa_lanes(CCKEY_ISA_SSE2), 4);
#endif
#if defined(__aarch64__)
    cr_assert(cckey_md5_isa_supported(CCKEY_ISA_NEON), "NEON is part of AArch64");
#endif
    cr_assert_eq(cckey_md5_isa_lanes(CCKEY_ISA_SCALAR), 1);
    for (size_t k = 0; k < N_ISAS; k++) {
        cckey_isa isa = all_isas[k];
        cr_assert_eq(cckey_md5_isa_parse(cckey_md5_isa_label(isa)), isa);
        if (cckey_md5_isa_supported(isa)) cr_assert_gt(cckey_md5_isa_lanes(isa), 0);
        if (!cckey_md5_isa_supported(isa) || isa == CCKEY_ISA_SCALAR) continue;
        cr_assert(cckey_md5_isa_lanes(isa) <= CCKEY_MD5_MAX_LANES);
    }
    cr_assert_eq(cckey_md5_isa_parse("avx1024"), CCKEY_ISA_COUNT);
    /* Auto picks the widest path available. */
    cckey_isa best = CCKEY_ISA_SCALAR;
    for (size_t k = 0; k < N_ISAS; k++)
        if (cckey_md5_isa_supported(all_isas[k])) best = all_isas[k];
    cr_assert_eq(cckey_md5_active_isa(), best, "auto picked %s", cckey_md5_isa_name());
}

/* Each kernel alone (the wide one and its narrow half): one block per lane
 * from random chaining values, lane by lane against the scalar compressor,
 * with unaligned block pointers. */
Test(md5_mb, kernels_match_scalar_compress)
{
    uint64_t rng = 7;
    static uint8_t buf[CCKEY_MD5_MAX_LANES * 64 + 64];
    unsigned kernels = 0;
    for (size_t k = 0; k < N_ISAS; k++) {
        for (const cckey_md5_path *p = cckey_md5_path_for(all_isas[k]); p; p = p->narrow) {
            cr_assert(p->lanes >= 1 && p->lanes <= CCKEY_MD5_MAX_LANES);
            for (int round = 0; round < 20; round++) {
                uint32_t st[4][CCKEY_MD5_MAX_LANES], want[CCKEY_MD5_MAX_LANES][4];
                const uint8_t *blk[CCKEY_MD5_MAX_LANES];
                cckey_test_fill(&rng, buf, sizeof buf);
                cckey_test_fill(&rng, st, sizeof st);
                for (unsigned l = 0; l < p->lanes; l++) {
                    blk[l] = buf + cckey_test_below(&rng, sizeof buf - 64 + 1);
                    for (int w = 0; w < 4; w++) want[l][w] = st[w][l];
                    cckey_md5_compress_scalar(want[l], blk[l], 1);
                }
                p->kernel(st, blk);
                for (unsigned l = 0; l < p->lanes; l++)
                    for (int w = 0; w < 4; w++)
                        cr_assert_eq(st[w][l], want[l][w], "%s x%u: lane %u word %d",
                                     cckey_md5_isa_label(all_isas[k]), p->lanes, l, w);
            }
            kernels++;
        }
    }
#if defined(__x86_64__) || defined(__aarch64__)
    cr_assert_geq(kernels, 2, "no SIMD kernel was checked");
#endif
}

Test(md5_mb, unsupported_path_refused)
{
    static const uint8_t msg[] = "abc";
    cckey_msg m = {msg, 3};
    unsigned refused = 0;
    cckey_isa before = cckey_md5_active_isa();
    for (size_t k = 0; k < N_ISAS; k++) {
        cckey_isa isa = all_isas[k];
        if (cckey_md5_isa_supported(isa)) continue;
        uint8_t out[1][CCKEY_MD5_DIGEST];
        memset(out, 0xee, sizeof out);
        cr_assert_eq(cckey_md5_force_isa(isa), -1, "%s forced on a CPU without it",
                     cckey_md5_isa_label(isa));
        cr_assert_eq(cckey_md5_active_isa(), before, "a refused force changed the path");
        cr_assert_eq(cckey_md5_many_isa(isa, &m, 1, out), -1);
        for (size_t i = 0; i < CCKEY_MD5_DIGEST; i++) cr_assert_eq(out[0][i], 0xee);
        cr_assert_eq(cckey_md5_isa_lanes(isa), 0);
        refused++;
    }
    /* Values outside the enum are refused too (and make the test meaningful
     * on a CPU that has every path of its architecture). */
    cr_assert_eq(cckey_md5_force_isa(CCKEY_ISA_COUNT), -1);
    cr_assert_eq(cckey_md5_force_isa((cckey_isa)77), -1);
    cr_assert_eq(cckey_md5_active_isa(), before);
    cr_assert_gt(refused, 0, "no architecture has all of SSE2, AVX2, AVX-512 and NEON");
}

/* Criterion runs each test in a fresh process, so the variable is read here
 * before anything else triggered detection. */
Test(md5_mb, env_var_forces_path)
{
    /* Not the widest path anywhere, and always there: nothing may ask the
     * CPU before setenv, which would run detection early. */
#if defined(__x86_64__)
    const char *want = "sse2";
#else
    const char *want = "scalar";
#endif
    setenv("CCKEY_FORCE_ISA", want, 1);
    cr_assert_str_eq(cckey_md5_isa_name(), want);
    cr_assert_eq(cckey_md5_force_isa(CCKEY_ISA_SCALAR), 0);
    cr_assert_str_eq(cckey_md5_isa_name(), "scalar");
    cr_assert_eq(cckey_md5_force_isa(CCKEY_ISA_AUTO), 0);
    cr_assert_str_eq(cckey_md5_isa_name(), want, "auto goes back to the environment's choice");
}

Test(md5_mb, env_var_unknown_ignored)
{
    setenv("CCKEY_FORCE_ISA", "avx1024", 1);
    cckey_isa best = CCKEY_ISA_SCALAR;
    for (size_t k = 0; k < N_ISAS; k++)
        if (cckey_md5_isa_supported(all_isas[k])) best = all_isas[k];
    cr_assert_eq(cckey_md5_active_isa(), best);
}

Test(md5_mb, every_length_0_to_300)
{
    uint64_t rng = 1;
    cckey_test_arena a = {0};
    size_t lens[301];
    for (size_t i = 0; i <= 300; i++) lens[i] = i;   /* ascending: the worst order */
    cckey_msg *m = make_msgs(&a, &rng, lens, 301);
    cr_assert_geq(check_batch(m, 301, "lengths 0..300 ascending"), 1);
    /* The same messages longest first, and shuffled. */
    for (size_t i = 0; i < 150; i++) {
        cckey_msg t = m[i];
        m[i] = m[300 - i];
        m[300 - i] = t;
    }
    check_batch(m, 301, "lengths 300..0");
    for (size_t i = 300; i > 0; i--) {
        size_t j = cckey_test_below(&rng, i + 1);
        cckey_msg t = m[i];
        m[i] = m[j];
        m[j] = t;
    }
    check_batch(m, 301, "lengths 0..300 shuffled");
    cckey_test_arena_free(&a);
}

Test(md5_mb, block_and_padding_boundaries)
{
    static const size_t edges[] = {0,   1,   55,  56,  57,  63,  64,  65,  119,  120,  121,
                                   127, 128, 129, 183, 184, 191, 192, 193, 1023, 1024, 1025};
    const size_t ne = sizeof edges / sizeof edges[0];
    uint64_t rng = 2;
    cckey_test_arena a = {0};
    cckey_msg *m = make_msgs(&a, &rng, edges, ne);
    check_batch(m, ne, "boundaries");
    /* Each boundary alone filling every lane, so every lane pads the same way. */
    size_t same[40];
    for (size_t e = 0; e < ne; e++) {
        for (size_t i = 0; i < 40; i++) same[i] = edges[e];
        check_batch(make_msgs(&a, &rng, same, 40), 40, "one length in every lane");
    }
    cckey_test_arena_free(&a);
}

Test(md5_mb, long_messages_beside_refilled_lanes)
{
    uint64_t rng = 3;
    cckey_test_arena a = {0};
    /* Two long ones among many short ones: the short lanes refill hundreds
     * of times while the long ones run, then the end drains. */
    size_t lens[200];
    for (size_t i = 0; i < 200; i++) lens[i] = cckey_test_below(&rng, 700);
    lens[3] = 3 * MIB + 17;
    lens[150] = 5 * MIB + 63;
    cckey_msg *m = make_msgs(&a, &rng, lens, 200);
    check_batch(m, 200, "long among short");
    /* A long one last: everything else is done long before it. */
    size_t tail_heavy[37];
    for (size_t i = 0; i < 37; i++) tail_heavy[i] = 64 * i + 5;
    tail_heavy[36] = 4 * MIB + 1;
    check_batch(make_msgs(&a, &rng, tail_heavy, 37), 37, "long one last");
    /* A long one alone. */
    size_t one = 6 * MIB + 55;
    check_batch(make_msgs(&a, &rng, &one, 1), 1, "one long message");
    cckey_test_arena_free(&a);
}

/* Messages of 56..119 bytes (two padded blocks) take a short path of
 * their own, whose lanes reuse their tails message after message: 56..63
 * bytes pad into the second block, 64..119 bytes keep a first block whole.
 * Both orders of those in one lane, and runs of each alone, must leave no
 * byte of the last message behind. */
Test(md5_mb, two_block_messages_in_every_order)
{
    uint64_t rng = 9;
    cckey_test_arena a = {0};
    /* 64 or fewer messages are digested in the order given, so a lane
     * sees every mix; longer batches are sorted by length first. */
    static const size_t counts[] = {32, 48, 64, 1000};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        size_t n = counts[c], lens[1000];
        for (size_t i = 0; i < n; i++) lens[i] = 56 + cckey_test_below(&rng, 64);   /* 56..119 */
        cr_assert_geq(check_batch(make_msgs(&a, &rng, lens, n), n, "two-block lengths, random"), 1);
        /* Alternating short and long halves: each lane flips every call. */
        for (size_t i = 0; i < n; i++) lens[i] = (i / 16) % 2 ? 119 - (i % 7) : 56 + (i % 8);
        check_batch(make_msgs(&a, &rng, lens, n), n, "two-block lengths, alternating");
        /* A one-block message among them splits the run. */
        lens[n / 2] = 20;
        check_batch(make_msgs(&a, &rng, lens, n), n, "two-block run split by a short one");
    }
    cckey_test_arena_free(&a);
}

Test(md5_mb, random_mixed_batches)
{
    uint64_t rng = 4;
    cckey_test_arena a = {0};
    for (int round = 0; round < 6; round++) {
        size_t n = 1 + cckey_test_below(&rng, 1500);
        size_t max = round % 2 ? 300 : 20000;
        size_t *lens = cckey_test_alloc(&a, n * sizeof *lens);
        for (size_t i = 0; i < n; i++) lens[i] = cckey_test_below(&rng, max + 1);
        check_batch(make_msgs(&a, &rng, lens, n), n, "random mixed batch");
    }
    cckey_test_arena_free(&a);
}

Test(md5_mb, batch_sizes_around_lane_counts)
{
    uint64_t rng = 5;
    cckey_test_arena a = {0};
    cr_assert_geq(check_batch(NULL, 0, "empty batch"), 1);
    for (size_t n = 1; n <= 2 * CCKEY_MD5_MAX_LANES + 3; n++) {
        size_t lens[2 * CCKEY_MD5_MAX_LANES + 3];
        for (size_t i = 0; i < n; i++) lens[i] = cckey_test_below(&rng, 400);
        check_batch(make_msgs(&a, &rng, lens, n), n, "small batch");
        /* Equal lengths: every lane finishes in the same call. */
        for (size_t i = 0; i < n; i++) lens[i] = 130;
        check_batch(make_msgs(&a, &rng, lens, n), n, "small equal batch");
    }
    cckey_test_arena_free(&a);
}

Test(md5_mb, messages_sharing_memory)
{
    uint64_t rng = 6;
    size_t size = 70000;
    uint8_t *buf = malloc(size);
    cr_assert(buf);
    cckey_test_fill(&rng, buf, size);
    cckey_msg m[300];
    for (size_t i = 0; i < 300; i++) {
        switch (i % 4) {
        case 0: m[i] = (cckey_msg){buf, 1000}; break;   /* the same pointer and length */
        case 1: m[i] = (cckey_msg){buf, i * 7}; break;  /* the same pointer, other lengths */
        case 2: m[i] = (cckey_msg){buf + i, 200 + i}; break;   /* overlapping, unaligned */
        default: {
            size_t off = cckey_test_below(&rng, size);
            m[i] = (cckey_msg){buf + off, cckey_test_below(&rng, size - off + 1)};
        }
        }
    }
    check_batch(m, 300, "shared memory");
    /* The same message object many times over. */
    cckey_msg same[50];
    for (size_t i = 0; i < 50; i++) same[i] = (cckey_msg){buf + 3, 4097};
    check_batch(same, 50, "one message repeated");
    free(buf);
}

Test(md5_mb, empty_messages_without_memory)
{
    cckey_msg m[21];
    static const uint8_t x[] = "x";
    for (size_t i = 0; i < 21; i++) m[i] = (cckey_msg){i % 3 ? NULL : x, i % 5 == 4 ? 1 : 0};
    for (size_t i = 0; i < 21; i++)
        if (!m[i].ptr) m[i].len = 0;
    check_batch(m, 21, "NULL empty messages");
}

Test(md5_mb, rfc1321_vectors_through_every_path)
{
    static const char *in[] = {"", "a", "abc", "message digest", "abcdefghijklmnopqrstuvwxyz",
                               "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
                               ("1234567890123456789012345678901234567890123456789012345678901234"
                                "5678901234567890")};
    static const char *want[] = {"d41d8cd98f00b204e9800998ecf8427e", "0cc175b9c0f1b6a831c399e269772661",
                                 "900150983cd24fb0d6963f7d28e17f72", "f96b697d7cb7938d525a2f31aaf161d0",
                                 "c3fcd3d76192e4007dfb496cca67e13b", "d174ab98d277d9f5a5611c2c9f419d9f",
                                 "57edf4a22be3c955ac49da2e2107b67a"};
    cckey_msg m[7];
    for (size_t i = 0; i < 7; i++) m[i] = (cckey_msg){(const uint8_t *)in[i], strlen(in[i])};
    for (size_t k = 0; k < N_ISAS; k++) {
        if (!cckey_md5_isa_supported(all_isas[k])) continue;
        uint8_t out[7][CCKEY_MD5_DIGEST];
        cr_assert_eq(cckey_md5_many_isa(all_isas[k], m, 7, out), 0);
        for (size_t i = 0; i < 7; i++) {
            char have[CCKEY_HEX_LEN + 1];
            hex_of(have, out[i]);
            cr_assert_str_eq(have, want[i], "%s: RFC 1321 vector %zu",
                             cckey_md5_isa_label(all_isas[k]), i);
        }
    }
}
