/* The table of strings decoded before (see manifest.h). */
#include "reuse.h"

#include <stdbool.h>
#include <stdlib.h>

int mj_reuse_init(mj_reuse *r, unsigned bits)
{
    r->e = calloc((size_t)1 << bits, sizeof *r->e);
    r->mask = r->e ? ((size_t)1 << bits) - 1 : 0;
    return r->e ? 0 : -1;
}

void mj_reuse_free(mj_reuse *r)
{
    free(r->e);
    r->e = NULL;
    r->mask = 0;
}

/* The budget counts a promoted string's raw and decoded bytes; the slots
 * are a fixed 2^MJ_KNOWN_BITS entries a table. */
const mj_known_entry *mj_known_add(mj_known *k, uint64_t h, const uint8_t *raw, size_t raw_len, cckey_bytes dec)
{
    if (!k->e && !(k->e = calloc((size_t)1 << MJ_KNOWN_BITS, sizeof *k->e))) return NULL;
    size_t at = SIZE_MAX;
    for (size_t p = 0; p < MJ_KNOWN_PROBES && at == SIZE_MAX; p++) {
        size_t s = ((h >> 32) + p) & (((size_t)1 << MJ_KNOWN_BITS) - 1);
        if (!k->e[s].raw) at = s;
    }
    size_t cost = raw_len + dec.len + 1;
    if (at == SIZE_MAX) return NULL;
    size_t left = __atomic_load_n(k->budget, __ATOMIC_RELAXED);
    do
        if (left < cost) return NULL;
    while (!__atomic_compare_exchange_n(k->budget, &left, left - cost, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    uint8_t *bytes = malloc(cost);
    if (!bytes) return NULL;
    memcpy(bytes, raw, raw_len);
    if (dec.len) memcpy(bytes + raw_len, dec.ptr, dec.len);
    mj_known_entry e = {.hash = h, .raw = bytes, .raw_len = raw_len, .dec = {bytes + raw_len, dec.len}};
    bool ok = cckey_source_new(&e.src, e.dec, CCKEY_SOURCE_BORROW) == CCKEY_OK;   /* dec lives as long */
    if (!ok) {
        free(bytes);
        return NULL;
    }
    k->e[at] = e;
    return &k->e[at];
}

void mj_known_free(mj_known *k)
{
    if (k->e)
        for (size_t s = 0; s < (size_t)1 << MJ_KNOWN_BITS; s++) {
            cckey_source_free(k->e[s].src);   /* before the bytes it borrows */
            free((void *)k->e[s].raw);
        }
    free(k->e);
    k->e = NULL;
}
