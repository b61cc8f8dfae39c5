/* One block's strings and option sets, interned in one pass (see
 * intern_block.h). */
#include "intern_block.h"
#include "hash.h"
#include "../core/internal.h"

#include <stdbool.h>
#include <string.h>

/* Open addressing: id + 1 (0 = empty) and the hash's low 32 bits, so that
 * most probes never touch the strings themselves. */
typedef struct slot {
    uint32_t id1, h32;
} slot;

/* The last string seen at each of a few addresses: a caller's shared
 * device or source object (or one copied once per physical string, as the
 * bindings do) costs one look-up and no hashing. Direct-mapped. */
enum { BY_PTR = 1024 };

typedef struct by_ptr {
    const void *ptr;
    size_t len;
    uint32_t id;
} by_ptr;

typedef struct block_state {
    cckey_block_ids *out;
    slot *strings, *sets;
    size_t string_mask, set_mask;
    by_ptr seen[BY_PTR];
    size_t shared[CCKEY_SHARED_SETS];   /* per options-array address: the last tuple with it */
    uint32_t no_options;          /* the set id of "no options", once one tuple has it */
} block_state;

static inline size_t pow2_at_least(size_t n)
{
    size_t cap = 16;
    while (cap < n) cap *= 2;
    return cap;
}

static inline bool same_bytes(cckey_msg m, cckey_bytes b)
{
    return m.len == b.len && ((const void *)m.ptr == b.ptr || b.len == 0 || memcmp(m.ptr, b.ptr, b.len) == 0);
}

static uint32_t string_id(block_state *s, cckey_bytes b)
{
    by_ptr *p = &s->seen[cckey_ptr_slot(b.ptr, BY_PTR)];
    if (p->ptr == b.ptr && p->len == b.len && b.ptr) return p->id;
    cckey_block_ids *o = s->out;
    uint64_t h = cckey_hash_bytes(b.ptr, b.len) | 1;
    uint32_t h32 = (uint32_t)h, id;
    for (size_t j = (h32 ^ (uint32_t)(h >> 32)) & s->string_mask;; j = (j + 1) & s->string_mask) {
        slot *sl = &s->strings[j];
        if (!sl->id1) {
            id = (uint32_t)o->n_strings++;
            o->msgs[id] = (cckey_msg){b.ptr, b.len};
            o->str_hash[id] = h;
            *sl = (slot){id + 1, h32};
            break;
        }
        id = sl->id1 - 1;
        if (sl->h32 == h32 && o->str_hash[id] == h && same_bytes(o->msgs[id], b)) break;
    }
    *p = (by_ptr){b.ptr, b.len, id};
    return id;
}

/* The set id of tuple i's own options, whose string ids are at oid. */
static uint32_t set_id(block_state *s, const cckey_tuple *tuples, size_t i, const uint32_t *oid)
{
    cckey_block_ids *o = s->out;
    size_t k = tuples[i].n_options;
    if (k == 0) {
        if (s->no_options == UINT32_MAX) {
            s->no_options = (uint32_t)o->n_sets;
            o->set_rep[o->n_sets++] = i;
        }
        return s->no_options;
    }
    uint64_t h = cckey_hash_bytes(oid, 2 * k * sizeof *oid);
    uint32_t h32 = (uint32_t)h;
    for (size_t j = (h32 ^ (uint32_t)(h >> 32)) & s->set_mask;; j = (j + 1) & s->set_mask) {
        slot *sl = &s->sets[j];
        if (!sl->id1) {
            uint32_t id = (uint32_t)o->n_sets++;
            o->set_rep[id] = i;
            *sl = (slot){id + 1, h32};
            return id;
        }
        size_t t = o->set_rep[sl->id1 - 1];
        if (sl->h32 == h32 && tuples[t].n_options == k &&
            memcmp(o->opt_ids + o->opt_base[t], oid, 2 * k * sizeof *oid) == 0)
            return sl->id1 - 1;
    }
}

static cckey_status alloc_tables(block_state *s, const cckey_tuple *tuples, size_t n, cckey_scratch *mem)
{
    /* Upper bounds: every string and every option set distinct, but a
     * shared options array counted once (a batch may share one long list
     * among all its tuples). */
    size_t pairs = 0, with_options = 0, shared[CCKEY_SHARED_SETS];
    cckey_shared_reset(shared);
    for (size_t i = 0; i < n; i++) {
        if (cckey_shared_options(shared, tuples, i) != SIZE_MAX) continue;
        pairs += tuples[i].n_options;
        with_options += tuples[i].n_options != 0;
    }
    if (pairs > (SIZE_MAX / 4 - 3 * n) / 2 || 3 * n + 2 * pairs >= UINT32_MAX)
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "%zu option pairs in one block", pairs);
    size_t strings = 3 * n + 2 * pairs;
    cckey_block_ids *o = s->out;
    size_t string_cap = pow2_at_least(2 * strings), set_cap = pow2_at_least(2 * with_options);
    s->strings = cckey_scratch_calloc(mem, string_cap * sizeof *s->strings);
    s->sets = cckey_scratch_calloc(mem, set_cap * sizeof *s->sets);
    s->string_mask = string_cap - 1;
    s->set_mask = set_cap - 1;
    o->ids = cckey_scratch_alloc(mem, 3 * n * sizeof *o->ids);
    o->opt_ids = cckey_scratch_alloc(mem, 2 * pairs * sizeof *o->opt_ids);
    o->opt_base = cckey_scratch_alloc(mem, n * sizeof *o->opt_base);
    o->msgs = cckey_scratch_alloc(mem, strings * sizeof *o->msgs);
    o->str_hash = cckey_scratch_alloc(mem, strings * sizeof *o->str_hash);
    o->set_of = cckey_scratch_alloc(mem, n * sizeof *o->set_of);
    o->set_rep = cckey_scratch_alloc(mem, n * sizeof *o->set_rep);
    if (!s->strings || !s->sets || !o->ids || !o->opt_ids || !o->opt_base || !o->msgs || !o->str_hash ||
        !o->set_of || !o->set_rep)
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "block tables for %zu tuples", n);
    return CCKEY_OK;
}

cckey_status cckey_intern_block(cckey_block_ids *out, const cckey_tuple *tuples, size_t n, size_t base,
                                cckey_scratch *mem)
{
    memset(out, 0, sizeof *out);
    block_state s = {.out = out, .no_options = UINT32_MAX};
    memset(s.seen, 0, sizeof s.seen);
    cckey_shared_reset(s.shared);
    cckey_status st = alloc_tables(&s, tuples, n, mem);
    if (st != CCKEY_OK) return st;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        const cckey_tuple *t = &tuples[i];
        size_t root = cckey_shared_options(s.shared, tuples, i);
        if (!cckey_bytes_ok(t->device) || !cckey_bytes_ok(t->name) || !cckey_bytes_ok(t->source) ||
            (root == SIZE_MAX && !cckey_options_ok(t->options, t->n_options)))
            return cckey_fail(CCKEY_ERR_INVALID_ARG, "tuple %zu has a {NULL, len > 0} field or NULL options",
                              base + i);
        out->ids[3 * i] = string_id(&s, t->device);
        out->ids[3 * i + 1] = string_id(&s, t->name);
        out->ids[3 * i + 2] = string_id(&s, t->source);
        if (root != SIZE_MAX) {   /* the same strings: the same ids and set */
            out->opt_base[i] = out->opt_base[root];
            out->set_of[i] = out->set_of[root];
            continue;
        }
        uint32_t *oid = out->opt_ids + o;
        for (size_t k = 0; k < t->n_options; k++) {
            oid[2 * k] = string_id(&s, t->options[k].key);
            oid[2 * k + 1] = string_id(&s, t->options[k].value);
        }
        out->opt_base[i] = o;
        out->set_of[i] = set_id(&s, tuples, i, oid);
        o += 2 * t->n_options;
    }
    return CCKEY_OK;
}
