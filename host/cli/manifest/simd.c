/* The string kernels of the manifest parser (see simd.h).
 *
 * Why blocks and masks: manifests with inline sources are strings of a few
 * KiB with a "\n" every ~17 bytes. Stopping at each escape (the SSE2
 * kernel) costs a mispredicted branch or two per escape, which left the
 * parser at 1.1 GB/s, behind simdjson. The AVX2 and AVX-512 kernels judge a
 * whole block at once: they find where the block must stop (the first
 * unescaped quote, control byte, escape they do not decode, or bad UTF-8
 * sequence), translate the escaped letters before it, and squeeze the
 * backslashes out (VBMI2's compress; in AVX2, 8 bytes at a time through a
 * shuffle table). No branch depends on where the escapes fall.
 *
 * Why "before the first stop" is enough: the block starts on a fresh
 * character, so up to the first stop every backslash opens an escape
 * (a backslash as the escaped character, \\, is itself a stop) and the byte
 * after it is a valid escaped letter (anything else is a stop), so the
 * quote and bad-byte masks need only ignore escaped positions. */
#include "simd.h"
#include "cckey_advanced.h"   /* cckey_cpu_features */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

static size_t run_none(const uint8_t *s, size_t i, size_t len, char *out, size_t *o)
{
    (void)s, (void)len, (void)out, (void)o;
    return i;
}

#if defined(__x86_64__)
/* 16 bytes a step, stopping at each escape (one-character ones are decoded
 * here and the scan goes on). As signed bytes, "< 0x20" also catches every
 * byte >= 0x80. */
static size_t run_sse2(const uint8_t *s, size_t i, size_t len, char *out, size_t *po)
{
    size_t o = *po, run = i;
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
    while (run + 16 <= len) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + run));
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                                   _mm_cmplt_epi8(v, space));
        unsigned mask = (unsigned)_mm_movemask_epi8(hit);
        _mm_storeu_si128((__m128i *)(out + o + (run - i)), v);
        if (!mask) {
            run += 16;
            continue;
        }
        size_t at = run + (size_t)__builtin_ctz(mask);
        char to;
        if (s[at] == '\\' && at + 1 < len && (to = mj_short_escape(s[at + 1]))) {
            o += at - i;
            out[o++] = to;
            i = run = at + 2;
            continue;
        }
        run = at;
        break;
    }
    *po = o + (run - i);
    return run;
}

#define AVX2_TARGET __attribute__((target("avx2,popcnt")))
#define AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512vbmi2,bmi2,lzcnt,popcnt")))

/* pack8[m]: the positions of m's set bits, in order: a shuffle that moves
 * the kept bytes of an 8-byte group to its front. */
static uint8_t pack8[256][8];

/* Bytes that may follow a backslash here, as a byte mask (the quote is
 * added by the caller, which has its mask already). */
AVX2_TARGET static inline __m256i letters_avx2(__m256i v, __m256i *n, __m256i *t, __m256i *r, __m256i *b,
                                               __m256i *f)
{
    *n = _mm256_cmpeq_epi8(v, _mm256_set1_epi8('n'));
    *t = _mm256_cmpeq_epi8(v, _mm256_set1_epi8('t'));
    *r = _mm256_cmpeq_epi8(v, _mm256_set1_epi8('r'));
    *b = _mm256_cmpeq_epi8(v, _mm256_set1_epi8('b'));
    *f = _mm256_cmpeq_epi8(v, _mm256_set1_epi8('f'));
    __m256i sl = _mm256_cmpeq_epi8(v, _mm256_set1_epi8('/'));
    return _mm256_or_si256(_mm256_or_si256(_mm256_or_si256(*n, *t), _mm256_or_si256(*r, *b)), _mm256_or_si256(*f, sl));
}

/* Stores the kept bytes of 8-byte group g of t (halves lo, hi) at out. */
AVX2_TARGET static inline size_t put8(char *out, __m128i lo, __m128i hi, unsigned g, uint32_t keep)
{
    unsigned m = keep >> (8 * g) & 0xff;
    __m128i idx = _mm_loadl_epi64((const __m128i *)pack8[m]);
    if (g & 1) idx = _mm_add_epi8(idx, _mm_set1_epi8(8));
    _mm_storel_epi64((__m128i *)out, _mm_shuffle_epi8(g < 2 ? lo : hi, idx));
    return (size_t)__builtin_popcount(m);
}

/* Bytes in [lo, lo + n), as a bit mask. */
AVX2_TARGET static inline uint32_t in_range_avx2(__m256i v, uint8_t lo, uint8_t n)
{
    __m256i x = _mm256_sub_epi8(v, _mm256_set1_epi8((char)lo));
    return (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_min_epu8(x, _mm256_set1_epi8((char)(n - 1))), x));
}

/* utf8_stops_avx512 (below), on 32 bytes. */
AVX2_TARGET static inline void utf8_stops_avx2(__m256i v, uint32_t *hard, uint32_t *soft)
{
    uint32_t cont = in_range_avx2(v, 0x80, 0x40), l2 = in_range_avx2(v, 0xc2, 30);
    uint32_t l3 = in_range_avx2(v, 0xe0, 16), l4 = in_range_avx2(v, 0xf0, 5);
    uint32_t high = (uint32_t)_mm256_movemask_epi8(v), leads = l2 | l3 | l4;
    uint32_t want = leads << 1 | (l3 | l4) << 2 | l4 << 3;
    uint32_t e0 = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8((char)0xe0))) << 1;
    uint32_t ed = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8((char)0xed))) << 1;
    uint32_t f0 = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8((char)0xf0))) << 1;
    uint32_t f4 = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8((char)0xf4))) << 1;
    uint32_t bad = (high & ~cont & ~leads) | (cont ^ want) | (e0 & in_range_avx2(v, 0x80, 0x20)) |
                   (ed & in_range_avx2(v, 0xa0, 0x20)) | (f0 & in_range_avx2(v, 0x80, 0x10)) |
                   (f4 & in_range_avx2(v, 0x90, 0x30));
    *soft |= (l2 & 1u << 31) | (l3 & 3u << 30) | (l4 & 7u << 29);
    if (!bad) return;
    unsigned e = (unsigned)__builtin_ctz(bad);
    *hard |= want >> e & 1 ? 1u << (31u - (unsigned)__builtin_clz(leads & ((1u << e) - 1))) : 1u << e;
}

AVX2_TARGET static size_t run_avx2(const uint8_t *s, size_t i, size_t len, char *out, size_t *po)
{
    size_t o = *po;
    const __m256i quote = _mm256_set1_epi8('"'), bslash = _mm256_set1_epi8('\\');
    while (i + 32 <= len) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(s + i));
        __m256i vb = _mm256_cmpeq_epi8(v, bslash);
        __m256i vq = _mm256_cmpeq_epi8(v, quote);
        __m256i n, t, r, b, f;
        __m256i ok = _mm256_or_si256(letters_avx2(v, &n, &t, &r, &b, &f), vq);
        uint32_t bs = (uint32_t)_mm256_movemask_epi8(vb), q = (uint32_t)_mm256_movemask_epi8(vq);
        uint32_t bad = in_range_avx2(v, 0, 0x20);
        uint32_t esc_ok = (uint32_t)_mm256_movemask_epi8(ok), esc = bs << 1;
        /* A backslash in the last byte has its letter in the next block:
         * a soft stop, where the next block starts (as in run_avx512). */
        uint32_t hard = ((q | bad) & ~esc) | (bs & ~(esc_ok >> 1) & ~(1u << 31)), soft = bs & 1u << 31;
        if (_mm256_movemask_epi8(v)) utf8_stops_avx2(v, &hard, &soft);
        unsigned stop = hard | soft ? (unsigned)__builtin_ctz(hard | soft) : 32;
        uint32_t keep = (stop == 32 ? ~0u : (1u << stop) - 1) & ~bs;
        /* The escaped positions as bytes: each byte's predecessor in vb. */
        __m256i ve = _mm256_alignr_epi8(vb, _mm256_permute2x128_si256(vb, vb, 0x08), 15);
        v = _mm256_blendv_epi8(v, _mm256_set1_epi8('\n'), _mm256_and_si256(n, ve));
        v = _mm256_blendv_epi8(v, _mm256_set1_epi8('\t'), _mm256_and_si256(t, ve));
        v = _mm256_blendv_epi8(v, _mm256_set1_epi8('\r'), _mm256_and_si256(r, ve));
        v = _mm256_blendv_epi8(v, _mm256_set1_epi8('\b'), _mm256_and_si256(b, ve));
        v = _mm256_blendv_epi8(v, _mm256_set1_epi8('\f'), _mm256_and_si256(f, ve));
        /* Each 8-byte store stays below out + o + 32 <= s's i + 32 <= len. */
        __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
        o += put8(out + o, lo, hi, 0, keep);
        o += put8(out + o, lo, hi, 1, keep);
        o += put8(out + o, lo, hi, 2, keep);
        o += put8(out + o, lo, hi, 3, keep);
        i += stop;
        if (stop < 32 && (hard >> stop & 1)) break;
    }
    *po = o;
    return i;
}

#if !defined(CCKEY_NO_AVX512)   /* the build switch: no AVX-512 code at all */
/* Where a block holding bytes >= 0x80 must stop for UTF-8, added to the
 * block's stops: a hard one at the start of the sequence holding the first
 * bad byte (the caller's byte loop then names it), and soft ones at leads
 * whose sequence runs past the block (the next block starts there). A bad
 * byte: one that is no lead or continuation (C0, C1, F5-FF), a continuation
 * no lead expects, a missing one, or a second byte out of its lead's range
 * (overlong forms, surrogates, past U+10FFFF). Every stop is on a sequence
 * boundary with only valid UTF-8 before it. */
AVX512_TARGET static inline void utf8_stops_avx512(__m512i v, __mmask64 *hard, __mmask64 *soft)
{
    __mmask64 cont = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8((char)0x80)), _mm512_set1_epi8(0x40));
    __mmask64 l2 = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8((char)0xc2)), _mm512_set1_epi8(30));
    __mmask64 l3 = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8((char)0xe0)), _mm512_set1_epi8(16));
    __mmask64 l4 = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8((char)0xf0)), _mm512_set1_epi8(5));
    __mmask64 high = _mm512_movepi8_mask(v), leads = l2 | l3 | l4;
    __mmask64 want = leads << 1 | (l3 | l4) << 2 | l4 << 3;
    __mmask64 e0 = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8((char)0xe0)) << 1;
    __mmask64 ed = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8((char)0xed)) << 1;
    __mmask64 f0 = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8((char)0xf0)) << 1;
    __mmask64 f4 = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8((char)0xf4)) << 1;
    __mmask64 bad = (high & ~cont & ~leads) | (cont ^ want) |
                    (e0 & _mm512_cmplt_epu8_mask(v, _mm512_set1_epi8((char)0xa0))) |
                    (ed & _mm512_cmpgt_epu8_mask(v, _mm512_set1_epi8((char)0x9f))) |
                    (f0 & _mm512_cmplt_epu8_mask(v, _mm512_set1_epi8((char)0x90))) |
                    (f4 & _mm512_cmpgt_epu8_mask(v, _mm512_set1_epi8((char)0x8f)));
    *soft |= (l2 & 1ull << 63) | (l3 & 3ull << 62) | (l4 & 7ull << 61);
    if (!bad) return;
    /* A byte some lead expects belongs to the last lead before it (a lead
     * between them would itself be the first bad byte); any other bad byte
     * starts a sequence or stands alone. */
    unsigned e = (unsigned)__builtin_ctzll(bad);
    *hard |= want >> e & 1 ? 1ull << (63u - (unsigned)__builtin_clzll(leads & _bzhi_u64(~0ull, e))) : 1ull << e;
}

/* 64 bytes a step to the end of the line: the loads and stores are masked,
 * and the lanes past len load as 0, a control byte, hence a stop. Valid
 * UTF-8 is taken too. A soft stop (an escape or a UTF-8 sequence that the
 * block splits) only starts the next block there. */
AVX512_TARGET static size_t run_avx512(const uint8_t *s, size_t i, size_t len, char *out, size_t *po)
{
    size_t o = *po;
    const __m512i quote = _mm512_set1_epi8('"'), bslash = _mm512_set1_epi8('\\'), space = _mm512_set1_epi8(0x20);
    while (i < len) {
        __mmask64 valid = _bzhi_u64(~0ull, (unsigned)(len - i < 64 ? len - i : 64));
        __m512i v = _mm512_maskz_loadu_epi8(valid, s + i);
        __mmask64 bs = _mm512_cmpeq_epi8_mask(v, bslash), q = _mm512_cmpeq_epi8_mask(v, quote);
        __mmask64 bad = _mm512_cmplt_epu8_mask(v, space);
        __mmask64 n = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('n'));
        __mmask64 t = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('t'));
        __mmask64 r = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('r'));
        __mmask64 b = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('b'));
        __mmask64 f = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('f'));
        __mmask64 sl = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('/'));
        __mmask64 esc_ok = q | n | t | r | b | f | sl, esc = bs << 1;
        __mmask64 hard = ((q | bad) & ~esc) | (bs & ~(esc_ok >> 1) & ~(1ull << 63)), soft = bs & 1ull << 63;
        if (_mm512_movepi8_mask(v)) utf8_stops_avx512(v, &hard, &soft);
        unsigned stop = hard | soft ? (unsigned)__builtin_ctzll(hard | soft) : 64;
        __mmask64 keep = _bzhi_u64(~0ull, stop) & ~bs;
        v = _mm512_mask_mov_epi8(v, n & esc, _mm512_set1_epi8('\n'));
        v = _mm512_mask_mov_epi8(v, t & esc, _mm512_set1_epi8('\t'));
        v = _mm512_mask_mov_epi8(v, r & esc, _mm512_set1_epi8('\r'));
        v = _mm512_mask_mov_epi8(v, b & esc, _mm512_set1_epi8('\b'));
        v = _mm512_mask_mov_epi8(v, f & esc, _mm512_set1_epi8('\f'));
        unsigned kept = (unsigned)__builtin_popcountll(keep);
        _mm512_mask_storeu_epi8(out + o, _bzhi_u64(~0ull, kept), _mm512_maskz_compress_epi8(keep, v));
        o += kept;
        i += stop;
        if (stop < 64 && (hard >> stop & 1)) break;
    }
    *po = o;
    return i;
}

#endif   /* CCKEY_NO_AVX512 */
#endif

static const char *const labels[] = {"scalar", "sse2", "avx2", "avx512"};
static int chosen;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* 3: AVX-512 F+BW+VBMI2 (with BMI2), 2: AVX2, 1: SSE2, 0: none; from the
 * library's one detection (cckey_cpu_features), which also applies
 * CCKEY_FORCE_ISA and the build's CCKEY_NO_<ISA> switches. */
static void pick(void)
{
    int level = 0;
#if defined(__x86_64__)
    const unsigned f = cckey_cpu_features(),
                   avx512 = CCKEY_CPU_AVX512F | CCKEY_CPU_AVX512BW | CCKEY_CPU_AVX512VBMI2 | CCKEY_CPU_BMI2;
    level = (f & avx512) == avx512 ? 3 : f & CCKEY_CPU_AVX2 ? 2 : f & CCKEY_CPU_SSE2 ? 1 : 0;
    for (unsigned m = 0; m < 256; m++)
        for (unsigned k = 0, at = 0; k < 8; k++)
            if (m >> k & 1) pack8[m][at++] = (uint8_t)k;
#endif
    chosen = level;
}

mj_str_kernel mj_str_kernel_get(void)
{
    pthread_once(&once, pick);
#if defined(__x86_64__)
    switch (chosen) {
    case 1: return run_sse2;
    case 2: return run_avx2;
#if !defined(CCKEY_NO_AVX512)
    case 3: return run_avx512;
#endif
    }
#endif
    return run_none;
}

const char *mj_str_kernel_isa(void)
{
    pthread_once(&once, pick);
    return labels[chosen];
}
