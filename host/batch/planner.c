/* The batch planner: deduplicate, digest on a backend, fall back, verify,
 * format.
 *
 * Round 1 digests every distinct byte string of the batch (devices, names,
 * sources, option keys and values) on the chosen backend. Round 2 builds the
 * canonical string of every distinct option set from round 1's digests and
 * digests those on the CPU: they are short, and there are few of them. */
#include "config.h"
#include "dedup.h"
#include "hash.h"
#include "intern_block.h"
#include "plan.h"
#include "scratch.h"
#include "../backends/backend.h"
#include "../backends/gpu_devices.h"
#include "../core/internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct plan {
    const cckey_tuple *tuples;
    size_t n;
    size_t base;            /* tuples[0]'s index in the caller's batch (blocks.c) */
    cckey_scratch *mem;     /* every table below comes from it */
    struct {
        cckey_msg *msgs;    /* the distinct strings, by id */
        size_t n;
    } strings;
    uint32_t *ids;          /* per tuple: device, name, source string ids */
    uint32_t *opt_ids;      /* all option key/value ids, tuple after tuple */
    size_t *opt_base;       /* per tuple: offset into opt_ids */
    cckey_dedup sets;       /* option sets: distinct, rep (a tuple holding each), ids by tuple */
    uint8_t (*dig)[CCKEY_MD5_DIGEST];   /* per string id; hex only as keys are written */
    char (*set_hex)[32];    /* per option set */
    uint8_t (*set_dig)[CCKEY_MD5_DIGEST];   /* per option set */
    const uint64_t *str_hash;   /* per string id, when interned by intern_block */
} plan;

/* Interning state. Strings are items 0 .. 3n-1 (tuple i's device, name and
 * source are 3i, 3i+1, 3i+2), then two per option pair: 3n + opt_base + 2k
 * (key) and + 1 (value); a tuple that shares its options array with an
 * earlier tuple of its block has no option items (see cckey_shared_options).
 * Option sets are items 0 .. n-1, one per tuple. */
typedef struct intern_work {
    plan *p;
    size_t n_opt;                 /* option strings (two per pair) */
    const cckey_option **pair;    /* per option pair, for items >= 3n */
    uint64_t *hash;               /* per string item */
    uint64_t *set_hash;           /* per tuple */
    cckey_dedup strings;
    size_t *block_opts;           /* per block of tuples: option strings, then their offset */
    _Atomic int bad;              /* a tuple failed the argument checks */
    _Atomic size_t first_bad;
} intern_work;

#define TUPLE_BLOCK ((size_t)1 << 14)

static cckey_bytes item_bytes(const intern_work *w, size_t item)
{
    const plan *p = w->p;
    if (item < 3 * p->n) {
        const cckey_tuple *t = &p->tuples[item / 3];
        return item % 3 == 0 ? t->device : item % 3 == 1 ? t->name : t->source;
    }
    size_t o = item - 3 * p->n;
    return o & 1 ? w->pair[o >> 1]->value : w->pair[o >> 1]->key;
}

static bool same_string(const void *ctx, size_t a, size_t b)
{
    cckey_bytes x = item_bytes(ctx, a), y = item_bytes(ctx, b);
    /* The same object, or the same bytes at the same address: no memcmp. */
    return x.len == y.len && (x.ptr == y.ptr || x.len == 0 || memcmp(x.ptr, y.ptr, x.len) == 0);
}

static bool same_set(const void *ctx, size_t a, size_t b)
{
    const plan *p = ((const intern_work *)ctx)->p;
    size_t n = p->tuples[a].n_options;
    if (n != p->tuples[b].n_options) return false;
    return p->tuples[a].options == p->tuples[b].options ||
           memcmp(p->opt_ids + p->opt_base[a], p->opt_ids + p->opt_base[b], 2 * n * sizeof(uint32_t)) == 0;
}

/* A tuple whose options array an earlier tuple of its block shares
 * (cckey_shared_options) has no option items, hashes or ids: its opt_base
 * is that tuple's, its option set a link to it. */

/* Pass 1, per block of tuples: argument checks and option counts. */
static void check_blocks(void *ctx, size_t begin, size_t end)
{
    intern_work *w = ctx;
    const plan *p = w->p;
    size_t shared[CCKEY_SHARED_SETS];
    for (size_t b = begin; b < end; b++) {
        size_t lo = b * TUPLE_BLOCK, hi = lo + TUPLE_BLOCK < p->n ? lo + TUPLE_BLOCK : p->n, opts = 0;
        cckey_shared_reset(shared);
        for (size_t i = lo; i < hi; i++) {
            const cckey_tuple *t = &p->tuples[i];
            /* An options array seen earlier in the block was checked then. */
            bool own = cckey_shared_options(shared, p->tuples, i) == SIZE_MAX;
            if (!cckey_bytes_ok(t->device) || !cckey_bytes_ok(t->name) || !cckey_bytes_ok(t->source) ||
                (own && !cckey_options_ok(t->options, t->n_options))) {
                size_t seen = atomic_load(&w->first_bad);
                while (i < seen && !atomic_compare_exchange_weak(&w->first_bad, &seen, i)) {}
                w->bad = 1;
            }
            if (own) opts += 2 * t->n_options;
        }
        w->block_opts[b] = opts;
    }
}

/* A thread's memory of the strings it saw last, so that repeats skip the
 * deduplication tables (they become links, see dedup.h). By address first:
 * a caller's shared device, source or options object costs one look-up and
 * no hashing. Then by content, keyed by hash: equal strings at distinct
 * addresses (a manifest decodes each line's strings anew) are linked too,
 * which keeps a hot value from crowding one partition. Direct-mapped. */
#define SEEN 1024

typedef struct seen_cache {
    struct {
        const void *ptr;
        size_t len, item;
    } by_ptr[SEEN];
    struct {
        uint64_t hash;
        size_t item;
    } by_hash[SEEN];
} seen_cache;

/* hash[item] for one string: a link to an earlier item, or its real hash. */
static void hash_one(intern_work *w, seen_cache *c, size_t item, cckey_bytes b)
{
    size_t ps = cckey_ptr_slot(b.ptr, SEEN);
    if (c->by_ptr[ps].ptr == b.ptr && c->by_ptr[ps].len == b.len && b.ptr) {
        w->hash[item] = cckey_dedup_link(c->by_ptr[ps].item);
        return;
    }
    uint64_t h = cckey_dedup_real(cckey_hash_bytes(b.ptr, b.len));
    size_t hs = (size_t)(h >> 32) % SEEN;
    if (c->by_hash[hs].hash == h && same_string(w, c->by_hash[hs].item, item)) {
        w->hash[item] = cckey_dedup_link(c->by_hash[hs].item);
        return;
    }
    w->hash[item] = h;
    c->by_ptr[ps].ptr = b.ptr;
    c->by_ptr[ps].len = b.len;
    c->by_ptr[ps].item = item;
    c->by_hash[hs].hash = h;
    c->by_hash[hs].item = item;
}

/* Pass 2, per block: option offsets, pair pointers and string hashes. */
static void hash_blocks(void *ctx, size_t begin, size_t end)
{
    intern_work *w = ctx;
    plan *p = w->p;
    seen_cache *c = calloc(1, sizeof *c);
    if (!c) {
        w->bad = 2;
        return;
    }
    size_t n3 = 3 * p->n, shared[CCKEY_SHARED_SETS];
    for (size_t b = begin; b < end; b++) {
        size_t lo = b * TUPLE_BLOCK, hi = lo + TUPLE_BLOCK < p->n ? lo + TUPLE_BLOCK : p->n;
        size_t o = w->block_opts[b];
        cckey_shared_reset(shared);
        for (size_t i = lo; i < hi; i++) {
            const cckey_tuple *t = &p->tuples[i];
            hash_one(w, c, 3 * i, t->device);
            hash_one(w, c, 3 * i + 1, t->name);
            hash_one(w, c, 3 * i + 2, t->source);
            size_t root = cckey_shared_options(shared, p->tuples, i);
            if (root != SIZE_MAX) {
                p->opt_base[i] = p->opt_base[root];   /* the same strings: the same ids */
                continue;
            }
            p->opt_base[i] = o;
            for (size_t k = 0; k < t->n_options; k++) {
                w->pair[o / 2 + k] = &t->options[k];
                hash_one(w, c, n3 + o + 2 * k, t->options[k].key);
                hash_one(w, c, n3 + o + 2 * k + 1, t->options[k].value);
            }
            o += 2 * t->n_options;
        }
    }
    free(c);
}

/* Pass 3, per block: global string ids into the plan, and each tuple's
 * option-set hash. A tuple with no options, or with an options array seen
 * earlier in the block, or with the same option strings as a recent tuple
 * (callers that build an options array per tuple), links to the tuple that
 * had it: the set deduplication then sees a few real items per block. */
static void id_blocks(void *ctx, size_t begin, size_t end)
{
    intern_work *w = ctx;
    plan *p = w->p;
    enum { RECENT = 64 };
    size_t shared[CCKEY_SHARED_SETS];
    for (size_t b = begin; b < end; b++) {
        size_t lo = b * TUPLE_BLOCK, hi = lo + TUPLE_BLOCK < p->n ? lo + TUPLE_BLOCK : p->n;
        size_t by_hash[RECENT], none = SIZE_MAX;
        for (int r = 0; r < RECENT; r++) by_hash[r] = SIZE_MAX;
        cckey_shared_reset(shared);
        for (size_t i = lo; i < hi; i++) {
            const cckey_tuple *t = &p->tuples[i];
            for (int f = 0; f < 3; f++) p->ids[3 * i + f] = cckey_dedup_id(&w->strings, 3 * i + f);
            size_t root = cckey_shared_options(shared, p->tuples, i);
            if (root != SIZE_MAX) {
                uint64_t h = w->set_hash[root];
                w->set_hash[i] = h & 1 ? cckey_dedup_link(root) : h;   /* links point at real items only */
                continue;
            }
            uint32_t *oid = p->opt_ids + p->opt_base[i];
            size_t item = 3 * p->n + p->opt_base[i];
            for (size_t k = 0; k < 2 * t->n_options; k++) oid[k] = cckey_dedup_id(&w->strings, item + k);
            if (t->n_options == 0) {
                if (none == SIZE_MAX) {
                    none = i;
                    w->set_hash[i] = cckey_dedup_real(0);
                } else {
                    w->set_hash[i] = cckey_dedup_link(none);
                }
            } else {
                uint64_t h = cckey_dedup_real(cckey_hash_bytes(oid, 2 * t->n_options * sizeof *oid));
                size_t *c = &by_hash[(h >> 32) % RECENT];
                if (*c != SIZE_MAX && w->set_hash[*c] == h && same_set(w, *c, i)) {
                    w->set_hash[i] = cckey_dedup_link(*c);   /* links point at real items only */
                } else {
                    *c = i;
                    w->set_hash[i] = h;
                }
            }
        }
    }
}

typedef struct set_work {
    plan *p;
    const intern_work *w;
} set_work;

static void string_msgs(void *ctx, size_t begin, size_t end)
{
    set_work *s = ctx;
    for (size_t id = begin; id < end; id++) {
        cckey_bytes b = item_bytes(s->w, s->w->strings.rep[id]);
        s->p->strings.msgs[id] = (cckey_msg){b.ptr, b.len};
    }
}

/* Every string and option set gets its id, on all threads. Memory: see
 * cckey_make_keys in cckey.h. */
static cckey_status intern_all(plan *p, unsigned threads)
{
    size_t blocks = (p->n + TUPLE_BLOCK - 1) / TUPLE_BLOCK;
    cckey_scratch *mem = p->mem;
    intern_work w = {.p = p, .block_opts = cckey_scratch_alloc(mem, blocks * sizeof *w.block_opts)};
    atomic_init(&w.first_bad, SIZE_MAX);
    cckey_status st = w.block_opts ? CCKEY_OK : cckey_fail(CCKEY_ERR_NO_MEMORY, "batch tables");
    if (st == CCKEY_OK) st = cckey_parallel_for(threads, blocks, 1, check_blocks, &w);
    if (st != CCKEY_OK) return st;
    if (w.bad)
        return cckey_fail(CCKEY_ERR_INVALID_ARG, "tuple %zu has a {NULL, len > 0} field or NULL options",
                          p->base + atomic_load(&w.first_bad));
    for (size_t b = 0; b < blocks; b++) {
        size_t c = w.block_opts[b];
        w.block_opts[b] = w.n_opt;
        w.n_opt += c;
    }
    size_t items = 3 * p->n + w.n_opt;
    p->ids = cckey_scratch_alloc(mem, p->n * 3 * sizeof *p->ids);
    p->opt_ids = cckey_scratch_alloc(mem, w.n_opt * sizeof *p->opt_ids);
    p->opt_base = cckey_scratch_alloc(mem, p->n * sizeof *p->opt_base);
    w.pair = cckey_scratch_alloc(mem, w.n_opt / 2 * sizeof *w.pair);
    w.hash = cckey_scratch_alloc(mem, items * sizeof *w.hash);
    w.set_hash = cckey_scratch_alloc(mem, p->n * sizeof *w.set_hash);
    if (!p->ids || !p->opt_ids || !p->opt_base || !w.pair || !w.hash || !w.set_hash)
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "batch tables");
    st = cckey_parallel_for(threads, blocks, 1, hash_blocks, &w);
    if (st == CCKEY_OK && w.bad) st = cckey_fail(CCKEY_ERR_NO_MEMORY, "batch tables");
    if (st == CCKEY_OK) st = cckey_dedup_run(&w.strings, items, w.hash, same_string, &w, threads, mem);
    if (st == CCKEY_OK) st = cckey_parallel_for(threads, blocks, 1, id_blocks, &w);
    if (st == CCKEY_OK) st = cckey_dedup_run(&p->sets, p->n, w.set_hash, same_set, &w, threads, mem);
    if (st != CCKEY_OK) return st;
    set_work sw = {.p = p, .w = &w};
    p->strings.n = w.strings.distinct;
    p->strings.msgs = cckey_scratch_alloc(mem, p->strings.n * sizeof *p->strings.msgs);
    if (st == CCKEY_OK && !p->strings.msgs) st = cckey_fail(CCKEY_ERR_NO_MEMORY, "string table");
    if (st == CCKEY_OK) st = cckey_parallel_for(threads, p->strings.n, 1 << 16, string_msgs, &sw);
    return st;
}

/* The same tables in one pass on this thread (intern_block.h): a block, or
 * a batch too small to share out. */
static cckey_status intern_one_thread(plan *p)
{
    cckey_block_ids b;
    cckey_status st = cckey_intern_block(&b, p->tuples, p->n, p->base, p->mem);
    if (st != CCKEY_OK) return st;
    p->ids = b.ids;
    p->opt_ids = b.opt_ids;
    p->opt_base = b.opt_base;
    p->strings.msgs = b.msgs;
    p->strings.n = b.n_strings;
    p->str_hash = b.str_hash;
    p->sets = (cckey_dedup){.n = p->n, .local = b.set_of, .rep = b.set_rep, .distinct = b.n_sets, .flat = true};
    return CCKEY_OK;
}

/* Batches up to this many tuples are interned in one pass on one thread
 * when they get one thread, or are too small to share: its tables then
 * still fit in a core's caches. */
#define ONE_PASS_MAX ((size_t)1 << 16)

static cckey_status intern(plan *p, unsigned threads)
{
    if (p->n <= ONE_PASS_MAX && (threads == 1 || p->n < 2 * CCKEY_PLAN_BLOCK_MIN)) return intern_one_thread(p);
    return intern_all(p, threads);
}

/* The first tuple that uses string id m, and in which field: for messages
 * that name what a verify failure hit. */
static void describe_string(const plan *p, uint32_t m, char *buf, size_t len)
{
    static const char *const field[] = {"device", "name", "source"};
    for (size_t i = 0; i < p->n; i++) {
        for (int f = 0; f < 3; f++)
            if (p->ids[3 * i + f] == m) {
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
    /* splitmix64: any seed, 0 included, gives a full-period stream. */
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* A seed for a sample when the caller set none: differs between calls and
 * processes, and is reported, so that a run can be repeated. */
static uint64_t fresh_seed(void)
{
    static atomic_uint_fast64_t calls;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t s = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    s ^= (uint64_t)getpid() << 32 ^ atomic_fetch_add(&calls, 1) * 0xd1b54a32d192ed03u;
    return next_random(&s);
}

/* "the OpenCL device "NAME"": what a repair warning names. */
static void device_label(const cckey_batch_config *cfg, const cckey_backend_ops *b, char *buf, size_t len)
{
    cckey_device_info info[CCKEY_GPU_MAX_DEVICES];
    size_t n = 0;
    char why[256];
    snprintf(buf, len, "the %s device", b->name);
    if (cckey_backend_devices(b->kind, &cfg->device, info, CCKEY_GPU_MAX_DEVICES, &n, why, sizeof why) != CCKEY_OK)
        return;
    for (size_t i = 0; i < n && i < CCKEY_GPU_MAX_DEVICES; i++)
        if (info[i].chosen) snprintf(buf, len, "the %s device %u \"%s\"", b->name, info[i].index, info[i].name);
}

/* Recompute digests ids[0..count) (all m when ids is NULL) on the CPU and
 * put the CPU's digest wherever the device's differs. *bad counts them,
 * detail names the first few. */
static cckey_status check_and_repair(plan *p, const uint32_t *ids, size_t count, unsigned threads, size_t *bad,
                                     char *detail, size_t detail_len)
{
    cckey_msg *msgs = malloc((count ? count : 1) * sizeof *msgs);
    uint8_t (*ref)[CCKEY_MD5_DIGEST] = malloc((count ? count : 1) * sizeof *ref);
    if (!msgs || !ref) {
        free(msgs), free(ref);
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "verify buffers");
    }
    for (size_t i = 0; i < count; i++) msgs[i] = p->strings.msgs[ids ? ids[i] : i];
    cckey_digest_job job = {.msgs = msgs, .n = count, .out = ref, .threads = threads};
    cckey_status st = cckey_cpu_digest(&job);
    size_t used = 0;
    *bad = 0;
    detail[0] = '\0';
    for (size_t i = 0; st == CCKEY_OK && i < count; i++) {
        uint32_t id = ids ? ids[i] : (uint32_t)i;
        if (memcmp(ref[i], p->dig[id], CCKEY_MD5_DIGEST) == 0) continue;
        memcpy(p->dig[id], ref[i], CCKEY_MD5_DIGEST);
        if ((*bad)++ < 3 && used < detail_len - 128) {
            char where[96];
            describe_string(p, id, where, sizeof where);
            used += (size_t)snprintf(detail + used, detail_len - used, "%s%s", used ? ", " : "", where);
        }
    }
    free(msgs), free(ref);
    return st;
}

/* --verify=sample draws CCKEY_VERIFY_SAMPLE_SIZE digests with replacement:
 * a device that gets a fraction f of them wrong escapes with probability
 * (1 - f)^n, for f = 1/10,000 and n = 46,052 about 0.0099998, so it is
 * caught at least 99% of the time (n >= ln 0.01 / ln(1 - 1e-4) = 46,049.4).
 * Any wrong digest in the sample turns the check into a full one: every
 * digest is recomputed and the wrong ones are replaced. */
static cckey_status verify(plan *p, const cckey_batch_config *cfg, const cckey_backend_ops *b,
                           cckey_batch_report *rep, unsigned threads)
{
    size_t m = p->strings.n, bad = 0;
    char detail[512], sampled[160] = "";
    cckey_status st = CCKEY_OK;
    bool full = cfg->verify == CCKEY_VERIFY_ALL || m <= CCKEY_VERIFY_SAMPLE_SIZE;
    if (!full) {
        uint64_t seed = cfg->verify_seed_set ? cfg->verify_seed : fresh_seed(), rng = seed;
        size_t count = CCKEY_VERIFY_SAMPLE_SIZE;
        uint32_t *pick = malloc(count * sizeof *pick);
        if (!pick) return cckey_fail(CCKEY_ERR_NO_MEMORY, "verify sample");
        for (size_t i = 0; i < count; i++) pick[i] = (uint32_t)(next_random(&rng) % m);
        st = check_and_repair(p, pick, count, threads, &bad, detail, sizeof detail);
        free(pick);
        snprintf(sampled, sizeof sampled, "a sample of %zu of %zu digests (seed %llu)", count, m,
                 (unsigned long long)seed);
        if (st == CCKEY_OK && bad == 0) {
            size_t w = strlen(rep->warning);   /* after a fallback's warning, if any */
            snprintf(rep->warning + w, sizeof rep->warning - w,
                     "%sverify=sample: %s matched the CPU; the other digests were not checked", w ? "; " : "",
                     sampled);
            return CCKEY_OK;
        }
    }
    if (st == CCKEY_OK) st = check_and_repair(p, NULL, m, threads, &bad, detail, sizeof detail);
    if (st != CCKEY_OK || bad == 0) return st;
    char dev[400];
    device_label(cfg, b, dev, sizeof dev);
    size_t w = strlen(rep->warning);
    snprintf(rep->warning + w, sizeof rep->warning - w,
             "%s%s returned %zu wrong digest%s of %zu%s%s; all were recomputed and replaced with the CPU's "
             "(first: %s)",
             w ? "; " : "", dev, bad, bad == 1 ? "" : "s", m, *sampled ? ", found through " : "", sampled, detail);
    return CCKEY_OK;
}

static const cckey_backend_ops *choose(const cckey_batch_config *cfg, const plan *p, unsigned threads)
{
    const cckey_backend_ops *cpu = cckey_backend_ops_for(CCKEY_BACKEND_CPU);
    if (cfg->ops) return cfg->ops;
    if (cfg->backend != CCKEY_BACKEND_AUTO) return cckey_backend_ops_for(cfg->backend);
    uint64_t bytes = 0;
    for (size_t i = 0; i < p->strings.n; i++) bytes += p->strings.msgs[i].len;
    static const cckey_backend_kind prefer[] = {CCKEY_BACKEND_CUDA, CCKEY_BACKEND_OPENCL};
    for (size_t i = 0; i < sizeof prefer / sizeof *prefer; i++) {
        const cckey_backend_ops *b = cckey_backend_ops_for(prefer[i]);
        char why[256];
        if (b && cckey_backend_worth_it(b, &cfg->device, p->strings.n, bytes, threads) &&
            cckey_backend_available(b, &cfg->device, why, sizeof why) == CCKEY_OK)
            return b;
    }
    return cpu;
}

static cckey_status digest_strings(plan *p, const cckey_batch_config *cfg, cckey_batch_report *rep,
                                   unsigned threads, cckey_progress_relay *relay)
{
    size_t m = p->strings.n;
    p->dig = cckey_scratch_alloc(p->mem, m * sizeof *p->dig);
    uint8_t *done = cckey_scratch_calloc(p->mem, m);
    if (!p->dig || !done) {
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "digest buffers for %zu strings", m);
    }
    const cckey_backend_ops *b = choose(cfg, p, threads);
    char why[512] = "";
    if (!b) {
        return cckey_fail(CCKEY_ERR_UNAVAILABLE, "the %s backend is not compiled into this build",
                          cckey_backend_name(cfg->backend));
    }
    if (cckey_backend_available(b, &cfg->device, why, sizeof why) != CCKEY_OK) {
        return cckey_fail(CCKEY_ERR_UNAVAILABLE, "%s backend unavailable: %s", b->name, why);
    }
    struct cckey_digest_split split = {0, 0};
    cckey_digest_job job = {.msgs = p->strings.msgs, .n = m, .out = p->dig, .done = done,
                            .threads = threads,
                            .progress = cfg->progress || cfg->progress_cancel ? cckey_progress_relay_call : NULL,
                            .progress_user = relay, .cancel = &relay->cancelled, .split = &split,
                            .settings = &cfg->device};
    cckey_status st = cckey_backend_digest(b, &job);
    /* "opencl+cpu": the host threads hashed part of a device batch. */
    snprintf(rep->used, sizeof rep->used, "%s%s", b->name, b->engine && split.host ? "+cpu" : "");
    if (st != CCKEY_OK && b->engine) {
        /* A device failure is not the user's problem: finish on the CPU. */
        snprintf(rep->warning, sizeof rep->warning, "%s backend failed (%s: %s); the rest of the batch ran on the CPU",
                 b->name, cckey_strerror(st), cckey_last_error());
        snprintf(rep->used, sizeof rep->used, "%s+cpu", b->name);
        st = cckey_cpu_digest(&job);
    }
    if (atomic_load_explicit(&relay->cancelled, memory_order_relaxed))
        return cckey_fail(CCKEY_ERR_CANCELLED, "cancelled by the progress callback");
    if (st != CCKEY_OK) return st;
    if (b->engine && cfg->verify != CCKEY_VERIFY_NONE) return verify(p, cfg, b, rep, threads);
    return CCKEY_OK;
}

/* Round 2: canonical option strings, built from round 1's digests. */
static cckey_status digest_option_sets(plan *p, unsigned threads)
{
    size_t ns = p->sets.distinct, total = 0, max_opts = 0;
    for (size_t s = 0; s < ns; s++) {
        size_t k = p->tuples[p->sets.rep[s]].n_options;
        total += cckey_canon_len(k);
        if (k > max_opts) max_opts = k;
    }
    cckey_scratch *mem = p->mem;
    char *canon = cckey_scratch_alloc(mem, total);
    cckey_msg *msgs = cckey_scratch_alloc(mem, ns * sizeof *msgs);
    uint8_t (*d)[CCKEY_MD5_DIGEST] = cckey_scratch_alloc(mem, ns * sizeof *d);
    size_t *order = cckey_scratch_alloc(mem, max_opts * sizeof *order);
    const char **kh = cckey_scratch_alloc(mem, max_opts * sizeof *kh);
    const char **vh = cckey_scratch_alloc(mem, max_opts * sizeof *vh);
    char (*hex)[32] = cckey_scratch_alloc(mem, 2 * max_opts * sizeof *hex);
    p->set_hex = cckey_scratch_alloc(mem, ns * sizeof *p->set_hex);
    if (!canon || !msgs || !d || !order || !kh || !vh || !hex || !p->set_hex)
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "option set buffers");
    cckey_status st = CCKEY_OK;
    char *w = canon;
    for (size_t s = 0; s < ns && st == CCKEY_OK; s++) {
        size_t t = p->sets.rep[s];
        size_t k = p->tuples[t].n_options;
        st = cckey_option_order(p->tuples[t].options, k, order);
        for (size_t i = 0; i < k; i++) {
            const uint32_t *ids = p->opt_ids + p->opt_base[t] + 2 * order[i];
            cckey_hex(hex[2 * i], p->dig[ids[0]]);
            cckey_hex(hex[2 * i + 1], p->dig[ids[1]]);
            kh[i] = hex[2 * i];
            vh[i] = hex[2 * i + 1];
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
    p->set_dig = d;   /* kept for binary keys */
    return st;
}

typedef struct format_work {
    const plan *p;
    char (*out)[CCKEY_KEY_LEN + 1];          /* text keys, or */
    unsigned char (*bin)[CCKEY_KEY_BIN_LEN];  /* binary ones */
    const cckey_source *const *src;          /* per tuple, or NULL: see cckey_key_out */
} format_work;

/* The source field's digest of tuple i: the handle's, else the plan's. */
static void source_hex(const format_work *fw, size_t i, uint32_t id, char *o)
{
    if (fw->src && fw->src[i]) memcpy(o, cckey_source_hex_of(fw->src[i]), 32);
    else cckey_hex(o, fw->p->dig[id]);
}

static void source_bin(const format_work *fw, size_t i, uint32_t id, unsigned char *o)
{
    if (!fw->src || !fw->src[i]) {
        memcpy(o, fw->p->dig[id], 16);
        return;
    }
    const char *h = cckey_source_hex_of(fw->src[i]);
    for (int k = 0; k < 16; k++) {
        int hi = h[2 * k], lo = h[2 * k + 1];
        o[k] = (unsigned char)(((hi <= '9' ? hi - '0' : hi - 'a' + 10) << 4) | (lo <= '9' ? lo - '0' : lo - 'a' + 10));
    }
}

static void format_range(void *ctx, size_t begin, size_t end)
{
    format_work *fw = ctx;
    const plan *p = fw->p;
    for (size_t i = begin; i < end; i++) {
        const uint32_t *id = &p->ids[3 * i];
        uint32_t set = cckey_dedup_id(&p->sets, i);
        if (fw->bin) {
            for (int f = 0; f < 2; f++) memcpy(fw->bin[i] + 16 * f, p->dig[id[f]], 16);
            source_bin(fw, i, id[2], fw->bin[i] + 32);
            memcpy(fw->bin[i] + 48, p->set_dig[set], 16);
        } else {
            char *o = fw->out[i];
            for (int f = 0; f < 3; f++) {
                if (f == 2) source_hex(fw, i, id[f], o + 66);
                else cckey_hex(o + 33 * f, p->dig[id[f]]);
                o[33 * f + 32] = ':';
            }
            memcpy(o + 99, p->set_hex[set], 32);
            o[CCKEY_KEY_LEN] = '\0';
        }
    }
}

/* Below this many items a thread costs more to start than it saves. */
#define FORMAT_GRAIN 16384

/* Round 1 on this thread's CPU for one block (blocks.c): long strings
 * another block digested come from the shared cache. */
static cckey_status digest_block(plan *p, cckey_digest_cache *cache)
{
    size_t m = p->strings.n, longs = 0;
    p->dig = cckey_scratch_alloc(p->mem, m * sizeof *p->dig);
    uint8_t *done = cckey_scratch_calloc(p->mem, m);
    if (!p->dig || !done) return cckey_fail(CCKEY_ERR_NO_MEMORY, "digest buffers for %zu strings", m);
    for (size_t i = 0; i < m; i++) longs += p->strings.msgs[i].len >= CCKEY_DIGEST_CACHE_MIN;
    size_t *miss = cckey_scratch_alloc(p->mem, longs * sizeof *miss);
    uint64_t *hash = cckey_scratch_alloc(p->mem, longs * sizeof *hash);
    if (!miss || !hash) return cckey_fail(CCKEY_ERR_NO_MEMORY, "digest cache buffers");
    for (size_t i = 0, k = 0; k < longs; i++) {
        if (p->strings.msgs[i].len < CCKEY_DIGEST_CACHE_MIN) continue;
        miss[k] = i;
        hash[k++] = p->str_hash[i];
    }
    size_t misses = longs ? cckey_digest_cache_find(cache, p->strings.msgs, p->dig, done, miss, hash, longs) : 0;
    cckey_digest_job job = {.msgs = p->strings.msgs, .n = m, .out = p->dig, .done = done, .threads = 1};
    cckey_status st = cckey_cpu_digest(&job);
    if (st == CCKEY_OK) cckey_digest_cache_put(cache, p->strings.msgs, miss, hash, misses, (const void *)p->dig);
    return st;
}

cckey_status cckey_plan_cpu_block(cckey_key_out out, const cckey_tuple *tuples, size_t begin, size_t end,
                                  cckey_scratch *mem, cckey_digest_cache *cache)
{
    plan p = {.tuples = tuples + begin, .n = end - begin, .base = begin, .mem = mem};
    cckey_status st = intern_one_thread(&p);
    if (st == CCKEY_OK) st = digest_block(&p, cache);
    if (st == CCKEY_OK) st = digest_option_sets(&p, 1);
    if (st != CCKEY_OK) return st;
    format_work fw = {.p = &p, .out = out.text ? out.text + begin : NULL, .bin = out.bin ? out.bin + begin : NULL,
                      .src = out.src ? out.src + begin : NULL};
    format_range(&fw, 0, p.n);
    return CCKEY_OK;
}

cckey_status cckey_plan_make_keys(cckey_key_out out, const cckey_tuple *tuples, size_t n,
                                  const cckey_batch_config *config, cckey_batch_result *result)
{
    static const cckey_batch_config defaults = {.backend = CCKEY_BACKEND_AUTO, .device = CCKEY_DEVICE_SETTINGS_INIT};
    const cckey_batch_config *cfg = config ? config : &defaults;
    cckey_batch_report rep = {"", ""};
    unsigned threads = cfg->threads ? cfg->threads : cckey_cpu_count();
    cckey_progress_relay relay = {.cfg = cfg};
    atomic_init(&relay.cancelled, false);

    cckey_scratch mem[CCKEY_KEPT_SCRATCH];
    cckey_batch_config_take_scratch(config, mem);
    cckey_status st;
    if (cckey_plan_by_blocks(cfg, tuples, n, threads)) {
        st = cckey_plan_blocks(out, tuples, n, threads, mem, CCKEY_KEPT_SCRATCH);
        snprintf(rep.used, sizeof rep.used, "cpu");
    } else {
        plan p = {.tuples = tuples, .n = n, .mem = &mem[0]};
        st = intern(&p, threads);
        if (st == CCKEY_OK) st = digest_strings(&p, cfg, &rep, threads, &relay);
        if (st == CCKEY_OK) st = digest_option_sets(&p, threads);
        if (st == CCKEY_OK) {
            format_work fw = {.p = &p, .out = out.text, .bin = out.bin, .src = out.src};
            st = cckey_parallel_for(threads, n, FORMAT_GRAIN, format_range, &fw);
        }
    }
    cckey_batch_config_keep_scratch(config, mem);
    cckey_batch_config_publish(config, &rep);
    if (result) {
        memset(result, 0, sizeof *result);
        memcpy(result->used, rep.used, sizeof rep.used);
        memcpy(result->warning, rep.warning, sizeof rep.warning);
    }
    return st;
}
