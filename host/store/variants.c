/* An entry's builds (format 4, see entry/entry.h) as the store uses them:
 * choosing the one a look-up serves, and merging a put's new build with
 * the ones already held. Splitting an entry into builds is entry/variants.c. */
#include "store_internal.h"
#include "../core/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

cckey_status cckey_variants_choose(const cckey_records *r, uint64_t plen, const cckey_lookup *lk, cckey_variant *v,
                                   uint32_t *index, uint32_t *n, cckey_miss *why)
{
    cckey_variant *all;
    cckey_status st = cckey_variants_split(r, plen, &all, n);
    if (st != CCKEY_OK) {
        *why = st == CCKEY_ERR_CORRUPT ? CCKEY_MISS_CORRUPT : CCKEY_MISS_ERROR;
        return st;
    }
    /* The newest build's miss is the one reported; its detail is kept
     * while the older builds are checked. */
    cckey_status first = CCKEY_OK;
    cckey_miss first_why = CCKEY_MISS_NONE;
    char detail[768] = "";
    for (uint32_t i = 0; i < *n; i++) {
        cckey_miss w = CCKEY_MISS_NONE;
        st = lk ? cckey_records_match(r->bytes + all[i].rec_at, all[i].rec_len, lk, r->version, &w) : CCKEY_OK;
        if (st == CCKEY_OK) {
            *v = all[i], *index = i, *why = CCKEY_MISS_NONE;
            free(all);
            return CCKEY_OK;
        }
        if (st == CCKEY_ERR_COLLISION || w == CCKEY_MISS_ERROR) {   /* never looked past */
            *why = w;
            free(all);
            return st;
        }
        if (i == 0) first = st, first_why = w, snprintf(detail, sizeof detail, "%s", cckey_last_error());
    }
    free(all);
    *why = first_why;
    if (*n == 1) return cckey_fail(first, "%s", detail);
    if (*n == 2) return cckey_fail(first, "%s (the key's other build does not match either)", detail);
    return cckey_fail(first, "%s (the key's %u other builds do not match either)", detail, *n - 1);
}

/* ---- a put's new entry ---------------------------------------------------- */

/* A VARIANT record: the binary at `at`, len bytes, built at ns. */
static void put_variant(uint8_t *p, uint64_t at, uint64_t len, int64_t ns)
{
    cckey_put_le16(p, CCKEY_REC_VARIANT);
    cckey_put_le16(p + 2, CCKEY_REC_CRITICAL);
    cckey_put_le32(p + 4, CCKEY_VARIANT_FIXED);
    cckey_put_le64(p + 8, at);
    cckey_put_le64(p + 16, len);
    cckey_put_le64(p + 24, (uint64_t)ns);
}

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The builds of the entry held under key now, from its bytes (read and
 * checked whole); false when there is none to keep. */
typedef struct held {
    uint8_t *bytes;
    cckey_records rec;
    cckey_variant *v;
    uint32_t n;
} held;

static bool read_held(cckey_store *s, const char *key, held *h)
{
    memset(h, 0, sizeof *h);
    size_t n;
    void *buf;
    if (cckey_store_read_entry(s, key, &buf, &n) != CCKEY_OK ||
        cckey_entry_make_plain((uint8_t **)&buf, &n, key) != CCKEY_OK) {
        free(buf);
        cckey_clear_error();   /* none, or damaged: the put replaces it */
        return false;
    }
    h->bytes = buf;
    h->rec = (cckey_records){h->bytes + CCKEY_ENTRY_HEADER, cckey_get_le32(h->bytes + CCKEY_ENTRY_RECLEN_AT),
                             cckey_get_le32(h->bytes + 8), cckey_get_le32(h->bytes + CCKEY_ENTRY_VARIANTS_AT)};
    if (cckey_variants_split(&h->rec, cckey_get_le64(h->bytes + 16), &h->v, &h->n) != CCKEY_OK) {
        cckey_clear_error();
        free(h->bytes);
        return false;
    }
    return true;
}

/* Whether the new build (records rec) keeps old build b of h within the
 * limits, given what is kept so far. */
static bool keep(const cckey_store *s, const held *h, const cckey_variant *b, const uint8_t *rec, uint32_t rec_len,
                 uint64_t rec_total, uint64_t bytes, uint32_t kept)
{
    if (b->rec_len == rec_len && memcmp(h->rec.bytes + b->rec_at, rec, rec_len) == 0) return false;   /* replaced */
    if (cckey_records_has(h->rec.bytes + b->rec_at, b->rec_len, CCKEY_REC_UNVERIFIED)) return false;   /* never served */
    if (kept == CCKEY_MAX_VARIANTS) return false;
    uint64_t more = CCKEY_REC_HEAD + CCKEY_VARIANT_FIXED + (uint64_t)b->rec_len;
    if (rec_total + more > CCKEY_ENTRY_MAX_RECORDS) return false;
    return !s->max_bytes || bytes + more + b->len <= s->max_bytes / 8;
}

cckey_status cckey_variants_merge(cckey_store *s, const char *key, const uint8_t *rec, uint32_t rec_len,
                                  const void *data, size_t len, cckey_merged *out)
{
    memset(out, 0, sizeof *out);
    held h;
    bool old = read_held(s, key, &h);
    const uint32_t head = CCKEY_REC_HEAD + CCKEY_VARIANT_FIXED;
    uint64_t rec_total = head + (uint64_t)rec_len, bytes = CCKEY_ENTRY_HEADER + rec_total + len;
    bool *kept = old ? calloc(h.n, sizeof *kept) : NULL;
    uint32_t n = 1;
    size_t plen = len;
    for (uint32_t i = 0; kept && i < h.n; i++) {
        if (!keep(s, &h, &h.v[i], rec, rec_len, rec_total, bytes, n)) continue;
        kept[i] = true, n++;
        rec_total += head + (uint64_t)h.v[i].rec_len;
        bytes += head + (uint64_t)h.v[i].rec_len + h.v[i].len;
        plen += (size_t)h.v[i].len;
    }
    out->rec = malloc((size_t)rec_total);
    out->payload = n > 1 ? malloc(plen ? plen : 1) : NULL;
    if (!out->rec || (n > 1 && !out->payload)) {
        free(out->rec), free(out->payload), free(kept);
        if (old) free(h.bytes), free(h.v);
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
    }
    put_variant(out->rec, 0, len, now_ns());
    if (rec_len) memcpy(out->rec + head, rec, rec_len);
    uint64_t r = head + (uint64_t)rec_len, at = len;
    if (n > 1 && len) memcpy(out->payload, data, len);
    const uint8_t *old_payload = old ? h.bytes + CCKEY_ENTRY_HEADER + h.rec.len : NULL;
    for (uint32_t i = 0; kept && i < h.n; i++) {
        if (!kept[i]) continue;
        const cckey_variant *b = &h.v[i];
        put_variant(out->rec + r, at, b->len, b->built_ns);
        memcpy(out->rec + r + head, h.rec.bytes + b->rec_at, b->rec_len);
        if (b->len) memcpy(out->payload + at, old_payload + b->at, (size_t)b->len);
        r += head + b->rec_len, at += b->len;
    }
    free(kept);
    if (old) free(h.bytes), free(h.v);
    out->rec_len = (uint32_t)rec_total, out->len = plen, out->variants = n;
    return CCKEY_OK;
}
