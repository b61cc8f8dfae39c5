/* The inner loop of the manifest parser's strings (json.c), in
 * one kernel per instruction set, picked once per process.
 *
 * A kernel starts at s[i] inside a string body, on a fresh character (not
 * inside an escape), and decodes what is plain: bytes 0x20..0x7f other
 * than '"' and '\\', the one-character escapes (mj_short_escape), and (AVX2,
 * AVX-512) valid UTF-8 sequences. It returns the index of the first byte it
 * did not take, always on a character boundary: a quote, a control byte, a
 * byte >= 0x80 it leaves (all of them in SSE2; the start of a bad sequence),
 * an escape it leaves (\u, an invalid one; \\ in some kernels), or bytes
 * near len it leaves to the caller's byte loop. Decoded bytes go
 * to out[*o...] and *o advances. Decoding never grows a string and *o <= i
 * on entry, so a kernel may store up to len - i bytes at out + *o (garbage
 * past the decoded ones, overwritten later).
 *
 * Every verdict (errors and their columns) stays with the caller: a kernel
 * only ever takes bytes the caller's byte loop would take the same way. */
#ifndef CCKEY_MANIFEST_SIMD_H
#define CCKEY_MANIFEST_SIMD_H

#include "manifest.h"

#include <stddef.h>
#include <stdint.h>

/* What a one-character escape \e decodes to; 0 for any other e. */
static inline char mj_short_escape(uint8_t e)
{
    switch (e) {
    case '"': case '\\': case '/': return (char)e;
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    }
    return 0;
}

typedef size_t (*mj_str_kernel)(const uint8_t *s, size_t i, size_t len, char *out, size_t *o);

/* The kernel for this CPU: AVX-512 (F, BW, VBMI2), AVX2, SSE2 or none (a
 * kernel that takes nothing). CCKEY_FORCE_ISA (scalar|sse2|avx2|avx512,
 * the library's debugging switch, read once) may force a narrower one, which
 * is how the tests run the AVX2 and SSE2 kernels on an AVX-512 machine. */
mj_str_kernel mj_str_kernel_get(void);

#endif
