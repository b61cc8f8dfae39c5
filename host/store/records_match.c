/* An entry's records against a look-up: the toolchain, every dependency
 * as the file system holds it now (through the look-up's memo), and the
 * tuple's fingerprint. The record layout is entry/entry.h. */
#include "store_internal.h"
#ifdef CCKEY_WITH_CRYPTO
#include "../entry/fingerprint.h"
#endif
#include "../core/internal.h"

#include <stdlib.h>
#include <string.h>

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
    while (at = off, cckey_record_next(rec, len, &off, &type, &flags, &val, &vlen)) {
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
    while (cckey_record_next(rec, len, &off, &type, &flags, &val, &vlen)) {
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
