/* Long strings the manifest parser has decoded before, handed out again.
 *
 * A string's decoding, and whether it is valid at all, depend only on its
 * raw bytes. So when a string's raw bytes repeat those of an earlier valid
 * one, up to and including its closing quote, the earlier decoded bytes
 * are the answer: the parser then skips decoding (inline sources repeat
 * whole) and hands out the earlier address, on which the library's
 * equal-address fast path skips hashing (host/batch/planner.c). Only equal
 * bytes are ever shared, so keys and errors cannot change.
 *
 * Direct-mapped, keyed by a hash of 64 of the first 256 raw bytes: a clash
 * or a miss costs one memcmp and a normal decode. The caller keeps every
 * raw line and every decoded string alive, unmoved, while the table is in
 * use (cmd_batch.c: one table per parse thread and chunk). The tables
 * themselves are in manifest.h; this is their use by the parser. */
#ifndef CCKEY_MANIFEST_REUSE_H
#define CCKEY_MANIFEST_REUSE_H

#include "manifest.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The hash both tables use: 64 of a long string's first 256 raw bytes. */
static inline uint64_t mj_reuse_hash(const uint8_t *s)
{
    static const unsigned at[8] = {0, 8, 16, 24, 224, 232, 240, 248};
    uint64_t h = 0;
    for (int k = 0; k < 8; k++) {
        uint64_t w;
        memcpy(&w, s + at[k], 8);
        h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    }
    return h;
}

static inline size_t mj_reuse_slot(const mj_reuse *r, uint64_t h)
{
    return (size_t)(h >> 32) & r->mask;
}

/* The earlier string that s[0, avail) starts with, closing quote included,
 * or NULL. avail > MJ_REUSE_MIN. */
static inline const mj_reuse_entry *mj_reuse_find(const mj_reuse *r, size_t slot, const uint8_t *s, size_t avail)
{
    const mj_reuse_entry *e = &r->e[slot];
    if (!e->raw || e->raw_len >= avail || s[e->raw_len] != '"' || memcmp(s, e->raw, e->raw_len) != 0) return NULL;
    return e;
}

static inline void mj_reuse_put(mj_reuse *r, size_t slot, const uint8_t *raw, size_t raw_len, cckey_bytes dec)
{
    r->e[slot] = (mj_reuse_entry){raw, raw_len, dec};
}

static inline const mj_known_entry *mj_known_find(const mj_known *k, uint64_t h, const uint8_t *s, size_t avail)
{
    if (!k->e) return NULL;
    for (size_t p = 0; p < MJ_KNOWN_PROBES; p++) {
        const mj_known_entry *e = &k->e[((h >> 32) + p) & (((size_t)1 << MJ_KNOWN_BITS) - 1)];
        if (!e->raw) return NULL;
        if (e->hash == h && e->raw_len < avail && s[e->raw_len] == '"' && memcmp(s, e->raw, e->raw_len) == 0) return e;
    }
    return NULL;
}

/* Promote the string raw[0, raw_len) (its closing quote at raw[raw_len])
 * that decodes to dec: the new entry, or NULL when the budget, the probe
 * window or memory is exhausted (the caller goes on without it). */
const mj_known_entry *mj_known_add(mj_known *k, uint64_t h, const uint8_t *raw, size_t raw_len, cckey_bytes dec);
#endif
