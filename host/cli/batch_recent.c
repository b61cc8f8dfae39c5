/* Recent manifest values (see batch_recent.h). */
#include "batch_recent.h"

#include <stdint.h>
#include <string.h>

/* Cheap on purpose: the length and up to 8 bytes at the end, plus 8 from
 * the middle. Manifest values that repeat differ mostly there ("kern_12",
 * "sm_80"); a clash only costs a memcmp and a miss. */
static size_t quick_hash(cckey_bytes b)
{
    uint64_t tail = 0, mid = 0;
    if (b.len >= 8) {
        memcpy(&tail, (const char *)b.ptr + b.len - 8, 8);
        memcpy(&mid, (const char *)b.ptr + b.len / 2 - 4 * (b.len >= 16), 8 * (b.len >= 16));
    } else if (b.len) {
        memcpy(&tail, b.ptr, b.len);
    }
    uint64_t h = (tail ^ mid * 0x9e3779b97f4a7c15u ^ b.len) * 0xff51afd7ed558ccdu;
    return (size_t)(h >> 40);
}

static bool same_bytes(cckey_bytes a, cckey_bytes b)
{
    return a.len == b.len && (a.ptr == b.ptr || a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

cckey_bytes batch_recent_string(batch_recent *r, cckey_bytes b)
{
    cckey_bytes *slot = &r->strings[quick_hash(b) % RECENT_STRINGS];
    if (slot->ptr && same_bytes(*slot, b)) return *slot;
    *slot = b;
    return b;
}

size_t batch_recent_set(batch_recent *r, cckey_bytes raw, size_t off)
{
    size_t s = quick_hash(raw) % RECENT_SETS;
    if (r->sets[s].raw.ptr && same_bytes(r->sets[s].raw, raw)) return r->sets[s].off;
    r->sets[s].raw = raw;
    r->sets[s].off = off;
    return SIZE_MAX;
}
