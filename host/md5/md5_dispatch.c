/* Which multi-buffer path to use: chosen once per process from the CPU's
 * features (host/cpu/features.c), then cached. */
#include "md5_mb.h"
#include "cckey.h"   /* cckey_cpu_lanes */
#include "../cpu/features.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

static const char *const isa_labels[CCKEY_ISA_COUNT] = {"scalar", "sse2", "avx2", "avx512", "neon"};

/* call_cost16: one kernel call costs this many scalar blocks x16, measured on
 * a Sapphire Rapids core (scalar block 98 ns; calls: sse2 x4 152, x8 186-226;
 * avx2 x8 172, x16 245; avx512 x16 117-140, x32 190-224). Only the
 * end-of-batch decisions depend on it, never a result. NEON's are guesses.
 * Each ISA has the interleaved kernel and, for the end of a batch, the
 * one-vector one. A build switch (CCKEY_NO_<ISA>) leaves its paths out here
 * and its feature out of host/cpu/'s detection, so it is never chosen. */
#define PATHS(two, w2, cost2, one, w1, cost1) {two, w2, cost2, &(const cckey_md5_path){one, w1, cost1, NULL}}
static const cckey_md5_path paths[CCKEY_ISA_COUNT] = {
#if defined(__x86_64__) && !defined(CCKEY_NO_SSE2)
    [CCKEY_ISA_SSE2] = PATHS(cckey_md5_x8_sse2, 8, 32, cckey_md5_x4_sse2, 4, 24),
#endif
#if defined(__x86_64__) && !defined(CCKEY_NO_AVX2)
    [CCKEY_ISA_AVX2] = PATHS(cckey_md5_x16_avx2, 16, 40, cckey_md5_x8_avx2, 8, 28),
#endif
#if defined(__x86_64__) && !defined(CCKEY_NO_AVX512)
    [CCKEY_ISA_AVX512] = PATHS(cckey_md5_x32_avx512, 32, 32, cckey_md5_x16_avx512, 16, 20),
#endif
#if defined(__aarch64__) && !defined(CCKEY_NO_NEON)
    [CCKEY_ISA_NEON] = PATHS(cckey_md5_x8_neon, 8, 32, cckey_md5_x4_neon, 4, 24),
#endif
};
#undef PATHS

static unsigned supported_mask;   /* bit per cckey_isa; written once under `once` */
static cckey_isa detected;        /* best supported, or CCKEY_FORCE_ISA's choice */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static _Atomic int forced = CCKEY_ISA_AUTO;

/* The ISAs of the CPU's features (host/cpu/, detected once there), and
 * CCKEY_FORCE_ISA's choice among them, as read there. */
static void detect(void)
{
    unsigned f = cckey_cpu_detected(), mask = 1u << CCKEY_ISA_SCALAR;
    if (f & CCKEY_CPU_SSE2) mask |= 1u << CCKEY_ISA_SSE2;
    if (f & CCKEY_CPU_AVX2) mask |= 1u << CCKEY_ISA_AVX2;
    if (f & CCKEY_CPU_AVX512F) mask |= 1u << CCKEY_ISA_AVX512;
    if (f & CCKEY_CPU_NEON) mask |= 1u << CCKEY_ISA_NEON;
    supported_mask = mask;
    detected = CCKEY_ISA_SCALAR;
    for (int i = CCKEY_ISA_COUNT - 1; i > CCKEY_ISA_SCALAR; i--)
        if (mask & (1u << i)) {
            detected = (cckey_isa)i;
            break;
        }
    const char *env = cckey_cpu_forced_isa();
    if (env) {
        cckey_isa want = cckey_md5_isa_parse(env);
        if (want != CCKEY_ISA_COUNT && (mask & (1u << want))) detected = want;
    }
}

int cckey_md5_isa_supported(cckey_isa isa)
{
    if (isa < 0 || isa >= CCKEY_ISA_COUNT) return 0;
    pthread_once(&once, detect);
    return (supported_mask >> isa) & 1;
}

const cckey_md5_path *cckey_md5_path_for(cckey_isa isa)
{
    if (isa <= CCKEY_ISA_SCALAR || !cckey_md5_isa_supported(isa)) return NULL;
    return paths[isa].kernel ? &paths[isa] : NULL;
}

int cckey_md5_force_isa(cckey_isa isa)
{
    if (isa != CCKEY_ISA_AUTO && !cckey_md5_isa_supported(isa)) return -1;
    atomic_store_explicit(&forced, isa, memory_order_relaxed);
    return 0;
}

cckey_isa cckey_md5_active_isa(void)
{
    int f = atomic_load_explicit(&forced, memory_order_relaxed);
    if (f != CCKEY_ISA_AUTO) return (cckey_isa)f;
    pthread_once(&once, detect);
    return detected;
}

const char *cckey_md5_isa_label(cckey_isa isa)
{
    return isa >= 0 && isa < CCKEY_ISA_COUNT ? isa_labels[isa] : "auto";
}

const char *cckey_md5_isa_name(void) { return cckey_md5_isa_label(cckey_md5_active_isa()); }

cckey_isa cckey_md5_isa_parse(const char *name)
{
    for (int i = 0; i < CCKEY_ISA_COUNT; i++)
        if (strcmp(name, isa_labels[i]) == 0) return (cckey_isa)i;
    return CCKEY_ISA_COUNT;
}

unsigned cckey_md5_isa_lanes(cckey_isa isa)
{
    if (!cckey_md5_isa_supported(isa)) return 0;
    if (isa == CCKEY_ISA_SCALAR) return 1;
    const cckey_md5_path *p = cckey_md5_path_for(isa);
    return p ? p->lanes : 0;
}

unsigned cckey_cpu_lanes(void) { return cckey_md5_isa_lanes(cckey_md5_active_isa()); }
