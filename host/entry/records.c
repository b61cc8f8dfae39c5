/* An entry's record section: writing it from cckey_entry_meta, walking it,
 * and checking its form on every read (matching it against a look-up is
 * the store's: store/records_match.c). The layout is in entry.h. */
#include "entry.h"
#ifdef CCKEY_WITH_CRYPTO
#include "fingerprint.h"
#endif
#include "../core/internal.h"

#include <stdlib.h>
#include <string.h>

/* A growing byte buffer; ok turns false on the first failed allocation. */
typedef struct sink {
    uint8_t *p;
    size_t len, cap;
    bool ok;
} sink;

static uint8_t *reserve(sink *k, size_t n)
{
    if (!k->ok) return NULL;
    if (k->len + n > k->cap) {
        size_t cap = k->cap ? k->cap : 256;
        while (cap < k->len + n) cap *= 2;
        uint8_t *p = realloc(k->p, cap);
        if (!p) return k->ok = false, NULL;
        k->p = p, k->cap = cap;
    }
    uint8_t *at = k->p + k->len;
    k->len += n;
    return at;
}

/* One record's head; the caller then appends exactly vlen value bytes. */
static void head(sink *k, uint16_t type, uint16_t flags, size_t vlen)
{
    uint8_t *h = reserve(k, CCKEY_REC_HEAD);
    if (!h) return;
    h[0] = (uint8_t)type, h[1] = (uint8_t)(type >> 8), h[2] = (uint8_t)flags, h[3] = (uint8_t)(flags >> 8);
    cckey_put_le32(h + 4, (uint32_t)vlen);
}

static void bytes(sink *k, const void *p, size_t n)
{
    uint8_t *at = reserve(k, n);
    if (at && n) memcpy(at, p, n);
}

static void text(sink *k, uint16_t type, const char *s)
{
    if (!s) return;
    head(k, type, 0, strlen(s));
    bytes(k, s, strlen(s));
}

cckey_status cckey_records_encode(const cckey_entry_meta *meta, const char *unverified, uint8_t **out,
                                  uint32_t *len)
{
    *out = NULL, *len = 0;
    static const cckey_entry_meta none;
    if (!meta && !unverified) return CCKEY_OK;
    if (!meta) meta = &none;
    sink k = {.ok = true};
    text(&k, CCKEY_REC_TOOL_COMPILER, meta->compiler);
    text(&k, CCKEY_REC_TOOL_VERSION, meta->version);
    if (meta->options) {
        size_t n = 0;
        for (size_t i = 0; i < meta->n_options; i++) n += strlen(meta->options[i]) + 1;
        head(&k, CCKEY_REC_TOOL_OPTIONS, 0, n);
        for (size_t i = 0; i < meta->n_options; i++) bytes(&k, meta->options[i], strlen(meta->options[i]) + 1);
    }
    size_t deps_from = k.len;
    for (size_t i = 0; i < meta->n_deps; i++) {
        const cckey_dep *d = &meta->deps[i];
        if (!d->path) {
            free(k.p);
            return cckey_fail(CCKEY_ERR_INVALID_ARG, "dependency %zu has no path", i);
        }
        size_t pl = strlen(d->path);
        head(&k, CCKEY_REC_DEPENDENCY, CCKEY_REC_CRITICAL, CCKEY_DEP_FIXED + pl);
        uint8_t *f = reserve(&k, CCKEY_DEP_FIXED);
        if (f) {
            memset(f, 0, CCKEY_DEP_FIXED);
            cckey_put_le32(f, d->root);
            f[4] = d->present ? 1 : 0;
            cckey_put_le64(f + 8, d->present ? d->size : 0);
            if (d->present) memcpy(f + 16, d->md5, 16);
        }
        bytes(&k, d->path, pl);
    }
#ifdef CCKEY_WITH_CRYPTO
    if (meta->tuple && k.ok) {
        /* Over the tuple and the dependency records just written. */
        uint8_t fp[CCKEY_FINGERPRINT_LEN];
        cckey_status st = cckey_fingerprint(meta->tuple, k.p ? k.p + deps_from : NULL, k.len - deps_from, fp);
        if (st != CCKEY_OK) {
            free(k.p);
            return st;
        }
        head(&k, CCKEY_REC_FINGERPRINT, 0, sizeof fp);
        bytes(&k, fp, sizeof fp);
    }
#else
    (void)deps_from;
    if (meta->tuple) {   /* asked for, and readers with libcrypto would refuse the entry without it */
        free(k.p);
        return cckey_fail(CCKEY_ERR_UNAVAILABLE, "this cckey was built without libcrypto: no tuple fingerprints");
    }
#endif
    if (unverified) {
        head(&k, CCKEY_REC_UNVERIFIED, CCKEY_REC_CRITICAL, strlen(unverified));
        bytes(&k, unverified, strlen(unverified));
    }
    if (!k.ok || k.len > CCKEY_ENTRY_MAX_RECORDS) {
        free(k.p);
        return k.ok ? cckey_fail(CCKEY_ERR_INVALID_ARG, "records larger than %u bytes", CCKEY_ENTRY_MAX_RECORDS)
                    : cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
    }
    *out = k.p, *len = (uint32_t)k.len;
    return CCKEY_OK;
}

bool cckey_record_next(const uint8_t *rec, uint32_t len, uint32_t *off, unsigned *type, unsigned *flags,
                       const uint8_t **val, uint32_t *vlen)
{
    if (len - *off < CCKEY_REC_HEAD) return false;
    const uint8_t *h = rec + *off;
    *type = h[0] | (unsigned)h[1] << 8, *flags = h[2] | (unsigned)h[3] << 8;
    *vlen = cckey_get_le32(h + 4);
    if (*vlen > len - *off - CCKEY_REC_HEAD) return false;
    *val = h + CCKEY_REC_HEAD;
    *off += CCKEY_REC_HEAD + *vlen;
    return true;
}

cckey_status cckey_records_check_form(const uint8_t *rec, uint32_t len)
{
    uint32_t off = 0, vlen;
    unsigned type, flags;
    const uint8_t *val;
    while (off < len) {
        if (!cckey_record_next(rec, len, &off, &type, &flags, &val, &vlen))
            return cckey_fail(CCKEY_ERR_CORRUPT, "a record overruns the record section");
        if (type == 0 || (flags & ~CCKEY_REC_CRITICAL))
            return cckey_fail(CCKEY_ERR_CORRUPT, "a record of type %u with flags %#x", type, flags);
        if (type == CCKEY_REC_DEPENDENCY && vlen < CCKEY_DEP_FIXED)
            return cckey_fail(CCKEY_ERR_CORRUPT, "a dependency record of %u bytes", vlen);
        if (type == CCKEY_REC_VARIANT && vlen != CCKEY_VARIANT_FIXED)
            return cckey_fail(CCKEY_ERR_CORRUPT, "a build record of %u bytes", vlen);
    }
    return CCKEY_OK;
}
