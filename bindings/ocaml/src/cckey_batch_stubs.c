/* Cckey.make_keys: the tuples are copied out of the OCaml heap (the GC may
 * move strings once the runtime lock is released), then cckey_make_keys
 * runs without the lock. A long field that many tuples share physically,
 * the usual case for sources, is copied once. A CPU batch runs in blocks,
 * queued on a helper thread a few ahead of the one whose keys become OCaml
 * strings (run_blocks). */
#include "stubs.h"

#include <caml/gc.h>
#include <caml/version.h>

#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* Fields at least this long are copied once per physical string. */
#define SHARED_MIN 64
/* The arena's first size, in bytes per tuple of the block: three short
 * fields. */
#define ARENA_PER_TUPLE 128

typedef struct arena {
    char *bytes;
    size_t len, cap;
    /* Open addressing: the OCaml address of a long string -> its offset;
     * grown to stay at most half full. */
    uintptr_t *seen_addr;
    size_t *seen_off;
    size_t seen_mask, seen_used;
} arena;

static void arena_free(arena *a)
{
    free(a->bytes);
    free(a->seen_addr);
    free(a->seen_off);
}

/* Makes room for at least n more bytes. Out of line: most fields fit. */
static __attribute__((noinline)) int arena_reserve(arena *a, size_t n)
{
    if (a->cap - a->len >= n) return 0;
    size_t cap = a->cap ? a->cap : 4096;
    while (cap - a->len < n) cap *= 2;
    char *b = realloc(a->bytes, cap);
    if (!b) return -1;
    a->bytes = b;
    a->cap = cap;
    return 0;
}

static int arena_append(arena *a, const char *p, size_t n, size_t *off)
{
    if (arena_reserve(a, n) < 0) return -1;
    if (n) memcpy(a->bytes + a->len, p, n);
    *off = a->len;
    a->len += n;
    return 0;
}

static size_t seen_slot(const arena *a, uintptr_t addr)
{
    size_t i = (size_t)((addr >> 3) * 0x9E3779B97F4A7C15ull) & a->seen_mask;
    while (a->seen_addr[i] && a->seen_addr[i] != addr) i = (i + 1) & a->seen_mask;
    return i;
}

static int seen_grow(arena *a)
{
    arena old = *a;
    size_t slots = a->seen_addr ? 2 * (a->seen_mask + 1) : 64;
    a->seen_addr = calloc(slots, sizeof *a->seen_addr);
    a->seen_off = malloc(slots * sizeof *a->seen_off);
    a->seen_mask = slots - 1;
    if (!a->seen_addr || !a->seen_off) {
        free(a->seen_addr), free(a->seen_off);
        a->seen_addr = old.seen_addr, a->seen_off = old.seen_off, a->seen_mask = old.seen_mask;
        return -1;
    }
    for (size_t j = 0; old.seen_addr && j <= old.seen_mask; j++)
        if (old.seen_addr[j]) {
            size_t i = seen_slot(a, old.seen_addr[j]);
            a->seen_addr[i] = old.seen_addr[j];
            a->seen_off[i] = old.seen_off[j];
        }
    free(old.seen_addr), free(old.seen_off);
    return 0;
}

/* caml_string_length, inlined: this runs for every field of a batch. */
static inline size_t ml_len(value s)
{
    size_t last = Bosize_val(s) - 1;
    return last - Byte(s, last);
}

static int copy_long(arena *a, value s, size_t n, cckey_bytes *out);

/* The field's bytes as an offset into the arena, kept in .ptr until the
 * arena stops moving (fix_up). A short field is copied a word at a time,
 * its whole OCaml block (at most SHARED_MIN bytes, the padding included:
 * always readable), without a call: this runs for most fields of a batch.
 * The arena keeps SHARED_MIN bytes of room; the padding copied is
 * overwritten by the next field. */
static inline int copy_field(arena *a, value s, cckey_bytes *out)
{
    size_t n = ml_len(s);
    out->len = n;
    if (n >= SHARED_MIN) return copy_long(a, s, n, out);
    if (a->cap - a->len < SHARED_MIN && arena_reserve(a, SHARED_MIN) < 0) return -1;
    char *dst = a->bytes + a->len;
    mlsize_t words = Wosize_val(s);   /* read once: dst may alias it for the compiler */
    for (mlsize_t w = 0; w < words; w++) {
        value word = Field(s, w);
        memcpy(dst + w * sizeof word, &word, sizeof word);
    }
    out->ptr = (const void *)a->len;
    a->len += n;
    return 0;
}

/* A long field, copied once per physical string in the block. */
static int copy_long(arena *a, value s, size_t n, cckey_bytes *out)
{
    if (2 * (a->seen_used + 1) > a->seen_mask + 1 && seen_grow(a) < 0) return -1;
    size_t i = seen_slot(a, (uintptr_t)s);
    if (!a->seen_addr[i]) {
        if (arena_append(a, String_val(s), n, &a->seen_off[i]) < 0) return -1;
        a->seen_addr[i] = (uintptr_t)s;
        a->seen_used++;
    }
    out->ptr = (const void *)a->seen_off[i];
    return 0;
}

/* Empties the arena for the next block, keeping its memory. */
static void arena_reset(arena *a)
{
    a->len = 0;
    if (a->seen_used) memset(a->seen_addr, 0, (a->seen_mask + 1) * sizeof *a->seen_addr);
    a->seen_used = 0;
}

static void fix_up(cckey_bytes *b, const char *base)
{
    b->ptr = base + (size_t)b->ptr;
}

/* At most this many tuples per library call when the batch runs on the
 * CPU: two of the library's tuple blocks, so that it still splits each
 * call over two threads. The blocks are equal, so that the last one is
 * not a sliver. A device backend gets the whole batch in one call. */
#define CPU_BLOCK 16384
/* Blocks copied and queued on the keyer ahead of the one whose keys become
 * strings (at most CCKEY_KEYER_DEPTH). A major GC slice on the runtime's
 * thread can outlast a block's keying: with one block queued the keyer
 * would then sit idle. */
#define DEPTH 4

/* One block's cckey_make_keys (over its slot's tuples and keys, with the
 * batch's config): its length, and what it returned with the message and
 * warning of that call, read on the runtime's thread right after it (both
 * are overwritten by the next call). */
typedef struct cckey_ml_job {
    size_t n;
    cckey_status status;
    char detail[1024];
    char warning[1024];
} cckey_ml_job;

static void job_done(cckey_ml_job *job, cckey_status st, const char *w)
{
    job->status = st;
    snprintf(job->detail, sizeof job->detail, "%s", st != CCKEY_OK ? cckey_last_error() : "");
    snprintf(job->warning, sizeof job->warning, "%s", st == CCKEY_OK && w ? w : "");
}

/* A block of the batch, copied: DEPTH slots take turns, so that blocks are
 * keyed while the next are copied. Their memory is reused block after
 * block. */
typedef struct slot {
    arena a;
    cckey_tuple *tuples;
    cckey_option *opts;
    size_t opts_cap;
    char (*out)[CCKEY_KEY_LEN + 1];
    cckey_ml_job job;
    int queued;   /* on the keyer, not yet waited for */
    int ahead;    /* its strings allocated before its keys */
} slot;

/* Everything make_keys allocates in C, freed on every path. */
typedef struct batch {
    slot slot[DEPTH];
    cckey_batch_config *cfg;
    long settings[3];   /* backend, threads, verify */
    cckey_keyer *keyer;   /* the library's thread for blocks, when used */
} batch;

static void batch_free(batch *b)
{
    for (int i = 0; i < DEPTH; i++) {
        slot *s = &b->slot[i];
        arena_free(&s->a);
        free(s->tuples);
        free(s->opts);
        free(s->out);
    }
    cckey_ml_batch_config_done(b->cfg, b->settings);
}

static cckey_option *next_option(slot *s, size_t k)
{
    if (k == s->opts_cap) {
        size_t cap = s->opts_cap ? 2 * s->opts_cap : 256;
        cckey_option *v = realloc(s->opts, cap * sizeof *v);
        if (!v) return NULL;
        s->opts = v;
        s->opts_cap = cap;
    }
    return &s->opts[k];
}

/* Option lists already copied, by address: a suite shares a few lists
 * among many tuples, which then share one cckey_option run (the library
 * skips a run it has seen by address). Nothing moves while the stub holds
 * the runtime lock and allocates nothing on the OCaml heap; the memo lives
 * for one block. */
#define OPT_MEMO 64

typedef struct opt_memo {
    value list;
    size_t start, n;
} opt_memo;

static int copy_options(slot *s, value list, cckey_tuple *ct, size_t *k, opt_memo *memo)
{
    ct->n_options = 0;
    ct->options = NULL;   /* until fixed up: the run's start in s->opts */
    if (list == Val_emptylist) return 0;
    opt_memo *m = &memo[((uintptr_t)list >> 3 ^ (uintptr_t)list >> 11) % OPT_MEMO];
    if (m->list == list) {
        ct->options = (const cckey_option *)(uintptr_t)m->start;
        ct->n_options = m->n;
        return 0;
    }
    size_t start = *k;
    for (value l = list; l != Val_emptylist; l = Field(l, 1), ct->n_options++, (*k)++) {
        cckey_option *o = next_option(s, *k);
        if (!o || copy_field(&s->a, Field(Field(l, 0), 0), &o->key) || copy_field(&s->a, Field(Field(l, 0), 1), &o->value))
            return -1;
    }
    ct->options = (const cckey_option *)(uintptr_t)start;
    *m = (opt_memo){list, start, ct->n_options};
    return 0;
}

/* Copies tuples.(start) .. tuples.(start + n - 1) into slot s. */
static int copy_tuples(slot *s, value tuples, size_t start, size_t n)
{
    size_t k = 0;
    opt_memo memo[OPT_MEMO] = {{0}};
    arena_reset(&s->a);
    /* Room for a CPU block of short tuples at once, rather than doubling up
     * to it (each doubling a copy); untouched room costs no pages. */
    if (arena_reserve(&s->a, (n < CPU_BLOCK ? n : CPU_BLOCK) * ARENA_PER_TUPLE) < 0) return -1;
    for (size_t i = 0; i < n; i++) {
        value t = Field(tuples, start + i);
        cckey_tuple *ct = &s->tuples[i];
        if (copy_field(&s->a, Field(t, 0), &ct->device) || copy_field(&s->a, Field(t, 1), &ct->name) ||
            copy_field(&s->a, Field(t, 2), &ct->source) || copy_options(s, Field(t, 3), ct, &k, memo))
            return -1;
    }
    /* The arena no longer moves: offsets become pointers. */
    for (size_t i = 0; i < k; i++) {
        fix_up(&s->opts[i].key, s->a.bytes);
        fix_up(&s->opts[i].value, s->a.bytes);
    }
    for (size_t i = 0; i < n; i++) {
        cckey_tuple *ct = &s->tuples[i];
        fix_up(&ct->device, s->a.bytes);
        fix_up(&ct->name, s->a.bytes);
        fix_up(&ct->source, s->a.bytes);
        ct->options = ct->n_options ? &s->opts[(uintptr_t)ct->options] : NULL;
    }
    s->job = (cckey_ml_job){.n = n};
    return 0;
}

/* Strings for keys.(first) .. keys.(first + n - 1), with out's keys in
 * them, or (out NULL, OCaml 4 only) to be filled by fill_keys. They are
 * allocated straight in the major heap (they all outlive the call:
 * allocated young, each would be copied at the next minor collection),
 * and on OCaml 4 all at once: one caml_alloc_shr cut into n strings, their
 * headers written as caml_alloc_shr writes one, in the colour it gave the
 * whole (which lies on one side of the sweeper, so that colour is right for
 * each part). One free-list search per block instead of one per key, and
 * the keys land side by side: a fifth less of the runtime thread's time
 * spent on keys. No memprof sampling, as one sample would stand for n
 * strings. Nothing is collected inside caml_alloc_shr. */
static int alloc_keys(value keys, size_t first, size_t n, const char (*out)[CCKEY_KEY_LEN + 1])
{
    mlsize_t wosize = (CCKEY_KEY_LEN + sizeof(value)) / sizeof(value), whsize = wosize + 1;
    if (!n) return 0;
#if OCAML_VERSION_MAJOR >= 5
    /* OCaml 5's major heap keeps large blocks apart: one string apiece. */
    (void)whsize;
    for (size_t j = 0; j < n; j++) {
        value k = caml_alloc_shr(wosize, String_tag);
        Field(k, wosize - 1) = 0;
        Byte(k, Bsize_wsize(wosize) - 1) = (char)(Bsize_wsize(wosize) - 1 - CCKEY_KEY_LEN);
        memcpy(Bytes_val(k), out[j], CCKEY_KEY_LEN);
        caml_modify(&Field(keys, first + j), k);
    }
    return 0;
#else
    value big = caml_alloc_shr_no_track_noexc(n * whsize - 1, String_tag);
    if (!big) return -1;
    color_t color = Color_hd(Hd_val(big));
    mlsize_t last = Bsize_wsize(wosize) - 1;
    for (size_t j = 0; j < n; j++) {
        value k = (value)((value *)big + j * whsize);
        Hd_val(k) = Make_header(wosize, String_tag, color);
        Field(k, wosize - 1) = 0;
        Byte(k, last) = (char)(last - CCKEY_KEY_LEN);
        if (out) memcpy(Bytes_val(k), out[j], CCKEY_KEY_LEN);
        /* What caml_modify would do here: the slot holds Val_unit (nothing
         * for the barrier to darken) and k is not young (nothing to
         * remember). */
        Field(keys, first + j) = k;
    }
    return 0;
#endif
}

/* Slot s's keys into the strings alloc_keys left empty, wherever the GC
 * has moved them since. */
static void fill_keys(value keys, size_t first, const slot *s)
{
    for (size_t j = 0; j < s->job.n; j++) memcpy(Bytes_val(Field(keys, first + j)), s->out[j], CCKEY_KEY_LEN);
}

/* Waits, without the runtime lock, for slot s's block on the keyer. */
static void wait_block(batch *b, slot *s)
{
    if (!s->queued) return;
    caml_release_runtime_system();
    cckey_status st = cckey_keyer_wait(b->keyer);
    caml_acquire_runtime_system();
    s->queued = 0;
    job_done(&s->job, st, cckey_keyer_warning(b->keyer));
}

/* Keys slot s's block: queued on the keyer, or run here without the lock. */
static void start_block(batch *b, slot *s)
{
    cckey_ml_job *j = &s->job;
    if (b->keyer) {
        cckey_status st = cckey_keyer_submit(b->keyer, s->out, s->tuples, j->n, b->cfg);
        s->queued = st == CCKEY_OK;
        if (st != CCKEY_OK) job_done(j, st, "");
        return;
    }
    caml_release_runtime_system();
    cckey_status st = cckey_make_keys(s->out, s->tuples, j->n, b->cfg);
    caml_acquire_runtime_system();
    job_done(j, st, cckey_batch_config_warning(b->cfg));
}

static int alloc_slots(batch *b, size_t block, int n_slots)
{
    for (int i = 0; i < n_slots; i++) {
        slot *s = &b->slot[i];
        s->tuples = malloc(block * sizeof *s->tuples);
        s->out = malloc(block * sizeof *s->out);
        if (!s->tuples || !s->out) return -1;
    }
    return 0;
}

/* A block's strings are allocated when its keys are in, and the major
 * slice that allocating asks for runs then (OCaml 4), beside the keyer
 * working through the blocks queued behind it. The last block has none
 * behind it: its strings are allocated as soon as it is queued, before its
 * keys exist (alloc_keys, then fill_keys), so that its slice too runs
 * beside keying rather than after it with the other cores idle. (OCaml 5's
 * collector works otherwise: there the strings come with the keys and
 * the slices where they fall.) */
#if OCAML_VERSION_MAJOR < 5
#define SLICE_BESIDE_KEYING 1
#else
#define SLICE_BESIDE_KEYING 0
#endif

/* Copies block i into its slot and queues it (or keys it here). */
static int queue_block(batch *b, const value *tuples, const value *keys, size_t n, size_t block, size_t i, int depth)
{
    slot *s = &b->slot[i % depth];
    size_t start = i * block, len = n - start < block ? n - start : block;
    if (copy_tuples(s, *tuples, start, len) < 0) return -1;
    start_block(b, s);
    s->ahead = SLICE_BESIDE_KEYING && s->queued && start + len == n;
    if (!s->ahead) return 0;
    if (alloc_keys(*keys, start, len, NULL) < 0) return -1;
    caml_check_urgent_gc(Val_unit);
    return 0;
}

/* Block i has been keyed: its keys into keys. 0, -1 (out of memory), or 1
 * (its call failed). */
static int finish_block(batch *b, const value *keys, size_t block, size_t i, int depth)
{
    slot *s = &b->slot[i % depth];
    wait_block(b, s);
    if (s->job.status != CCKEY_OK) return 1;
    if (s->ahead) {
        fill_keys(*keys, i * block, s);
        return 0;
    }
    if (alloc_keys(*keys, i * block, s->job.n, s->out) < 0) return -1;
    if (SLICE_BESIDE_KEYING && b->keyer) caml_check_urgent_gc(Val_unit);
    return 0;
}

/* Up to depth blocks are copied and queued ahead of the one whose keys go
 * into keys. tuples and keys are registered roots, read again after each
 * wait or slice: the GC may have moved the arrays and the strings in them
 * meanwhile. Returns 0; -1 (out of memory); or 1 with *failed the slot
 * whose job failed first. Nothing runs in the keyer when it returns: after
 * a failure the blocks already queued are waited for. */
static int run_blocks(batch *b, const value *tuples, const value *keys, size_t n, size_t block, slot **failed)
{
    size_t blocks = (n + block - 1) / block;
    int depth = b->keyer ? (blocks < DEPTH ? (int)blocks : DEPTH) : 1;
    if (alloc_slots(b, block, depth) < 0) return -1;
    int rc = 0;
    size_t queued = 0, done = 0;
    while (done < queued || (rc == 0 && queued < blocks)) {
        if (rc == 0 && queued < blocks && queued - done < (size_t)depth) {
            rc = queue_block(b, tuples, keys, n, block, queued, depth);
            queued += rc == 0 || b->slot[queued % depth].queued;
            continue;
        }
        int r = finish_block(b, keys, block, done, depth);
        if (r > 0 && rc == 0) *failed = &b->slot[done % depth];
        if (rc == 0) rc = r;
        done++;
    }
    return rc;
}

static void first_warning(batch *b, char *out, size_t size)
{
    out[0] = '\0';
    for (int i = 0; i < DEPTH && !out[0]; i++)
        if (b->slot[i].out) snprintf(out, size, "%s", b->slot[i].job.warning);
}

/* make_keys backend threads verify tuples -> (keys, backend used, warning) */
value cckey_ml_make_keys(value v_backend, value v_threads, value v_verify, value v_tuples)
{
    CAMLparam4(v_backend, v_threads, v_verify, v_tuples);
    CAMLlocal4(keys, s, used, result);
    size_t n = Wosize_val(v_tuples);
    batch b = {0};
    cckey_status st = cckey_ml_batch_config(&b.cfg, b.settings, v_backend, v_threads, v_verify);
    if (st != CCKEY_OK) {
        batch_free(&b);
        cckey_ml_raise(st);
    }
    /* Allocated straight in the major heap, as the keys are: they all
     * outlive the call. */
    keys = n ? caml_alloc_shr(n, 0) : Atom(0);
    for (size_t i = 0; i < n; i++) caml_initialize(&Field(keys, i), Val_unit);
    size_t block = n;
    if (n > CPU_BLOCK && cckey_ml_runs_on_cpu(b.settings[0])) {
        size_t blocks = (n + CPU_BLOCK - 1) / CPU_BLOCK;
        block = (n + blocks - 1) / blocks;
    }
    /* The keyer is one more thread than threads = 1 asks for. */
    if (block < n && b.settings[1] != 1 && cckey_keyer_new(&b.keyer) != CCKEY_OK) b.keyer = NULL;
    slot *failed = NULL;
    int rc = n ? run_blocks(&b, &v_tuples, &keys, n, block, &failed) : 0;
    if (b.keyer) {
        caml_release_runtime_system();
        cckey_keyer_free(b.keyer);
        caml_acquire_runtime_system();
    }
    char detail[sizeof failed->job.detail], warning[sizeof failed->job.warning];
    if (failed) {
        st = failed->job.status;
        snprintf(detail, sizeof detail, "%s", failed->job.detail);
    }
    first_warning(&b, warning, sizeof warning);
    used = caml_copy_string(cckey_batch_config_used(b.cfg));
    batch_free(&b);
    if (rc < 0) caml_raise_out_of_memory();
    if (rc > 0) cckey_ml_raise_detail(st, detail);
    s = caml_copy_string(warning);
    result = caml_alloc_tuple(3);
    Store_field(result, 0, keys);
    Store_field(result, 1, used);
    Store_field(result, 2, s);
    CAMLreturn(result);
}
