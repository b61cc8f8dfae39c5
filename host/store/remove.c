/* Removing one entry from the folder on request (Python's del store[key]):
 * the remotes keep theirs, as a shared cache must not lose an entry because
 * one client dropped its copy. */
#include "store_internal.h"
#include "../core/internal.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

cckey_status cckey_store_remove(cckey_store *s, const char *key)
{
    if (!s || !key) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL store or key");
    if (!cckey_entry_key_ok(key)) return cckey_fail(CCKEY_ERR_INVALID_ARG, "not a cckey key");
    cckey_status st = cckey_store_writable(s, "remove");
    if (st != CCKEY_OK) return st;
    char shard_dir[4096], path[4096];
    cckey_store_paths_of(s, key, shard_dir, path, sizeof path);
    if (unlink(path) == 0) return CCKEY_OK;
    if (errno == ENOENT || errno == ENOTDIR) return cckey_fail(CCKEY_ERR_NOT_FOUND, "no entry for this key");
    return cckey_fail(CCKEY_ERR_IO, "%s: %s", path, strerror(errno));
}
