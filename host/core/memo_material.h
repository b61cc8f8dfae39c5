/* The memo's material (memo.c): what a tuple serialises to, its tag and the
 * set it falls into, and the memo's seam as data. Here rather than in
 * memo.c so that the testing library (host/testing/memo_probe.c) computes
 * the same tag and set as the memo does, to build a collision or fill a
 * set, without a line of memo.c being test code. */
#ifndef CCKEY_MEMO_MATERIAL_H
#define CCKEY_MEMO_MATERIAL_H

#include "cckey.h"

#include <stdint.h>
#include <string.h>

#define CCKEY_MEMO_WAYS 4
#define CCKEY_MEMO_SETS (CCKEY_MEMO_ENTRIES / CCKEY_MEMO_WAYS)
#define CCKEY_MEMO_MAT_WORDS (CCKEY_MEMO_MAX_MATERIAL / 8)

/* Test seams, as data: NULL in a release process, pointed before main at
 * the testing library's table (host/testing/memo_probe.c). compared runs
 * when a look-up's material compared equal, before it copies the entry's
 * key: the window the seqlock guards. A release hit pays a load and a
 * branch that is never taken. */
typedef struct cckey_memo_hook_table {
    void (*compared)(void);
} cckey_memo_hook_table;
extern const cckey_memo_hook_table *cckey_memo_hooks;

/* Material: each field with its length, so no two tuples serialise alike.
 * Past CCKEY_MEMO_MAX_MATERIAL the length is reported as one more than it. */
static inline size_t cckey_memo_material_len(cckey_bytes device, cckey_bytes name, const cckey_option *o,
                                             size_t n)
{
    if (device.len > CCKEY_MEMO_MAX_MATERIAL || name.len > CCKEY_MEMO_MAX_MATERIAL ||
        n > CCKEY_MEMO_MAX_MATERIAL / 16)
        return CCKEY_MEMO_MAX_MATERIAL + 1;
    size_t len = 8 * (3 + 2 * n) + device.len + name.len;
    for (size_t i = 0; i < n; i++) {
        if (o[i].key.len > CCKEY_MEMO_MAX_MATERIAL || o[i].value.len > CCKEY_MEMO_MAX_MATERIAL)
            return CCKEY_MEMO_MAX_MATERIAL + 1;
        len += o[i].key.len + o[i].value.len;
        if (len > CCKEY_MEMO_MAX_MATERIAL) break;
    }
    return len;
}

static inline uint8_t *cckey_memo_put(uint8_t *p, const void *data, size_t len)
{
    uint64_t l = len;
    memcpy(p, &l, 8);
    if (len) memcpy(p + 8, data, len);
    return p + 8 + len;
}

static inline void cckey_memo_material_write(uint64_t *words, size_t nwords, cckey_bytes device, cckey_bytes name,
                                             const cckey_option *o, size_t n)
{
    words[nwords - 1] = 0;   /* the one word the fields may not fill to its end */
    uint8_t *p = (uint8_t *)words;
    p = cckey_memo_put(p, device.ptr, device.len);
    p = cckey_memo_put(p, name.ptr, name.len);
    uint64_t count = n;
    memcpy(p, &count, 8);
    p += 8;
    for (size_t i = 0; i < n; i++) {
        p = cckey_memo_put(p, o[i].key.ptr, o[i].key.len);
        p = cckey_memo_put(p, o[i].value.ptr, o[i].value.len);
    }
}

/* The tag: a 64-bit hash of the material, never 0 (an empty slot). */
static inline uint64_t cckey_memo_material_hash(const uint64_t *w, size_t nwords)
{
    uint64_t h = 0x243f6a8885a308d3u;
    for (size_t i = 0; i < nwords; i++) {
        h = (h ^ w[i]) * 0x9e3779b97f4a7c15u;
        h ^= h >> 29;
    }
    return h | 1;
}

static inline size_t cckey_memo_set_of(uint64_t tag)
{
    return (size_t)(tag >> 32) % CCKEY_MEMO_SETS;
}

#endif
