/* An entry's record section: writing it from cckey_entry_meta, checking its
 * form on every read, and matching it against a look-up. The layout is in
 * store_internal.h. */
#include "store_internal.h"
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

/* Walks the records: *type, *flags, *val and *vlen of the one at *off, then
 * advances; false at the end (or on a record that does not fit). */
static bool next_record(const uint8_t *rec, uint32_t len, uint32_t *off, unsigned *type, unsigned *flags,
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
        if (!next_record(rec, len, &off, &type, &flags, &val, &vlen))
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

static bool same_text(const uint8_t *val, uint32_t vlen, const char *want)
{
    return strlen(want) == vlen && memcmp(val, want, vlen) == 0;
}

static bool same_options(const uint8_t *val, uint32_t vlen, const cckey_lookup *lk)
{
    uint32_t at = 0;
    for (size_t i = 0; i < lk->n_options; i++) {
        size_t n = strlen(lk->options[i]) + 1;
        if (vlen - at < n || memcmp(val + at, lk->options[i], n) != 0) return false;
        at += (uint32_t)n;
    }
    return at == vlen;
}

/* One dependency record against the file system now. legacy: the entry
 * predates format 4. */
static cckey_status match_dep(const uint8_t *val, uint32_t vlen, const cckey_lookup *lk, bool legacy)
{
    uint32_t root = cckey_get_le32(val);
    bool present = val[4] == 1;
    uint64_t size = cckey_get_le64(val + 8);
    int plen = (int)(vlen - CCKEY_DEP_FIXED);
    const char *rel = (const char *)val + CCKEY_DEP_FIXED;
    /* Before format 4 an #include "/abs/h.h" was recorded as "abs/h.h",
     * absent, whatever the file did: such a build cannot be checked. */
    if (legacy && root == CCKEY_DEP_ABSOLUTE && (plen == 0 || rel[0] != '/'))
        return cckey_fail(CCKEY_ERR_STALE, "%.*s was recorded by an earlier cckey without its folder: built again",
                          plen, rel);
    if (root != CCKEY_DEP_ABSOLUTE && root >= lk->n_roots)
        return cckey_fail(CCKEY_ERR_STALE, "%.*s was found in include folder %u; this look-up names %zu", plen, rel,
                          root, lk->n_roots);
    cckey_file_digest now;
    cckey_status st = cckey_dep_digest(lk->memo, root == CCKEY_DEP_ABSOLUTE ? NULL : lk->roots[root], rel,
                                       (size_t)plen, &now);
    if (st != CCKEY_OK) return st;
    /* Named as the look-up finds it: which folder matters (a header that
     * appeared in the working folder shadows the source's own). */
    const char *base = root == CCKEY_DEP_ABSOLUTE ? "" : lk->roots[root], *sep = root == CCKEY_DEP_ABSOLUTE ? "" : "/";
    if (!present && now.exists)
        return cckey_fail(CCKEY_ERR_STALE, "%s%s%.*s appeared since the build", base, sep, plen, rel);
    if (present && !now.exists) return cckey_fail(CCKEY_ERR_STALE, "%s%s%.*s is gone", base, sep, plen, rel);
    if (present && (now.size != size || memcmp(now.md5, val + 16, 16) != 0))
        return cckey_fail(CCKEY_ERR_STALE, "%s%s%.*s changed since the build", base, sep, plen, rel);
    return CCKEY_OK;
}

#ifdef CCKEY_WITH_CRYPTO
/* The entry's FINGERPRINT record against the tuple's, the dependency
 * records (head and value, in entry order) included as at put time. */
static cckey_status match_fingerprint(const uint8_t *rec, uint32_t len, const cckey_tuple *t)
{
    uint8_t *deps = calloc(len ? len : 1, 1);
    if (!deps) return cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
    size_t n = 0;
    const uint8_t *fp = NULL, *val;
    uint32_t off = 0, at = 0, vlen, fp_len = 0;
    unsigned type, flags;
    while (at = off, next_record(rec, len, &off, &type, &flags, &val, &vlen)) {
        if (type == CCKEY_REC_DEPENDENCY) memcpy(deps + n, rec + at, off - at), n += off - at;
        if (type == CCKEY_REC_FINGERPRINT) fp = val, fp_len = vlen;
    }
    uint8_t want[CCKEY_FINGERPRINT_LEN];
    cckey_status st = cckey_fingerprint(t, deps, n, want);
    free(deps);
    if (st != CCKEY_OK) return st;
    if (!fp) return cckey_fail(CCKEY_ERR_COLLISION, "the entry records no tuple fingerprint (possible MD5 collision)");
    if (fp_len != CCKEY_FINGERPRINT_LEN || memcmp(fp, want, sizeof want) != 0)
        return cckey_fail(CCKEY_ERR_COLLISION, "the entry's tuple fingerprint differs: possible MD5 collision");
    return CCKEY_OK;
}
#endif

/* The first difference, with its kind in *why. */
#define STALE(kind, ...) (*why = (kind), cckey_fail(CCKEY_ERR_STALE, __VA_ARGS__))

cckey_status cckey_records_match(const uint8_t *rec, uint32_t len, const cckey_lookup *lk, uint32_t version,
                                 cckey_miss *why)
{
#ifdef CCKEY_WITH_CRYPTO
    if (lk->tuple) {
        cckey_status st = match_fingerprint(rec, len, lk->tuple);
        if (st != CCKEY_OK) {
            *why = st == CCKEY_ERR_COLLISION ? CCKEY_MISS_COLLISION : CCKEY_MISS_ERROR;
            return st;
        }
    }
#else
    if (lk->tuple)   /* never served unchecked when the caller asked for the check */
        return *why = CCKEY_MISS_ERROR,
               cckey_fail(CCKEY_ERR_UNAVAILABLE, "this cckey was built without libcrypto: no tuple fingerprints");
#endif
    bool seen_compiler = false, seen_version = false, seen_options = false;
    uint32_t off = 0, vlen;
    unsigned type, flags;
    const uint8_t *val;
    while (next_record(rec, len, &off, &type, &flags, &val, &vlen)) {
        switch (type) {
        case CCKEY_REC_TOOL_COMPILER:
            seen_compiler = true;
            if (lk->compiler && !same_text(val, vlen, lk->compiler))
                return STALE(CCKEY_MISS_TOOLCHAIN, "built by %.*s, not %s", (int)vlen, (const char *)val,
                             lk->compiler);
            break;
        case CCKEY_REC_TOOL_VERSION:
            seen_version = true;
            if (lk->version && !same_text(val, vlen, lk->version))
                return STALE(CCKEY_MISS_TOOLCHAIN, "built by compiler version %.*s, not %s", (int)vlen,
                             (const char *)val, lk->version);
            break;
        case CCKEY_REC_TOOL_OPTIONS:
            seen_options = true;
            if (lk->options && !same_options(val, vlen, lk))
                return STALE(CCKEY_MISS_TOOLCHAIN, "built with other compiler flags");
            break;
        case CCKEY_REC_DEPENDENCY: {
            cckey_status st = match_dep(val, vlen, lk, version < 4);
            if (st != CCKEY_OK) {
                *why = st == CCKEY_ERR_STALE ? CCKEY_MISS_HEADERS : CCKEY_MISS_ERROR;
                return st;
            }
            break;
        }
        case CCKEY_REC_UNVERIFIED:
            return STALE(CCKEY_MISS_UNVERIFIED, "built without knowing every header it read (%.*s): not served "
                         "until built again with them all known", (int)vlen, (const char *)val);
        default:
            if (flags & CCKEY_REC_CRITICAL)
                return STALE(CCKEY_MISS_UNKNOWN_RECORD, "a critical record of type %u, unknown to this cckey", type);
        }
    }
    if ((lk->compiler && !seen_compiler) || (lk->version && !seen_version) || (lk->options && !seen_options))
        return STALE(CCKEY_MISS_TOOLCHAIN, "the entry does not record its toolchain");
    *why = CCKEY_MISS_NONE;
    return CCKEY_OK;
}
