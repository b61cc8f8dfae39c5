/* Cckey.make_keys: the tuples are copied out of the OCaml heap (the GC may
 * move strings once the runtime lock is released), then cckey_make_keys
 * runs without the lock. A long field that many tuples share physically,
 * the usual case for sources, is copied once. */
#include "stubs.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Fields at least this long are copied once per physical string. */
#define SHARED_MIN 64

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

static int arena_append(arena *a, const char *p, size_t n, size_t *off)
{
    if (a->len + n > a->cap) {
        size_t cap = a->cap ? a->cap : 4096;
        while (cap < a->len + n) cap *= 2;
        char *b = realloc(a->bytes, cap);
        if (!b) return -1;
        a->bytes = b;
        a->cap = cap;
    }
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

/* The field's bytes as an offset into the arena, kept in .ptr until the
 * arena stops moving (fix_up). */
static int copy_field(arena *a, value s, cckey_bytes *out)
{
    size_t n = ml_len(s), off;
    out->len = n;
    if (n < SHARED_MIN) {
        if (arena_append(a, String_val(s), n, &off) < 0) return -1;
        out->ptr = (const void *)off;
        return 0;
    }
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

static void fix_up(cckey_bytes *b, const char *base)
{
    b->ptr = base + (size_t)b->ptr;
}

/* The config of the last batch, idle, for the next with the same settings:
 * the library may keep a batch's scratch tables in its config, and a reused
 * one then touches no fresh pages. Taken and put back by atomic exchange; a
 * batch running meanwhile in another thread makes its own, so a config's
 * warning is always its own batch's. */
typedef struct idle_config {
    cckey_batch_config *cfg;
    long settings[3];
} idle_config;

static _Atomic(idle_config *) idle;

static cckey_batch_config *take_idle(const long settings[3])
{
    idle_config *i = atomic_exchange(&idle, NULL);
    cckey_batch_config *cfg = NULL;
    if (i && memcmp(i->settings, settings, sizeof i->settings) == 0) cfg = i->cfg;
    else if (i) cckey_batch_config_free(i->cfg);
    free(i);
    return cfg;
}

static void put_idle(cckey_batch_config *cfg, const long settings[3])
{
    idle_config *i = cfg ? malloc(sizeof *i) : NULL;
    if (!i) {
        cckey_batch_config_free(cfg);
        return;
    }
    i->cfg = cfg;
    memcpy(i->settings, settings, sizeof i->settings);
    i = atomic_exchange(&idle, i);
    if (i) cckey_batch_config_free(i->cfg);
    free(i);
}

/* Everything make_keys allocates in C, freed on every path. */
typedef struct batch {
    arena a;
    cckey_tuple *tuples;
    cckey_option *opts;
    size_t opts_cap;
    char (*out)[CCKEY_KEY_LEN + 1];
    cckey_batch_config *cfg;
    long settings[3];   /* backend, threads, verify */
} batch;

static void batch_free(batch *b)
{
    arena_free(&b->a);
    free(b->tuples);
    free(b->opts);
    free(b->out);
    put_idle(b->cfg, b->settings);
}

static cckey_option *next_option(batch *b, size_t k)
{
    if (k == b->opts_cap) {
        size_t cap = b->opts_cap ? 2 * b->opts_cap : 256;
        cckey_option *v = realloc(b->opts, cap * sizeof *v);
        if (!v) return NULL;
        b->opts = v;
        b->opts_cap = cap;
    }
    return &b->opts[k];
}

/* Option lists already copied, by address: a suite shares a few lists
 * among many tuples, which then share one cckey_option run (the library
 * skips a run it has seen by address). Nothing moves while the stub holds
 * the runtime lock and allocates nothing on the OCaml heap. */
#define OPT_MEMO 64

typedef struct opt_memo {
    value list;
    size_t start, n;
} opt_memo;

static int copy_options(batch *b, value list, cckey_tuple *ct, size_t *k, opt_memo *memo)
{
    ct->n_options = 0;
    ct->options = NULL;   /* until fixed up: the run's start in b->opts */
    if (list == Val_emptylist) return 0;
    opt_memo *m = &memo[((uintptr_t)list >> 3 ^ (uintptr_t)list >> 11) % OPT_MEMO];
    if (m->list == list) {
        ct->options = (const cckey_option *)(uintptr_t)m->start;
        ct->n_options = m->n;
        return 0;
    }
    size_t start = *k;
    for (value l = list; l != Val_emptylist; l = Field(l, 1), ct->n_options++, (*k)++) {
        cckey_option *o = next_option(b, *k);
        if (!o || copy_field(&b->a, Field(Field(l, 0), 0), &o->key) || copy_field(&b->a, Field(Field(l, 0), 1), &o->value))
            return -1;
    }
    ct->options = (const cckey_option *)(uintptr_t)start;
    *m = (opt_memo){list, start, ct->n_options};
    return 0;
}

static int copy_tuples(batch *b, value tuples, size_t n)
{
    size_t k = 0;
    opt_memo memo[OPT_MEMO] = {{0}};
    for (size_t i = 0; i < n; i++) {
        value t = Field(tuples, i);
        cckey_tuple *ct = &b->tuples[i];
        if (copy_field(&b->a, Field(t, 0), &ct->device) || copy_field(&b->a, Field(t, 1), &ct->name) ||
            copy_field(&b->a, Field(t, 2), &ct->source) || copy_options(b, Field(t, 3), ct, &k, memo))
            return -1;
    }
    /* The arena no longer moves: offsets become pointers. */
    for (size_t i = 0; i < k; i++) {
        fix_up(&b->opts[i].key, b->a.bytes);
        fix_up(&b->opts[i].value, b->a.bytes);
    }
    for (size_t i = 0; i < n; i++) {
        cckey_tuple *ct = &b->tuples[i];
        fix_up(&ct->device, b->a.bytes);
        fix_up(&ct->name, b->a.bytes);
        fix_up(&ct->source, b->a.bytes);
        ct->options = ct->n_options ? &b->opts[(uintptr_t)ct->options] : NULL;
    }
    return 0;
}

static cckey_status configure(batch *b, value v_backend, value v_threads, value v_verify)
{
    b->settings[0] = Long_val(v_backend);
    b->settings[1] = Long_val(v_threads);
    b->settings[2] = Long_val(v_verify);
    if ((b->cfg = take_idle(b->settings))) return CCKEY_OK;
    cckey_status st = cckey_batch_config_new(&b->cfg);
    if (st == CCKEY_OK) st = cckey_batch_config_set_backend(b->cfg, (cckey_backend_kind)Int_val(v_backend));
    if (st == CCKEY_OK) st = cckey_batch_config_set_threads(b->cfg, (unsigned)Long_val(v_threads));
    if (st == CCKEY_OK) st = cckey_batch_config_set_verify(b->cfg, (cckey_verify_mode)Int_val(v_verify));
    if (st != CCKEY_OK) {
        /* Never kept for reuse half set up. */
        cckey_batch_config_free(b->cfg);
        b->cfg = NULL;
    }
    return st;
}

/* A 131-byte key allocated straight in the major heap: a batch's keys all
 * outlive the call, so allocating them young would only copy each one at the
 * next minor collection. Nothing is collected inside caml_alloc_shr. */
static value major_key(const char *key)
{
    mlsize_t wosize = (CCKEY_KEY_LEN + sizeof(value)) / sizeof(value);
    value s = caml_alloc_shr(wosize, String_tag);
    mlsize_t last = Bsize_wsize(wosize) - 1;
    Field(s, wosize - 1) = 0;
    Byte(s, last) = (char)(last - CCKEY_KEY_LEN);
    memcpy(Bytes_val(s), key, CCKEY_KEY_LEN);
    return s;
}

static value keys_array(char (*out)[CCKEY_KEY_LEN + 1], size_t n)
{
    CAMLparam0();
    CAMLlocal1(keys);
    if (n == 0) CAMLreturn(Atom(0));
    keys = caml_alloc_shr(n, 0);
    for (size_t i = 0; i < n; i++) caml_initialize(&Field(keys, i), Val_unit);
    for (size_t i = 0; i < n; i++) caml_modify(&Field(keys, i), major_key(out[i]));
    CAMLreturn(keys);
}

/* make_keys backend threads verify tuples -> (keys, backend used, warning) */
value cckey_ml_make_keys(value v_backend, value v_threads, value v_verify, value v_tuples)
{
    CAMLparam4(v_backend, v_threads, v_verify, v_tuples);
    CAMLlocal4(keys, s, used, result);
    size_t n = Wosize_val(v_tuples);
    batch b = {0};
    cckey_status st = configure(&b, v_backend, v_threads, v_verify);
    if (st != CCKEY_OK) {
        batch_free(&b);
        cckey_ml_raise(st);
    }
    if (n) {
        b.tuples = malloc(n * sizeof *b.tuples);
        b.out = malloc(n * sizeof *b.out);
        if (!b.tuples || !b.out || copy_tuples(&b, v_tuples, n) < 0) {
            batch_free(&b);
            caml_raise_out_of_memory();
        }
    }
    caml_release_runtime_system();
    st = cckey_make_keys(b.out, b.tuples, n, b.cfg);
    caml_acquire_runtime_system();
    if (st != CCKEY_OK) {
        batch_free(&b);
        cckey_ml_raise(st);
    }
    keys = keys_array(b.out, n);
    used = caml_copy_string(cckey_batch_config_used(b.cfg));
    s = caml_copy_string(cckey_batch_config_warning(b.cfg));
    batch_free(&b);
    result = caml_alloc_tuple(3);
    Store_field(result, 0, keys);
    Store_field(result, 1, used);
    Store_field(result, 2, s);
    CAMLreturn(result);
}
