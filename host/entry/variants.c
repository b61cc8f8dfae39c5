/* An entry's builds (format 4, see entry.h): counting them, and splitting
 * the record section and the payload into them; the trailing signature
 * belongs to the entry as a whole. */
#include "entry.h"
#include "../core/internal.h"

#include <stdlib.h>

/* One record's type and the offset just past it; false at the end, or at a
 * record that does not fit (cckey_entry_header counts builds in sections
 * nobody checked yet). */
static bool step(const uint8_t *rec, uint32_t len, uint32_t *off, unsigned *type)
{
    if (*off > len || len - *off < CCKEY_REC_HEAD) return false;
    uint32_t vlen = cckey_get_le32(rec + *off + 4);
    if (vlen > len - *off - CCKEY_REC_HEAD) return false;
    *type = cckey_get_le16(rec + *off);
    *off += CCKEY_REC_HEAD + vlen;
    return true;
}

uint32_t cckey_variants_count(const uint8_t *rec, uint32_t len)
{
    uint32_t off = 0, n = 0;
    unsigned type;
    while (step(rec, len, &off, &type)) n += type == CCKEY_REC_VARIANT;
    return n;
}

bool cckey_records_has(const uint8_t *rec, uint32_t len, unsigned want)
{
    uint32_t off = 0;
    unsigned type;
    while (step(rec, len, &off, &type))
        if (type == want) return true;
    return false;
}

uint32_t cckey_records_signature_at(const uint8_t *rec, uint32_t len)
{
    uint32_t off = 0, at = len, before;
    unsigned type;
    while (before = off, step(rec, len, &off, &type))
        if (type == CCKEY_REC_SIGNATURE && off == len) at = before;
    return at;
}

/* Version 4 with builds: VARIANT groups, binaries back to back. */
static cckey_status split_groups(const uint8_t *rec, uint32_t end, uint32_t count, uint64_t plen,
                                 cckey_variant *v)
{
    uint32_t off = 0, at, n = 0;
    uint64_t next = 0;
    unsigned type;
    while (at = off, off < end && step(rec, end, &off, &type)) {
        if (type != CCKEY_REC_VARIANT) {
            if (n == 0) return cckey_fail(CCKEY_ERR_CORRUPT, "a record before the first build");
            continue;
        }
        if (n == count) return cckey_fail(CCKEY_ERR_CORRUPT, "more builds than the header says (%u)", count);
        const uint8_t *val = rec + at + CCKEY_REC_HEAD;
        cckey_variant *b = &v[n];
        *b = (cckey_variant){.rec_at = off, .at = cckey_get_le64(val), .len = cckey_get_le64(val + 8),
                             .built_ns = (int64_t)cckey_get_le64(val + 16)};
        if (n) v[n - 1].rec_len = at - v[n - 1].rec_at;
        if (b->at != next || b->len > plen - next)
            return cckey_fail(CCKEY_ERR_CORRUPT, "build %u's binary is not where the one before it ends", n);
        next += b->len;
        n++;
    }
    if (n != count) return cckey_fail(CCKEY_ERR_CORRUPT, "%u builds, the header says %u", n, count);
    if (next != plen) return cckey_fail(CCKEY_ERR_CORRUPT, "the builds' binaries do not fill the payload");
    v[n - 1].rec_len = end - v[n - 1].rec_at;
    return CCKEY_OK;
}

cckey_status cckey_variants_split(const cckey_records *r, uint64_t plen, cckey_variant **out, uint32_t *n)
{
    *out = NULL, *n = 0;
    uint32_t end = cckey_records_signature_at(r->bytes, r->len), count = r->version >= 4 ? r->variants : 0;
    if (count > CCKEY_VARIANTS_READ_MAX) return cckey_fail(CCKEY_ERR_CORRUPT, "%u builds under one key", count);
    if (count == 0 && r->version >= 4 && cckey_variants_count(r->bytes, end))
        return cckey_fail(CCKEY_ERR_CORRUPT, "build records in an entry whose header counts none");
    cckey_variant *v = calloc(count ? count : 1, sizeof *v);
    if (!v) return cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
    cckey_status st = CCKEY_OK;
    if (count == 0) v[0] = (cckey_variant){0, end, 0, plen, 0};   /* versions 2, 3: one build */
    else st = split_groups(r->bytes, end, count, plen, v);
    if (st != CCKEY_OK) {
        free(v);
        return st;
    }
    *out = v, *n = count ? count : 1;
    return CCKEY_OK;
}
