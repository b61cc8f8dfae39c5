/* Which multi-buffer path to use: detected once per process from the CPU's
 * features and the OS's saved register state, then cached. */
#include "md5_mb.h"
#include "cckey.h"   /* cckey_cpu_lanes */

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

static const char *const isa_labels[CCKEY_ISA_COUNT] = {"scalar", "sse2", "avx2", "avx512", "neon"};

/* call_cost16: one kernel call costs this many scalar blocks x16, measured on
 * a Sapphire Rapids core (scalar block 98 ns; calls: sse2 x4 152, x8 186-226;
 * avx2 x8 172, x16 245; avx512 x16 117-140, x32 190-224). Only the
 * end-of-batch decisions depend on it, never a result. NEON's are guesses. */
#if defined(__x86_64__)
static const cckey_md5_path sse2_x4 = {cckey_md5_x4_sse2, 4, 24, NULL};
static const cckey_md5_path avx2_x8 = {cckey_md5_x8_avx2, 8, 28, NULL};
static const cckey_md5_path avx512_x16 = {cckey_md5_x16_avx512, 16, 20, NULL};
#endif
#if defined(__aarch64__)
static const cckey_md5_path neon_x4 = {cckey_md5_x4_neon, 4, 24, NULL};
#endif
static const cckey_md5_path paths[CCKEY_ISA_COUNT] = {
#if defined(__x86_64__)
    [CCKEY_ISA_SSE2] = {cckey_md5_x8_sse2, 8, 32, &sse2_x4},
    [CCKEY_ISA_AVX2] = {cckey_md5_x16_avx2, 16, 40, &avx2_x8},
    [CCKEY_ISA_AVX512] = {cckey_md5_x32_avx512, 32, 32, &avx512_x16},
#endif
#if defined(__aarch64__)
    [CCKEY_ISA_NEON] = {cckey_md5_x8_neon, 8, 32, &neon_x4},
#endif
};

static unsigned supported_mask;   /* bit per cckey_isa; written once under `once` */
static cckey_isa detected;        /* best supported, or CCKEY_FORCE_ISA's choice */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static _Atomic int forced = CCKEY_ISA_AUTO;

#if defined(__x86_64__)
static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (uint64_t)hi << 32 | lo;
}

static unsigned detect_x86(void)
{
    unsigned mask = 1u << CCKEY_ISA_SCALAR, a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return mask;
    if (d & bit_SSE2) mask |= 1u << CCKEY_ISA_SSE2;
    /* The CPU having AVX is not enough: the OS must save the wider
     * registers on a context switch (XCR0), or their contents get lost. */
    if (!(c & bit_OSXSAVE) || !(c & bit_AVX)) return mask;
    uint64_t xcr0 = xgetbv0();
    if ((xcr0 & 0x6) != 0x6) return mask;   /* XMM and YMM state */
    if (__get_cpuid_max(0, NULL) < 7) return mask;
    __cpuid_count(7, 0, a, b, c, d);
    if (b & bit_AVX2) mask |= 1u << CCKEY_ISA_AVX2;
    if ((b & bit_AVX512F) && (xcr0 & 0xe6) == 0xe6)   /* plus opmask and ZMM state */
        mask |= 1u << CCKEY_ISA_AVX512;
    return mask;
}
#endif

static void detect(void)
{
    unsigned mask = 1u << CCKEY_ISA_SCALAR;
#if defined(__x86_64__)
    mask = detect_x86();
#elif defined(__aarch64__)
    mask |= 1u << CCKEY_ISA_NEON;   /* NEON is mandatory on AArch64 */
#endif
    supported_mask = mask;
    detected = CCKEY_ISA_SCALAR;
    for (int i = CCKEY_ISA_COUNT - 1; i > CCKEY_ISA_SCALAR; i--)
        if (mask & (1u << i)) {
            detected = (cckey_isa)i;
            break;
        }
    const char *env = getenv("CCKEY_FORCE_ISA");
    if (env && *env) {
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
