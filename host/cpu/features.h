/* The CPU features this process may use: detected once, and the one place
 * that reads CCKEY_FORCE_ISA (as BLAKE3 keeps its detection in one unit).
 * MD5 dispatch (host/md5/md5_dispatch.c) and, through the public
 * cckey_cpu_features, the CLI's manifest scanner both ask here.
 *
 * A feature counts only when the CPU reports it, the OS saves its registers
 * on a context switch (XCR0, for the AVX families), and this build has not
 * left it out with a build switch: CCKEY_NO_SSE2, CCKEY_NO_AVX2,
 * CCKEY_NO_AVX512 or CCKEY_NO_NEON (CMake options of the same names). */
#ifndef CCKEY_CPU_FEATURES_H
#define CCKEY_CPU_FEATURES_H

#include "cckey_advanced.h"   /* the CCKEY_CPU_* bits, cckey_cpu_features */

/* Every feature usable here (CCKEY_CPU_* bits), CCKEY_FORCE_ISA aside:
 * what MD5 dispatch may choose from, and what a test may force. */
unsigned cckey_cpu_detected(void);

#endif
