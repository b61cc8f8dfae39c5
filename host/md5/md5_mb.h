/* Multi-buffer MD5: independent messages hashed side by side in SIMD lanes.
 *
 * Layout: one compression kernel per instruction set (md5_x*_*.c, all the
 * same shape), one lane manager that feeds them (md5_mb.c), and runtime
 * dispatch that picks the widest kernel this CPU and OS support
 * (md5_dispatch.c). cckey_md5_many() in md5_many.c is the entry point.
 *
 * Forcing a path (tests, benchmarks):
 *   - cckey_md5_force_isa(CCKEY_ISA_SSE2) for the whole process, or
 *     cckey_md5_many_isa(CCKEY_ISA_SSE2, ...) for one call;
 *   - the environment variable CCKEY_FORCE_ISA=scalar|sse2|avx2|avx512|neon,
 *     read once, on first use. A path this CPU or build lacks is refused:
 *     the force call returns -1 and changes nothing; an unknown or
 *     unsupported CCKEY_FORCE_ISA value is ignored (the best path is used),
 *     which cckey_md5_isa_name() shows. */
#ifndef CCKEY_MD5_MB_H
#define CCKEY_MD5_MB_H

#include "md5.h"

typedef enum cckey_isa {
    CCKEY_ISA_AUTO = -1,   /* back to the detected best path */
    CCKEY_ISA_SCALAR = 0,
    CCKEY_ISA_SSE2,
    CCKEY_ISA_AVX2,
    CCKEY_ISA_AVX512,
    CCKEY_ISA_NEON,
    CCKEY_ISA_COUNT
} cckey_isa;

/* Enough for the widest kernel; every kernel takes the same array shape and
 * uses its first lanes, so the manager is written once for all of them. */
#define CCKEY_MD5_MAX_LANES 32

/* Compress one 64-byte block per lane: state[w][lane] is word w of the
 * lane's chaining value; block[lane] may have any alignment. */
typedef void (*cckey_md5_kernel)(uint32_t state[4][CCKEY_MD5_MAX_LANES],
                                 const uint8_t *const block[CCKEY_MD5_MAX_LANES]);

/* Each instruction set has two kernels: one vector per step, and two
 * vectors interleaved (twice the lanes). MD5 is one long dependency chain,
 * so a single vector leaves execution ports idle that a second chain fills;
 * the narrow kernel serves the end of a batch when few lanes are busy. */
#define CCKEY_MD5_KERNEL_DECL(name)                                                                \
    void name(uint32_t state[4][CCKEY_MD5_MAX_LANES], const uint8_t *const block[CCKEY_MD5_MAX_LANES])
#if defined(__x86_64__)
CCKEY_MD5_KERNEL_DECL(cckey_md5_x4_sse2);
CCKEY_MD5_KERNEL_DECL(cckey_md5_x8_sse2);
CCKEY_MD5_KERNEL_DECL(cckey_md5_x8_avx2);
CCKEY_MD5_KERNEL_DECL(cckey_md5_x16_avx2);
CCKEY_MD5_KERNEL_DECL(cckey_md5_x16_avx512);
CCKEY_MD5_KERNEL_DECL(cckey_md5_x32_avx512);
#endif
#if defined(__aarch64__)
CCKEY_MD5_KERNEL_DECL(cckey_md5_x4_neon);
CCKEY_MD5_KERNEL_DECL(cckey_md5_x8_neon);
#endif

/* A vector path as the manager sees it. */
typedef struct cckey_md5_path {
    cckey_md5_kernel kernel;
    unsigned lanes;
    /* What one kernel call costs, in scalar blocks x16 (measured): once no
     * message is left to start, the manager finishes the remaining lanes on
     * the scalar code when that is cheaper than more half-empty calls. */
    unsigned call_cost16;
    /* The same instruction set with half the lanes, for the end of a batch
     * (NULL: none). */
    const struct cckey_md5_path *narrow;
} cckey_md5_path;

/* The lane manager: digests msgs[0..n) with path, in any order of lengths. */
void cckey_md5_mb(const cckey_md5_path *path, const cckey_msg *msgs, size_t n,
                  uint8_t (*out)[CCKEY_MD5_DIGEST]);

/* NULL for scalar, and for a path this CPU or build lacks. */
const cckey_md5_path *cckey_md5_path_for(cckey_isa isa);

int cckey_md5_isa_supported(cckey_isa isa);
/* 0 on success; -1 (and no change) for a path this CPU or build lacks. */
int cckey_md5_force_isa(cckey_isa isa);
cckey_isa cckey_md5_active_isa(void);
/* "scalar", "sse2", "avx2", "avx512", "neon"; the active path's name. */
const char *cckey_md5_isa_label(cckey_isa isa);
const char *cckey_md5_isa_name(void);
/* CCKEY_ISA_COUNT for an unknown name. */
cckey_isa cckey_md5_isa_parse(const char *name);
/* Lanes of a path (1 for scalar, 0 for one this CPU or build lacks). */
unsigned cckey_md5_isa_lanes(cckey_isa isa);

/* cckey_md5_many through the given path, whatever is forced: 0, or -1
 * (nothing written) when this CPU or build lacks it. For the benchmarks. */
int cckey_md5_many_isa(cckey_isa isa, const cckey_msg *msgs, size_t n,
                       uint8_t (*out)[CCKEY_MD5_DIGEST]);

#endif
