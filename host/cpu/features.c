/* CPU features, detected once per process (see features.h). */
#include "features.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

static unsigned detected_mask;     /* written once under `once` */
static unsigned narrowed_mask;     /* detected_mask narrowed to CCKEY_FORCE_ISA */
static const char *forced;         /* CCKEY_FORCE_ISA as read (a copy); NULL when unset or "" */
static pthread_once_t once = PTHREAD_ONCE_INIT;

#if defined(__x86_64__)
static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (uint64_t)hi << 32 | lo;
}

static unsigned detect_x86(void)
{
    unsigned mask = 0, a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return mask;
    if (d & bit_SSE2) mask |= CCKEY_CPU_SSE2;
    /* The CPU having AVX is not enough: the OS must save the wider
     * registers on a context switch (XCR0), or their contents get lost. */
    if (!(c & bit_OSXSAVE) || !(c & bit_AVX)) return mask;
    uint64_t xcr0 = xgetbv0();
    if ((xcr0 & 0x6) != 0x6) return mask;   /* XMM and YMM state */
    if (__get_cpuid_max(0, NULL) < 7) return mask;
    __cpuid_count(7, 0, a, b, c, d);
    if (b & bit_AVX2) mask |= CCKEY_CPU_AVX2;
    if (b & bit_BMI2) mask |= CCKEY_CPU_BMI2;
    if ((xcr0 & 0xe6) != 0xe6) return mask;   /* plus opmask and ZMM state */
    if (b & bit_AVX512F) mask |= CCKEY_CPU_AVX512F;
    if (b & bit_AVX512BW) mask |= CCKEY_CPU_AVX512BW;
    if (c & bit_AVX512VBMI2) mask |= CCKEY_CPU_AVX512VBMI2;
    return mask;
}
#endif

/* What the build switches leave out. */
static unsigned build_mask(void)
{
    unsigned off = 0;
#if defined(CCKEY_NO_SSE2)
    off |= CCKEY_CPU_SSE2;
#endif
#if defined(CCKEY_NO_AVX2)
    off |= CCKEY_CPU_AVX2;
#endif
#if defined(CCKEY_NO_AVX512)
    off |= CCKEY_CPU_AVX512F | CCKEY_CPU_AVX512BW | CCKEY_CPU_AVX512VBMI2;
#endif
#if defined(CCKEY_NO_NEON)
    off |= CCKEY_CPU_NEON;
#endif
    return ~off;
}

/* The features an instruction set named by CCKEY_FORCE_ISA leaves, or all
 * of them when the name is unknown or this CPU lacks the set (the best
 * path is then used, as the variable's documentation says). */
static unsigned narrow(unsigned mask, const char *isa)
{
    static const struct {
        const char *name;
        unsigned needs, keeps;
    } sets[] = {
        {"scalar", 0, 0},
        {"sse2", CCKEY_CPU_SSE2, CCKEY_CPU_SSE2},
        {"avx2", CCKEY_CPU_AVX2, ~(unsigned)(CCKEY_CPU_AVX512F | CCKEY_CPU_AVX512BW | CCKEY_CPU_AVX512VBMI2)},
        {"avx512", CCKEY_CPU_AVX512F, ~0u},
        {"neon", CCKEY_CPU_NEON, CCKEY_CPU_NEON},
    };
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++)
        if (strcmp(isa, sets[i].name) == 0 && (mask & sets[i].needs) == sets[i].needs) return mask & sets[i].keeps;
    return mask;
}

static void detect(void)
{
    unsigned mask = 0;
#if defined(__x86_64__)
    mask = detect_x86();
#elif defined(__aarch64__)
    mask = CCKEY_CPU_NEON;   /* NEON is mandatory on AArch64 */
#endif
    detected_mask = mask & build_mask();
    /* A copy: a later setenv must not change what this process runs. Kept
     * for the process, reachable, so never a leak. */
    const char *env = getenv("CCKEY_FORCE_ISA");
    forced = env && *env ? strdup(env) : NULL;
    narrowed_mask = forced ? narrow(detected_mask, forced) : detected_mask;
}

unsigned cckey_cpu_detected(void)
{
    pthread_once(&once, detect);
    return detected_mask;
}

unsigned cckey_cpu_features(void)
{
    pthread_once(&once, detect);
    return narrowed_mask;
}

const char *cckey_cpu_forced_isa(void)
{
    pthread_once(&once, detect);
    return forced;
}
