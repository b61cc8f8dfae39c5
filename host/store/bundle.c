/* Bundles: a store's entries in one portable file, to ship a warmed cache
 * to a deployment or a container image (cckey_store_export/_import). A
 * bundle is a tar archive (bundle_tar.c), optionally zstd-compressed;
 * bundles of the first releases (CCKEYBND, bundle_legacy.c) are still
 * imported. Either way entries are whole entry files, each checked on
 * import exactly as a local get checks it. */
#include "store_internal.h"
#include "../core/internal.h"
#include "../remote/remote.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

cckey_status cckey_store_export(cckey_store *s, const char *const *keys, size_t n_keys, int fd, uint64_t *exported,
                                uint64_t *missing)
{
    return cckey_store_export_ex(s, keys, n_keys, fd, 0, exported, missing);
}

cckey_status cckey_store_export_ex(cckey_store *s, const char *const *keys, size_t n_keys, int fd, unsigned flags,
                                   uint64_t *exported, uint64_t *missing)
{
    if (!s || fd < 0 || (n_keys && !keys)) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL store, keys or bad fd");
    if (flags & ~(unsigned)CCKEY_EXPORT_ZSTD) return cckey_fail(CCKEY_ERR_INVALID_ARG, "unknown export flags %#x", flags);
    for (size_t i = 0; keys && i < n_keys; i++)
        if (!cckey_entry_key_ok(keys[i])) return cckey_fail(CCKEY_ERR_INVALID_ARG, "not a cckey key: %.140s", keys[i]);
    return cckey_bundle_write_tar(s, keys, n_keys, fd, (flags & CCKEY_EXPORT_ZSTD) != 0, exported, missing);
}

/* Where an entry goes once read: a foreign signature is refused before
 * anything is kept (see cckey_store_import in cckey.h). */
cckey_status cckey_bundle_keep(cckey_store *s, const char *key, const void *entry, size_t n, unsigned flags,
                               cckey_import_report *r)
{
    bool to_remotes = (flags & CCKEY_IMPORT_TO_REMOTES) && s->remotes;
    if (!cckey_entry_key_ok(key)) {
        r->refused++;
        return CCKEY_OK;
    }
    if (to_remotes && cckey_remotes_vouch(s->remotes, key, entry, n) == CCKEY_SIG_FOREIGN) {
        r->foreign++;
        return CCKEY_OK;
    }
    cckey_status st = cckey_store_install(s, key, entry, n, NULL, NULL);
    if (st == CCKEY_ERR_CORRUPT || st == CCKEY_ERR_INVALID_ARG) {
        r->refused++;
        return CCKEY_OK;
    }
    if (st != CCKEY_OK) return st;
    r->imported++;
    unsigned push = CCKEY_PUSH_SKIP_PRESENT | (flags & CCKEY_IMPORT_SIGN_UNSIGNED ? CCKEY_PUSH_SIGN_UNSIGNED : 0);
    if (to_remotes && cckey_remotes_push(s->remotes, key, entry, n, push)) r->unsigned_held++;
    return CCKEY_OK;
}


/* Up to n bytes of the stream's start (fewer only at its end). */
static size_t peek(int fd, uint8_t *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, p + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    return got;
}

cckey_status cckey_store_import(cckey_store *s, int fd, int to_remotes, cckey_import_report *out)
{
    if (!s || fd < 0) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL store or bad fd");
    if (s->read_only) return cckey_store_writable(s, "import");
    cckey_import_report r = {0};
    /* Any non-zero to_remotes has meant "to the remotes" since the first release. */
    unsigned flags = to_remotes ? (unsigned)to_remotes | CCKEY_IMPORT_TO_REMOTES : 0;
    uint8_t head[16];
    errno = 0;
    size_t n = peek(fd, head, sizeof head);
    cckey_status st;
    if (n == 0) st = errno ? cckey_fail(CCKEY_ERR_IO, "reading the bundle: %s", strerror(errno))
                           : cckey_fail(CCKEY_ERR_CORRUPT, "not a cckey bundle (empty)");
    else if (n == sizeof head && memcmp(head, "CCKEYBND", 8) == 0) st = cckey_bundle_read_legacy(s, fd, head, flags, &r);
    else st = cckey_bundle_read_tar(s, fd, head, n, flags, &r);
    if (out) *out = r;
    return st;
}
