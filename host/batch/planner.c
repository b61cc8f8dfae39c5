/* The batch planner: deduplicate, digest on a backend, fall back, verify,
 * format.
 *
 * Round 1 digests every distinct byte string of the batch (devices, names,
 * sources, option keys and values) on the chosen backend. Round 2 builds the
 * canonical string of every distinct option set from round 1's digests and
 * digests those on the CPU: they are short, and there are few of them. */
#include "config.h"
#include "intern.h"
#include "../backends/backend.h"
#include "../core/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct optsets {
    uint32_t *slots;        /* set id + 1 */
    size_t cap;
    size_t n;
    size_t *rep;            /* by set id: a tuple holding this set */
} optsets;

typedef struct plan {
    const cckey_tuple *tuples;
    size_t n;
    cckey_intern strings;
    uint32_t *ids;          /* per tuple: device, name, source, option set */
    uint32_t *opt_ids;      /* all option key/value ids, tuple after tuple */
    size_t *opt_base;       /* per tuple: offset into opt_ids */
    optsets sets;
    uint8_t (*dig)[CCKEY_MD5_DIGEST];
    char (*hex)[32];        /* per string id */
    char (*set_hex)[32];    /* per option set */
    uint8_t (*set_dig)[CCKEY_MD5_DIGEST];   /* per option set */
} plan;

static void plan_free(plan *p)
{
    cckey_intern_free(&p->strings);
    free(p->ids);
    free(p->opt_ids);
    free(p->opt_base);
    free(p->sets.slots);
    free(p->sets.rep);
    free(p->dig);
    free(p->hex);
    free(p->set_hex);
    free(p->set_dig);
}

static bool same_set(const plan *p, size_t a, size_t b)
{
    size_t n = p->tuples[a].n_options;
    return n == p->tuples[b].n_options &&
           memcmp(p->opt_ids + p->opt_base[a], p->opt_ids + p->opt_base[b], 2 * n * sizeof(uint32_t)) == 0;
}

static uint32_t set_add(plan *p, size_t t)
{
    optsets *s = &p->sets;
    if (s->n * 2 >= s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        uint32_t *slots = calloc(cap, sizeof *slots);
        size_t *rep = realloc(s->rep, cap / 2 * sizeof *rep);
        if (!slots || !rep) {
            free(slots);
            if (rep) s->rep = rep;
            return CCKEY_INTERN_NOMEM;
        }
        s->rep = rep;
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->slots[i]) continue;
            size_t r = s->rep[s->slots[i] - 1];
            size_t j = cckey_hash_bytes(p->opt_ids + p->opt_base[r], 8 * p->tuples[r].n_options) & (cap - 1);
            while (slots[j]) j = (j + 1) & (cap - 1);
            slots[j] = s->slots[i];
        }
        free(s->slots);
        s->slots = slots;
        s->cap = cap;
    }
    size_t j = cckey_hash_bytes(p->opt_ids + p->opt_base[t], 8 * p->tuples[t].n_options) & (s->cap - 1);
    for (; s->slots[j]; j = (j + 1) & (s->cap - 1))
        if (same_set(p, s->rep[s->slots[j] - 1], t)) return s->slots[j] - 1;
    uint32_t id = (uint32_t)s->n++;
    s->rep[id] = t;
    s->slots[j] = id + 1;
    return id;
}

typedef struct hash_work {
    const plan *p;
    uint64_t *field_hash;   /* per tuple: device, name, source */
    uint64_t *opt_hash;     /* per option: key, value (laid out like opt_ids) */
} hash_work;

/* A thread's memory of recently hashed pointers. Batches name the same
 * source (or device, or name) object from many tuples, in any order: hash
 * its bytes once per thread, not once per tuple. Direct-mapped on the
 * address; only worth it for fields longer than a few words. */
#define HASH_CACHE 1024
#define HASH_CACHE_MIN_LEN 64

typedef struct hash_cache {
    const void *ptr[HASH_CACHE];
    size_t len[HASH_CACHE];
    uint64_t hash[HASH_CACHE];
} hash_cache;

static uint64_t cached_hash(hash_cache *c, cckey_bytes b)
{
    if (b.len < HASH_CACHE_MIN_LEN) return cckey_hash_bytes(b.ptr, b.len);
    size_t slot = ((uintptr_t)b.ptr >> 4 ^ (uintptr_t)b.ptr >> 14) % HASH_CACHE;
    if (c->ptr[slot] != b.ptr || c->len[slot] != b.len) {
        c->ptr[slot] = b.ptr;
        c->len[slot] = b.len;
        c->hash[slot] = cckey_hash_bytes(b.ptr, b.len);
    }
    return c->hash[slot];
}

static void hash_range(void *ctx, size_t begin, size_t end)
{
    hash_work *w = ctx;
    const plan *p = w->p;
    hash_cache *cache = calloc(1, sizeof *cache);
    hash_cache none;
    if (!cache) {   /* still correct without it, only slower */
        memset(none.ptr, 0, sizeof none.ptr);
        cache = &none;
    }
    for (size_t i = begin; i < end; i++) {
        const cckey_tuple *t = &p->tuples[i];
        uint64_t *h = &w->field_hash[3 * i];
        h[0] = cached_hash(cache, t->device);
        h[1] = cached_hash(cache, t->name);
        h[2] = cached_hash(cache, t->source);
        uint64_t *oh = &w->opt_hash[p->opt_base[i]];
        for (size_t k = 0; k < t->n_options; k++) {
            oh[2 * k] = cached_hash(cache, t->options[k].key);
            oh[2 * k + 1] = cached_hash(cache, t->options[k].value);
        }
    }
    if (cache != &none) free(cache);
}

static cckey_status intern_all(plan *p, unsigned threads)
{
    size_t n_opt = 0;
    for (size_t i = 0; i < p->n; i++) {
        const cckey_tuple *t = &p->tuples[i];
        if (!cckey_bytes_ok(t->device) || !cckey_bytes_ok(t->name) || !cckey_bytes_ok(t->source) ||
            !cckey_options_ok(t->options, t->n_options))
            return cckey_fail(CCKEY_ERR_INVALID_ARG, "tuple %zu has a {NULL, len > 0} field or NULL options", i);
        n_opt += t->n_options;
    }
    p->ids = malloc(p->n * 4 * sizeof *p->ids);
    p->opt_ids = malloc((2 * n_opt + 1) * sizeof *p->opt_ids);
    p->opt_base = malloc(p->n * sizeof *p->opt_base);
    hash_work hw = {.p = p, .field_hash = malloc(p->n * 3 * sizeof(uint64_t)),
                    .opt_hash = malloc((2 * n_opt + 1) * sizeof(uint64_t))};
    cckey_status st = CCKEY_OK;
    if (!p->ids || !p->opt_ids || !p->opt_base || !hw.field_hash || !hw.opt_hash) {
        st = cckey_fail(CCKEY_ERR_NO_MEMORY, "batch tables");
        goto out;
    }
    for (size_t i = 0, o = 0; i < p->n; i++) {
        p->opt_base[i] = o;
        o += 2 * p->tuples[i].n_options;
    }
    st = cckey_parallel_for(threads, p->n, 4096, hash_range, &hw);
    for (size_t i = 0; i < p->n && st == CCKEY_OK; i++) {
        const cckey_tuple *t = &p->tuples[i];
        uint32_t *id = &p->ids[4 * i];
        const uint64_t *h = &hw.field_hash[3 * i];
        id[0] = cckey_intern_add_hashed(&p->strings, t->device.ptr, t->device.len, h[0]);
        id[1] = cckey_intern_add_hashed(&p->strings, t->name.ptr, t->name.len, h[1]);
        id[2] = cckey_intern_add_hashed(&p->strings, t->source.ptr, t->source.len, h[2]);
        uint32_t worst = id[0] | id[1] | id[2];
        uint32_t *oid = p->opt_ids + p->opt_base[i];
        const uint64_t *oh = hw.opt_hash + p->opt_base[i];
        for (size_t k = 0; k < t->n_options; k++) {
            oid[2 * k] = cckey_intern_add_hashed(&p->strings, t->options[k].key.ptr, t->options[k].key.len, oh[2 * k]);
            oid[2 * k + 1] = cckey_intern_add_hashed(&p->strings, t->options[k].value.ptr, t->options[k].value.len,
                                                     oh[2 * k + 1]);
            worst |= oid[2 * k] | oid[2 * k + 1];
        }
        if (worst == CCKEY_INTERN_NOMEM) st = cckey_fail(CCKEY_ERR_NO_MEMORY, "deduplicating fields");
        else if ((id[3] = set_add(p, i)) == CCKEY_INTERN_NOMEM)
            st = cckey_fail(CCKEY_ERR_NO_MEMORY, "deduplicating option sets");
    }
out:
    free(hw.field_hash);
    free(hw.opt_hash);
    return st;
}

/* The first tuple that uses string id m, and in which field: for messages
 * that name what a verify failure hit. */
static void describe_string(const plan *p, uint32_t m, char *buf, size_t len)
{
    static const char *const field[] = {"device", "name", "source"};
    for (size_t i = 0; i < p->n; i++) {
        for (int f = 0; f < 3; f++)
            if (p->ids[4 * i + f] == m) {
                snprintf(buf, len, "tuple %zu (%s)", i, field[f]);
                return;
            }
        for (size_t k = 0; k < 2 * p->tuples[i].n_options; k++)
            if (p->opt_ids[p->opt_base[i] + k] == m) {
                snprintf(buf, len, "tuple %zu (option %zu %s)", i, k / 2, k % 2 ? "value" : "key");
                return;
            }
    }
    snprintf(buf, len, "string %u", m);
}

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static cckey_status verify(plan *p, cckey_verify_mode mode, unsigned threads)
{
    size_t m = p->strings.n;
    size_t count = m;
    uint32_t *pick = NULL;
    if (mode == CCKEY_VERIFY_SAMPLE && m > 4096) {
        count = 4096;
        pick = malloc(count * sizeof *pick);
        if (!pick) return cckey_fail(CCKEY_ERR_NO_MEMORY, "verify sample");
        uint64_t seed = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15u | 1;
        for (size_t i = 0; i < count; i++) pick[i] = (uint32_t)(next_random(&seed) % m);
    }
    cckey_msg *msgs = malloc(count * sizeof *msgs);
    uint8_t (*ref)[CCKEY_MD5_DIGEST] = malloc(count * sizeof *ref);
    if (!msgs || !ref) {
        free(pick), free(msgs), free(ref);
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "verify buffers");
    }
    for (size_t i = 0; i < count; i++) msgs[i] = p->strings.msgs[pick ? pick[i] : i];
    cckey_digest_job job = {.msgs = msgs, .n = count, .out = ref, .threads = threads};
    cckey_status st = cckey_cpu_digest(&job);
    if (st == CCKEY_OK) {
        char detail[768] = "";
        size_t bad = 0, used = 0;
        for (size_t i = 0; i < count; i++) {
            uint32_t id = pick ? pick[i] : (uint32_t)i;
            if (memcmp(ref[i], p->dig[id], CCKEY_MD5_DIGEST) == 0) continue;
            if (bad++ < 3 && used < sizeof detail - 128) {
                char where[96];
                describe_string(p, id, where, sizeof where);
                used += (size_t)snprintf(detail + used, sizeof detail - used, "%s%s", used ? ", " : "", where);
            }
        }
        if (bad)
            st = cckey_fail(CCKEY_ERR_VERIFY, "%zu of %zu digests checked differ from the CPU reference; first: %s",
                            bad, count, detail);
    }
    free(pick), free(msgs), free(ref);
    return st;
}

static const cckey_backend_ops *choose(const cckey_batch_config *cfg, const plan *p, unsigned threads)
{
    const cckey_backend_ops *cpu = cckey_backend_ops_for(CCKEY_BACKEND_CPU);
    if (cfg->backend != CCKEY_BACKEND_AUTO) return cckey_backend_ops_for(cfg->backend);
    uint64_t bytes = 0;
    for (size_t i = 0; i < p->strings.n; i++) bytes += p->strings.msgs[i].len;
    static const cckey_backend_kind prefer[] = {CCKEY_BACKEND_CUDA, CCKEY_BACKEND_OPENCL};
    for (size_t i = 0; i < sizeof prefer / sizeof *prefer; i++) {
        const cckey_backend_ops *b = cckey_backend_ops_for(prefer[i]);
        char why[256];
        if (b && b->worth_it && b->worth_it(p->strings.n, bytes, threads) &&
            b->available(why, sizeof why) == CCKEY_OK)
            return b;
    }
    return cpu;
}

static cckey_status digest_strings(plan *p, const cckey_batch_config *cfg, cckey_batch_report *rep,
                                   unsigned threads, cckey_progress_relay *relay)
{
    size_t m = p->strings.n;
    p->dig = malloc((m ? m : 1) * sizeof *p->dig);
    uint8_t *done = calloc(m ? m : 1, 1);
    if (!p->dig || !done) {
        free(done);
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "digest buffers for %zu strings", m);
    }
    const cckey_backend_ops *b = choose(cfg, p, threads);
    char why[512] = "";
    if (!b) {
        free(done);
        return cckey_fail(CCKEY_ERR_UNAVAILABLE, "the %s backend is not compiled into this build",
                          cckey_backend_name(cfg->backend));
    }
    if (b->available(why, sizeof why) != CCKEY_OK) {
        free(done);
        return cckey_fail(CCKEY_ERR_UNAVAILABLE, "%s backend unavailable: %s", b->name, why);
    }
    struct cckey_digest_split split = {0, 0};
    cckey_digest_job job = {.msgs = p->strings.msgs, .n = m, .out = p->dig, .done = done,
                            .threads = threads,
                            .progress = cfg->progress || cfg->progress_cancel ? cckey_progress_relay_call : NULL,
                            .progress_user = relay, .cancel = &relay->cancelled, .split = &split};
    cckey_status st = b->digest(&job);
    /* "opencl+cpu": the host threads hashed part of a device batch. */
    snprintf(rep->used, sizeof rep->used, "%s%s", b->name, b->kind != CCKEY_BACKEND_CPU && split.host ? "+cpu" : "");
    if (st != CCKEY_OK && b->kind != CCKEY_BACKEND_CPU) {
        /* A device failure is not the user's problem: finish on the CPU. */
        snprintf(rep->warning, sizeof rep->warning, "%s backend failed (%s: %s); the rest of the batch ran on the CPU",
                 b->name, cckey_strerror(st), cckey_last_error());
        snprintf(rep->used, sizeof rep->used, "%s+cpu", b->name);
        st = cckey_cpu_digest(&job);
    }
    free(done);
    if (atomic_load_explicit(&relay->cancelled, memory_order_relaxed))
        return cckey_fail(CCKEY_ERR_CANCELLED, "cancelled by the progress callback");
    if (st != CCKEY_OK) return st;
    if (b->kind != CCKEY_BACKEND_CPU && cfg->verify != CCKEY_VERIFY_NONE) return verify(p, cfg->verify, threads);
    return CCKEY_OK;
}

/* Round 2: canonical option strings, built from round 1's digests. */
static cckey_status digest_option_sets(plan *p, unsigned threads)
{
    size_t ns = p->sets.n, total = 0, max_opts = 0;
    for (size_t s = 0; s < ns; s++) {
        size_t k = p->tuples[p->sets.rep[s]].n_options;
        total += cckey_canon_len(k);
        if (k > max_opts) max_opts = k;
    }
    char *canon = malloc(total ? total : 1);
    cckey_msg *msgs = malloc((ns ? ns : 1) * sizeof *msgs);
    uint8_t (*d)[CCKEY_MD5_DIGEST] = malloc((ns ? ns : 1) * sizeof *d);
    size_t *order = malloc((max_opts ? max_opts : 1) * sizeof *order);
    const char **kh = malloc((max_opts ? max_opts : 1) * sizeof *kh);
    const char **vh = malloc((max_opts ? max_opts : 1) * sizeof *vh);
    p->set_hex = malloc((ns ? ns : 1) * sizeof *p->set_hex);
    cckey_status st = CCKEY_OK;
    if (!canon || !msgs || !d || !order || !kh || !vh || !p->set_hex) {
        st = cckey_fail(CCKEY_ERR_NO_MEMORY, "option set buffers");
        goto out;
    }
    char *w = canon;
    for (size_t s = 0; s < ns && st == CCKEY_OK; s++) {
        size_t t = p->sets.rep[s];
        size_t k = p->tuples[t].n_options;
        st = cckey_option_order(p->tuples[t].options, k, order);
        for (size_t i = 0; i < k; i++) {
            const uint32_t *ids = p->opt_ids + p->opt_base[t] + 2 * order[i];
            kh[i] = p->hex[ids[0]];
            vh[i] = p->hex[ids[1]];
        }
        cckey_canon_write(w, kh, vh, k);
        msgs[s] = (cckey_msg){(const uint8_t *)w, cckey_canon_len(k)};
        w += cckey_canon_len(k);
    }
    if (st == CCKEY_OK) {
        cckey_digest_job job = {.msgs = msgs, .n = ns, .out = d, .threads = threads};
        st = cckey_cpu_digest(&job);
    }
    for (size_t s = 0; s < ns && st == CCKEY_OK; s++) cckey_hex(p->set_hex[s], d[s]);
    p->set_dig = d;   /* kept for binary keys; freed with the plan */
    d = NULL;
out:
    free(canon), free(msgs), free(d), free(order), free(kh), free(vh);
    return st;
}

typedef struct format_work {
    const plan *p;
    char (*out)[CCKEY_KEY_LEN + 1];          /* text keys, or */
    unsigned char (*bin)[CCKEY_KEY_BIN_LEN];  /* binary ones */
} format_work;

static void format_range(void *ctx, size_t begin, size_t end)
{
    format_work *fw = ctx;
    const plan *p = fw->p;
    for (size_t i = begin; i < end; i++) {
        const uint32_t *id = &p->ids[4 * i];
        if (fw->bin) {
            for (int f = 0; f < 3; f++) memcpy(fw->bin[i] + 16 * f, p->dig[id[f]], 16);
            memcpy(fw->bin[i] + 48, p->set_dig[id[3]], 16);
        } else {
            cckey_join_key(fw->out[i], p->hex[id[0]], p->hex[id[1]], p->hex[id[2]], p->set_hex[id[3]]);
        }
    }
}

static void hex_range(void *ctx, size_t begin, size_t end)
{
    plan *p = ctx;
    for (size_t i = begin; i < end; i++) cckey_hex(p->hex[i], p->dig[i]);
}

/* Below this many items a thread costs more to start than it saves. */
#define FORMAT_GRAIN 16384

static cckey_status make_keys(format_work fw, const cckey_tuple *tuples, size_t n, const cckey_batch_config *config)
{
    static const cckey_batch_config defaults = {.backend = CCKEY_BACKEND_AUTO};
    const cckey_batch_config *cfg = config ? config : &defaults;
    cckey_batch_report rep = {"", ""};
    unsigned threads = cfg->threads ? cfg->threads : cckey_cpu_count();
    cckey_progress_relay relay = {.cfg = cfg};
    atomic_init(&relay.cancelled, false);

    plan p = {.tuples = tuples, .n = n};
    cckey_status st = intern_all(&p, threads);
    if (st == CCKEY_OK) st = digest_strings(&p, cfg, &rep, threads, &relay);
    if (st == CCKEY_OK) {
        p.hex = malloc(p.strings.n * sizeof *p.hex);
        if (!p.hex) st = cckey_fail(CCKEY_ERR_NO_MEMORY, "hex digests");
    }
    if (st == CCKEY_OK) st = cckey_parallel_for(threads, p.strings.n, FORMAT_GRAIN, hex_range, &p);
    if (st == CCKEY_OK) st = digest_option_sets(&p, threads);
    if (st == CCKEY_OK) {
        fw.p = &p;
        st = cckey_parallel_for(threads, n, FORMAT_GRAIN, format_range, &fw);
    }
    plan_free(&p);
    if (config) {
        /* Configs come only from cckey_batch_config_new: writable. */
        cckey_batch_config *out_cfg = (cckey_batch_config *)config;
        pthread_mutex_lock(&out_cfg->report_lock);
        memcpy(out_cfg->used, rep.used, sizeof rep.used);
        memcpy(out_cfg->warning, rep.warning, sizeof rep.warning);
        pthread_mutex_unlock(&out_cfg->report_lock);
    }
    return st;
}

cckey_status cckey_make_keys(char (*out)[CCKEY_KEY_LEN + 1], const cckey_tuple *tuples, size_t n,
                             const cckey_batch_config *config)
{
    if (n == 0) return CCKEY_OK;
    if (!out || !tuples) return cckey_fail(CCKEY_ERR_INVALID_ARG, "out or tuples is NULL with n = %zu", n);
    return make_keys((format_work){.out = out}, tuples, n, config);
}

cckey_status cckey_make_keys_bin(unsigned char (*out)[CCKEY_KEY_BIN_LEN], const cckey_tuple *tuples, size_t n,
                                 const cckey_batch_config *config)
{
    if (n == 0) return CCKEY_OK;
    if (!out || !tuples) return cckey_fail(CCKEY_ERR_INVALID_ARG, "out or tuples is NULL with n = %zu", n);
    return make_keys((format_work){.bin = out}, tuples, n, config);
}
