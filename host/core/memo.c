/* Source handles: the source is digested once, keys are memoised per
 * (device, name, options).
 *
 * Readers never write shared memory on a hit (beyond setting a clock bit that
 * is usually set already), so threads hitting one handle scale instead of
 * bouncing a lock's cache line. Each slot is a seqlock: a writer makes the
 * sequence odd, writes, and makes it even again; a reader that sees the same
 * even sequence before and after its copy has a consistent entry. The entry
 * holds the whole material, compared byte for byte: a hit is exact, never a
 * hash match. */
#include "internal.h"
#include "memo_material.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define WAYS CCKEY_MEMO_WAYS
#define SETS CCKEY_MEMO_SETS
#define MAT_WORDS CCKEY_MEMO_MAT_WORDS
#define KEY_WORDS ((CCKEY_KEY_LEN + 7) / 8)

typedef struct memo_slot {
    _Atomic uint32_t seq;
    _Atomic uint32_t used;          /* clock bit */
    _Atomic uint64_t tag;           /* material hash; 0 marks an empty slot */
    _Atomic uint64_t mat_len;
    _Atomic uint64_t mat[MAT_WORDS];
    _Atomic uint64_t key[KEY_WORDS];
} memo_slot;

typedef struct memo_table {
    memo_slot slot[SETS][WAYS];
    _Atomic uint32_t hand[SETS];
} memo_table;

struct cckey_source {
    const uint8_t *bytes;
    size_t len;
    void *owned;
    char hex[32];
    _Atomic(memo_table *) memo;
};

cckey_status cckey_source_new(cckey_source **out, cckey_bytes source, unsigned flags)
{
    if (!out) return cckey_fail(CCKEY_ERR_INVALID_ARG, "out is NULL");
    if (!cckey_bytes_ok(source)) return cckey_fail(CCKEY_ERR_INVALID_ARG, "source is {NULL, len > 0}");
    if (flags & ~CCKEY_SOURCE_BORROW) return cckey_fail(CCKEY_ERR_INVALID_ARG, "unknown flags 0x%x", flags);
    cckey_source *s = calloc(1, sizeof *s);
    if (!s) return cckey_fail(CCKEY_ERR_NO_MEMORY, "source handle");
    s->bytes = source.ptr;
    s->len = source.len;
    if (!(flags & CCKEY_SOURCE_BORROW) && source.len) {
        s->owned = malloc(source.len);
        if (!s->owned) {
            free(s);
            return cckey_fail(CCKEY_ERR_NO_MEMORY, "copying a %zu-byte source", source.len);
        }
        memcpy(s->owned, source.ptr, source.len);
        s->bytes = s->owned;
    }
    uint8_t d[CCKEY_MD5_DIGEST];
    cckey_md5(s->bytes, s->len, d);
    cckey_hex(s->hex, d);
    atomic_init(&s->memo, NULL);
    *out = s;
    return CCKEY_OK;
}

cckey_status cckey_source_new_hex(cckey_source **out, const char hex[32])
{
    cckey_source *s = calloc(1, sizeof *s);
    if (!s) return cckey_fail(CCKEY_ERR_NO_MEMORY, "source handle");
    memcpy(s->hex, hex, 32);
    atomic_init(&s->memo, NULL);
    *out = s;
    return CCKEY_OK;
}

void cckey_source_free(cckey_source *src)
{
    if (!src) return;
    free(atomic_load_explicit(&src->memo, memory_order_acquire));
    free(src->owned);
    free(src);
}

const char *cckey_source_hex_of(const cckey_source *src)
{
    return src->hex;
}

cckey_status cckey_source_digest(char out[CCKEY_HEX_LEN + 1], const cckey_source *src)
{
    if (!out || !src) return cckey_fail(CCKEY_ERR_INVALID_ARG, "out or src is NULL");
    memcpy(out, src->hex, 32);
    out[32] = '\0';
    return CCKEY_OK;
}

/* Every data load is an acquire and every data store a release (plain moves
 * on x86) instead of standalone fences, which ThreadSanitizer cannot model:
 * a reader that sees any word of a newer write also sees that write's odd
 * sequence on its second look, and retries as a miss. */
static bool slot_read(memo_slot *s, uint64_t tag, size_t len, const uint64_t *mat, size_t nwords,
                      uint64_t key[KEY_WORDS])
{
    uint32_t s1 = atomic_load_explicit(&s->seq, memory_order_acquire);
    if (s1 & 1) return false;
    if (atomic_load_explicit(&s->tag, memory_order_acquire) != tag ||
        atomic_load_explicit(&s->mat_len, memory_order_acquire) != len)
        return false;
    for (size_t i = 0; i < nwords; i++)
        if (atomic_load_explicit(&s->mat[i], memory_order_acquire) != mat[i]) return false;
    const cckey_memo_hook_table *hooks = cckey_memo_hooks;
    if (__builtin_expect(hooks != NULL, 0)) hooks->compared();
    for (size_t i = 0; i < KEY_WORDS; i++) key[i] = atomic_load_explicit(&s->key[i], memory_order_acquire);
    return atomic_load_explicit(&s->seq, memory_order_relaxed) == s1;
}

/* Clock eviction within the set: skip (and clear) recently used ways. */
static memo_slot *pick_victim(memo_table *t, size_t set)
{
    memo_slot *ways = t->slot[set];
    for (int w = 0; w < WAYS; w++)
        if (atomic_load_explicit(&ways[w].tag, memory_order_relaxed) == 0) return &ways[w];
    for (int tries = 0; tries < 2 * WAYS; tries++) {
        uint32_t h = atomic_fetch_add_explicit(&t->hand[set], 1, memory_order_relaxed) % WAYS;
        if (!atomic_exchange_explicit(&ways[h].used, 0, memory_order_relaxed)) return &ways[h];
    }
    return &ways[atomic_load_explicit(&t->hand[set], memory_order_relaxed) % WAYS];
}

static void slot_write(memo_slot *s, uint64_t tag, size_t len, const uint64_t *mat, size_t nwords,
                       const uint64_t key[KEY_WORDS])
{
    uint32_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
    /* Another writer holds the slot: skip the insert rather than wait. */
    if ((seq & 1) || !atomic_compare_exchange_strong_explicit(&s->seq, &seq, seq + 1,
                                                              memory_order_relaxed,
                                                              memory_order_relaxed))
        return;
    atomic_store_explicit(&s->tag, tag, memory_order_release);
    atomic_store_explicit(&s->mat_len, len, memory_order_release);
    for (size_t i = 0; i < nwords; i++) atomic_store_explicit(&s->mat[i], mat[i], memory_order_release);
    for (size_t i = 0; i < KEY_WORDS; i++) atomic_store_explicit(&s->key[i], key[i], memory_order_release);
    atomic_store_explicit(&s->used, 1, memory_order_relaxed);
    atomic_store_explicit(&s->seq, seq + 2, memory_order_release);
}

const cckey_memo_hook_table *cckey_memo_hooks;

static memo_table *memo_of(cckey_source *src)
{
    memo_table *t = atomic_load_explicit(&src->memo, memory_order_acquire);
    if (t) return t;
    memo_table *fresh = calloc(1, sizeof *fresh);
    if (!fresh) return NULL;   /* no memo: keys are still computed, just not kept */
    if (atomic_compare_exchange_strong_explicit(&src->memo, &t, fresh, memory_order_acq_rel,
                                                memory_order_acquire))
        return fresh;
    free(fresh);
    return t;
}

static cckey_status compute(char out[CCKEY_KEY_LEN + 1], const cckey_source *src, cckey_bytes device,
                            cckey_bytes name, const cckey_option *options, size_t n)
{
    char h[3][32];
    cckey_status st = cckey_options_hex(h[2], options, n);
    if (st != CCKEY_OK) return st;
    uint8_t d[CCKEY_MD5_DIGEST];
    cckey_md5(device.ptr, device.len, d);
    cckey_hex(h[0], d);
    cckey_md5(name.ptr, name.len, d);
    cckey_hex(h[1], d);
    cckey_join_key(out, h[0], h[1], src->hex, h[2]);
    return CCKEY_OK;
}

cckey_status cckey_source_key(char out[CCKEY_KEY_LEN + 1], cckey_source *src, cckey_bytes device,
                              cckey_bytes name, const cckey_option *options, size_t n_options)
{
    if (!out || !src) return cckey_fail(CCKEY_ERR_INVALID_ARG, "out or src is NULL");
    if (!cckey_bytes_ok(device) || !cckey_bytes_ok(name))
        return cckey_fail(CCKEY_ERR_INVALID_ARG, "a field is {NULL, len > 0}");
    if (!cckey_options_ok(options, n_options))
        return cckey_fail(CCKEY_ERR_INVALID_ARG, "options are NULL or hold {NULL, len > 0}");

    size_t len = cckey_memo_material_len(device, name, options, n_options);
    memo_table *t = len <= CCKEY_MEMO_MAX_MATERIAL ? memo_of(src) : NULL;
    if (!t) return compute(out, src, device, name, options, n_options);

    uint64_t mat[MAT_WORDS];
    size_t nwords = (len + 7) / 8;
    cckey_memo_material_write(mat, nwords, device, name, options, n_options);
    uint64_t tag = cckey_memo_material_hash(mat, nwords);
    size_t set = cckey_memo_set_of(tag);
    uint64_t key[KEY_WORDS];
    for (int w = 0; w < WAYS; w++) {
        memo_slot *s = &t->slot[set][w];
        if (slot_read(s, tag, len, mat, nwords, key)) {
            if (!atomic_load_explicit(&s->used, memory_order_relaxed))
                atomic_store_explicit(&s->used, 1, memory_order_relaxed);
            memcpy(out, key, CCKEY_KEY_LEN);
            out[CCKEY_KEY_LEN] = '\0';
            return CCKEY_OK;
        }
    }
    cckey_status st = compute(out, src, device, name, options, n_options);
    if (st != CCKEY_OK) return st;
    memset(key, 0, sizeof key);
    memcpy(key, out, CCKEY_KEY_LEN);
    slot_write(pick_victim(t, set), tag, len, mat, nwords, key);
    return CCKEY_OK;
}
