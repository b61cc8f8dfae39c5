/* The device pipeline shared by the OpenCL and CUDA backends; the plan is
 * described in gpu_pipeline.h. */
#include "gpu_pipeline.h"
#include "../core/internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static size_t align_up(size_t n) { return (n + CCKEY_GPU_ALIGN - 1) & ~(size_t)(CCKEY_GPU_ALIGN - 1); }

cckey_gpu_slot cckey_gpu_slot_views(void *in, size_t cap_data, const void *out)
{
    return (cckey_gpu_slot){.data = in, .meta = (uint32_t *)((uint8_t *)in + cap_data), .digests = out};
}

cckey_status cckey_gpu_params_get(const cckey_device_settings *s, cckey_gpu_params *p)
{
    if (!s) s = &cckey_device_settings_default;
    /* The config's setters check ranges; this guards internal callers. */
    if (s->chunk_bytes < CCKEY_GPU_MIN_CHUNK_BYTES || s->chunk_bytes > CCKEY_GPU_MAX_CHUNK_BYTES ||
        s->long_bytes > CCKEY_GPU_MAX_CHUNK_BYTES / 4)
        return cckey_fail(CCKEY_ERR_INVALID_ARG, "device settings out of range: chunk %zu bytes, long %zu bytes",
                          s->chunk_bytes, s->long_bytes);
    p->chunk_bytes = s->chunk_bytes;
    p->long_bytes = s->long_bytes;
    /* One message per 64 packed bytes: a chunk of short names fills its
     * message table about when it fills its data buffer. */
    p->chunk_msgs = p->chunk_bytes / 64 > 16 ? p->chunk_bytes / 64 : 16;
    p->cpu_share = s->cpu_share;
    return CCKEY_OK;
}

/* ---- the shared work list ------------------------------------------------
 *
 * Every message still to do sits in one list: the long ones first (only the
 * host takes those), then the rest by MD5 block count, longest first. The
 * host threads claim runs from the front, the device claims chunks from the
 * back, and they meet wherever their speeds make them meet. Both claim
 * indices live in one atomic word, so a claim from either end is a single
 * compare-and-swap that can never overlap the other side's. */

#define CLAIMS(lo, hi) ((uint64_t)(lo) << 32 | (uint64_t)(hi))
#define CLAIM_LO(w) ((size_t)((w) >> 32))
#define CLAIM_HI(w) ((size_t)(uint32_t)(w))
/* The claim word holds 32-bit indices: bigger jobs go through in slices. */
#define SLICE_MSGS ((size_t)1 << 31)

typedef struct copy_work {
    const cckey_msg *msgs;
    const size_t *order;    /* this chunk's part of the order */
    const uint32_t *meta;
    uint8_t *data;
    size_t n;
    _Atomic size_t next;
} copy_work;

typedef struct inflight {
    size_t begin, end;    /* range of order[] in this slot */
    uint64_t bytes;
    bool busy;
} inflight;

typedef struct coop {
    const cckey_digest_job *job;
    const cckey_gpu_ops *ops;
    const cckey_gpu_params *prm;
    const size_t *order;
    size_t n_long;              /* order[0..n_long) is the host's alone */
    bool share;                 /* host threads may go past n_long */
    _Atomic uint64_t claims;    /* CLAIMS(lo, hi): order[lo..hi) is unclaimed */
    _Atomic uint64_t host_bytes;
    _Atomic size_t host_msgs;
    uint64_t dev_bytes, bytes_total;
    size_t dev_msgs;

    /* The device: driven by the calling thread only. */
    cckey_gpu_engine *self;
    unsigned slots;
    size_t cap_data, cap_msgs, dev_aligned, max_aligned;
    inflight fl[CCKEY_GPU_MAX_SLOTS];
    cckey_status st;

    /* Packing help: the other threads copy a big chunk into staging memory
     * before they hash anything (the device comes first). */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    copy_work *copy;            /* posted chunk, or NULL */
    _Atomic bool copy_posted;   /* a cheap look before taking mu */
    unsigned copy_helpers;
    bool device_over;           /* no more chunks will be posted */
} coop;

static bool host_claim(coop *c, size_t *start, size_t *end)
{
    if (cckey_job_cancelled(c->job)) return false;
    uint64_t w = atomic_load_explicit(&c->claims, memory_order_relaxed);
    for (;;) {
        size_t lo = CLAIM_LO(w), hi = CLAIM_HI(w);
        size_t limit = c->share || hi < c->n_long ? hi : c->n_long;
        if (lo >= limit) return false;
        size_t e = cckey_cpu_run_end(c->job->msgs, c->order, lo, limit);
        if (atomic_compare_exchange_weak_explicit(&c->claims, &w, CLAIMS(e, hi), memory_order_relaxed,
                                                  memory_order_relaxed)) {
            *start = lo, *end = e;
            return true;
        }
    }
}

/* The next chunk from the back: as many messages as fit the slot, never
 * into the host's part. Only the calling thread moves hi. */
static bool device_claim(coop *c, size_t *begin, size_t *end)
{
    uint64_t w = atomic_load_explicit(&c->claims, memory_order_relaxed);
    size_t hi = CLAIM_HI(w), j = hi, off = 0;
    while (j > c->n_long && hi - j < c->cap_msgs) {
        size_t a = align_up(c->job->msgs[c->order[j - 1]].len);
        if (off + a > c->cap_data) break;
        off += a;
        j--;
    }
    for (;;) {
        size_t b = j > CLAIM_LO(w) ? j : CLAIM_LO(w);
        if (b >= hi) return false;
        if (atomic_compare_exchange_weak_explicit(&c->claims, &w, CLAIMS(CLAIM_LO(w), b), memory_order_relaxed,
                                                  memory_order_relaxed)) {
            *begin = b, *end = hi;
            return true;
        }
    }
}

/* After a device failure nothing more goes to the device, and the host
 * finishes only its own part: the planner's fallback does the rest on all
 * threads, and done[] says exactly what that is. */
static void device_abandon(coop *c)
{
    uint64_t w = atomic_load_explicit(&c->claims, memory_order_relaxed);
    for (;;) {
        size_t lo = CLAIM_LO(w), hi = CLAIM_HI(w);
        size_t keep = lo > c->n_long ? lo : c->n_long;
        if (keep >= hi) return;
        if (atomic_compare_exchange_weak_explicit(&c->claims, &w, CLAIMS(lo, keep), memory_order_relaxed,
                                                  memory_order_relaxed))
            return;
    }
}

static void report(coop *c)
{
    const cckey_digest_job *job = c->job;
    if (job->progress)
        job->progress(job->progress_user,
                      c->dev_bytes + atomic_load_explicit(&c->host_bytes, memory_order_relaxed), c->bytes_total);
}

/* Hash runs from the front until the host's part is claimed; tid 0 reports
 * progress (it is the calling thread). */
static bool host_hash_one(coop *c, unsigned tid)
{
    size_t start, end;
    if (!host_claim(c, &start, &end)) return false;
    uint64_t bytes = cckey_cpu_hash_run(c->job, c->order, start, end);
    atomic_fetch_add_explicit(&c->host_bytes, bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->host_msgs, end - start, memory_order_relaxed);
    if (tid == 0) report(c);
    return true;
}

/* ---- packing ------------------------------------------------------------ */

/* Copying a chunk into staging memory is the host's main cost on a fast
 * device; a big chunk is copied by several threads. */
#define PAR_COPY_BYTES ((size_t)2 << 20)   /* below this, waking helpers costs more */
#define COPY_RUN 256u                     /* messages per claim */

static void copy_some(copy_work *w)
{
    for (;;) {
        size_t start = atomic_fetch_add_explicit(&w->next, COPY_RUN, memory_order_relaxed);
        if (start >= w->n) return;
        size_t end = start + COPY_RUN < w->n ? start + COPY_RUN : w->n;
        for (size_t j = start; j < end; j++) {
            const cckey_msg *m = &w->msgs[w->order[j]];
            if (m->len) memcpy(w->data + w->meta[2 * j], m->ptr, m->len);
        }
    }
}

static void help_copy(coop *c)
{
    pthread_mutex_lock(&c->mu);
    copy_work *w = c->copy;
    if (w) c->copy_helpers++;
    pthread_mutex_unlock(&c->mu);
    if (!w) return;
    copy_some(w);
    pthread_mutex_lock(&c->mu);
    if (--c->copy_helpers == 0) pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

/* Pack order[begin..end) into slot s. */
static size_t pack(coop *c, unsigned s, size_t begin, size_t end, bool helpers)
{
    const cckey_msg *msgs = c->job->msgs;
    uint32_t *meta = c->self->slot[s].meta;
    size_t off = 0;
    uint64_t bytes = 0;
    for (size_t j = 0; j < end - begin; j++) {
        size_t len = msgs[c->order[begin + j]].len;
        meta[2 * j] = (uint32_t)off;
        meta[2 * j + 1] = (uint32_t)len;
        off += align_up(len);
        bytes += len;
    }
    copy_work w = {.msgs = msgs, .order = c->order + begin, .meta = meta, .data = c->self->slot[s].data, .n = end - begin};
    atomic_init(&w.next, 0);
    if (helpers && off >= PAR_COPY_BYTES) {
        pthread_mutex_lock(&c->mu);
        c->copy = &w;
        atomic_store_explicit(&c->copy_posted, true, memory_order_relaxed);
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
        copy_some(&w);
        /* The work is on this stack: wait out every helper that joined. */
        pthread_mutex_lock(&c->mu);
        c->copy = NULL;
        atomic_store_explicit(&c->copy_posted, false, memory_order_relaxed);
        while (c->copy_helpers) pthread_cond_wait(&c->cv, &c->mu);
        pthread_mutex_unlock(&c->mu);
    } else {
        copy_some(&w);
    }
    c->fl[s] = (inflight){.begin = begin, .end = end, .bytes = bytes};
    return off;
}

/* ---- the device loop (calling thread) ----------------------------------- */

static cckey_status finish_slot(coop *c, unsigned s)
{
    inflight *f = &c->fl[s];
    f->busy = false;
    cckey_status st = c->ops->wait(c->self, s);
    if (st != CCKEY_OK) return st;
    const cckey_digest_job *job = c->job;
    const uint32_t *d = c->self->slot[s].digests;
    for (size_t j = f->begin; j < f->end; j++, d += 4) {
        size_t i = c->order[j];
        cckey_md5_store(job->out[i], d);
        if (job->done) job->done[i] = 1;
    }
    c->dev_msgs += f->end - f->begin;
    c->dev_bytes += f->bytes;
    report(c);
    return CCKEY_OK;
}

/* Staging that holds at least data_bytes and msgs per slot: what the engine
 * has when it is enough (kept from earlier batches), else new buffers of
 * exactly this size. c->cap_* is what this batch's chunks may fill. */
static cckey_status reserve(coop *c, size_t data_bytes, size_t msgs)
{
    cckey_gpu_engine *e = c->self;
    if (data_bytes > e->cap_data || msgs > e->cap_msgs) {
        /* A refused release leaves the device suspect: the batch fails
         * over to the CPU, and close() drops the engine's state. */
        cckey_status st = e->cap_data || e->cap_msgs ? c->ops->release(e) : CCKEY_OK;
        e->cap_data = e->cap_msgs = 0;
        if (st != CCKEY_OK) return st;
        /* A failed alloc's partial buffers go with the failed batch's
         * close(), which keeps alloc's message. */
        st = c->ops->alloc(e, data_bytes, msgs);
        if (st != CCKEY_OK) return st;
        e->cap_data = data_bytes, e->cap_msgs = msgs;
    }
    c->cap_data = data_bytes, c->cap_msgs = msgs;
    return CCKEY_OK;
}

#define MIN_CHUNK_BYTES ((size_t)8 << 20)
#define MIN_CHUNK_MSGS ((size_t)64 << 10)

static cckey_status device_loop(coop *c, size_t n_dev, bool helpers)
{
    const cckey_gpu_params *prm = c->prm;
    unsigned slots = 0;
    cckey_status st = c->ops->open(&c->self, c->job->settings, &slots);
    if (st != CCKEY_OK) {
        c->ops->close(c->self, true);   /* open and close always pair up */
        return st;
    }
    if (slots < 2 || slots > CCKEY_GPU_MAX_SLOTS) slots = 2;

    /* A mid-sized batch is cut into a few chunks per slot, so that copies
     * and kernels overlap; below MIN_CHUNK_* a launch costs more than the
     * overlap wins. Small batches get small buffers, and the longest
     * message always fits. */
    size_t cap_data = c->dev_aligned / (2 * slots);
    if (cap_data < MIN_CHUNK_BYTES) cap_data = MIN_CHUNK_BYTES;
    if (cap_data > prm->chunk_bytes) cap_data = prm->chunk_bytes;
    if (cap_data > c->dev_aligned) cap_data = c->dev_aligned;
    if (cap_data < c->max_aligned) cap_data = c->max_aligned;
    /* The message table sits right after the data in one buffer, and the
     * kernel reads it as uint32_t: a share of dev_aligned is any size. */
    cap_data = align_up(cap_data);
    if (cap_data < CCKEY_GPU_ALIGN) cap_data = CCKEY_GPU_ALIGN;
    size_t cap_msgs = n_dev / (2 * slots);
    if (cap_msgs < MIN_CHUNK_MSGS) cap_msgs = MIN_CHUNK_MSGS;
    if (cap_msgs > prm->chunk_msgs) cap_msgs = prm->chunk_msgs;
    if (cap_msgs > n_dev) cap_msgs = n_dev;
    st = reserve(c, cap_data, cap_msgs);

    unsigned long chunk = 0;
    for (; st == CCKEY_OK; chunk++) {
        unsigned s = (unsigned)(chunk % slots);
        if (c->fl[s].busy && (st = finish_slot(c, s)) != CCKEY_OK) break;
        size_t begin, end;
        if (cckey_job_cancelled(c->job) || !device_claim(c, &begin, &end)) break;
        size_t data_bytes = pack(c, s, begin, end, helpers);
        st = c->ops->launch(c->self, s, end - begin, data_bytes);
        if (st != CCKEY_OK) break;
        c->fl[s].busy = true;
    }
    /* Collect the chunks still in flight, oldest first. After a failure
     * they are abandoned unread (close() waits them out): the planner's CPU
     * fallback redoes exactly the messages not marked done. */
    for (unsigned k = 0; k < slots; k++) {
        unsigned s = (unsigned)((chunk + k) % slots);
        if (!c->fl[s].busy) continue;
        if (st == CCKEY_OK) st = finish_slot(c, s);
        else c->fl[s].busy = false;
    }
    /* Giving back a device that did every chunk right can still fail: the
     * digests stand, the batch reports it (the planner warns). */
    cckey_status closed = c->ops->close(c->self, st != CCKEY_OK);
    return st != CCKEY_OK ? st : closed;
}

/* ---- the threads -------------------------------------------------------- */

typedef struct coop_run {
    coop *c;
    size_t n_dev;
    unsigned threads;
} coop_run;

static void coop_thread(void *arg, unsigned tid)
{
    coop_run *r = arg;
    coop *c = r->c;
    if (tid == 0) {
        if (r->n_dev) c->st = device_loop(c, r->n_dev, r->threads > 1);
        if (c->st != CCKEY_OK) device_abandon(c);
        pthread_mutex_lock(&c->mu);
        c->device_over = true;
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
        /* Then whatever the host side has left, like any other thread. */
        while (host_hash_one(c, 0)) {}
        return;
    }
    for (;;) {
        if (atomic_load_explicit(&c->copy_posted, memory_order_relaxed)) help_copy(c);
        if (host_hash_one(c, tid)) continue;
        /* Nothing to hash, and nothing will come back to hash: stay only
         * to help pack while the device runs. */
        pthread_mutex_lock(&c->mu);
        while (!c->copy && !c->device_over) pthread_cond_wait(&c->cv, &c->mu);
        bool over = !c->copy && c->device_over;
        pthread_mutex_unlock(&c->mu);
        if (over) return;
    }
}

static cckey_status digest_slice(const cckey_digest_job *job, const cckey_gpu_ops *ops, const cckey_gpu_params *prm,
                                 struct cckey_digest_split *split)
{
    size_t *todo = malloc(job->n * sizeof *todo);
    size_t *order = malloc(job->n * sizeof *order);
    if (!todo || !order) {
        free(todo), free(order);
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "ordering %zu messages", job->n);
    }
    coop c = {.job = job, .ops = ops, .prm = prm, .order = order, .share = prm->cpu_share, .st = CCKEY_OK};
    size_t n = 0, n_dev = 0;
    uint64_t long_total = 0;
    for (size_t i = 0; i < job->n; i++) {
        if (job->done && job->done[i]) continue;
        size_t len = job->msgs[i].len;
        todo[n++] = i;
        c.bytes_total += len;
        if (len > prm->long_bytes) {
            c.n_long++;
            long_total += len;
            continue;
        }
        n_dev++;
        c.dev_aligned += align_up(len);
        if (align_up(len) > c.max_aligned) c.max_aligned = align_up(len);
    }
    cckey_status st = cckey_order_by_blocks(job->msgs, todo, n, prm->long_bytes, order);
    free(todo);
    if (st != CCKEY_OK || n == 0) {
        free(order);
        return st;
    }
    atomic_init(&c.claims, CLAIMS(0, n));
    atomic_init(&c.host_bytes, 0);
    atomic_init(&c.host_msgs, 0);
    atomic_init(&c.copy_posted, false);
    pthread_mutex_init(&c.mu, NULL);
    pthread_cond_init(&c.cv, NULL);

    /* This thread feeds the device; the others hash (long messages, and
     * with sharing on, whatever the device has not claimed yet) and help it
     * pack. A single-threaded job still gets one helper for long messages,
     * so that they never wait for the device. */
    unsigned threads = job->threads ? job->threads : cckey_cpu_count();
    /* Threads cost tens of microseconds to start: one per 256 KiB the host
     * may hash, and all of them when there are big chunks to pack. */
    uint64_t enough = ((c.share ? c.bytes_total : long_total) >> 18) + 1;
    if (c.dev_aligned >= PAR_COPY_BYTES) enough = threads;
    if (enough < threads) threads = (unsigned)enough;
    if (threads < 2 && c.n_long) threads = 2;
    coop_run r = {.c = &c, .n_dev = n_dev, .threads = threads};
    st = cckey_parallel_run(threads, coop_thread, &r);
    if (st == CCKEY_OK) st = c.st;
    if (st == CCKEY_OK) report(&c);
    split->device += c.dev_msgs;
    split->host += atomic_load_explicit(&c.host_msgs, memory_order_relaxed);
    pthread_cond_destroy(&c.cv);
    pthread_mutex_destroy(&c.mu);
    free(order);
    return st;
}

cckey_status cckey_gpu_digest(const cckey_digest_job *job, const cckey_gpu_ops *ops)
{
    cckey_gpu_params prm;
    cckey_status st = cckey_gpu_params_get(job->settings, &prm);
    struct cckey_digest_split split = {0, 0};
    for (size_t off = 0; st == CCKEY_OK && off < job->n; off += SLICE_MSGS) {
        cckey_digest_job sub = *job;
        sub.msgs += off;
        sub.out += off;
        if (sub.done) sub.done += off;
        sub.n = job->n - off < SLICE_MSGS ? job->n - off : SLICE_MSGS;
        st = digest_slice(&sub, ops, &prm, &split);
    }
    if (job->split) *job->split = split;
    return st;
}

/* ---- when a device is worth it ------------------------------------------
 *
 * `auto` must never be slower than the CPU alone, so the rule is
 * conservative: a small batch never touches a device (loading a driver
 * and building a kernel costs more than hashing a few megabytes), and a
 * large one goes to the device only when the estimated time there beats
 * the estimated time on all host threads by a margin. The CPU figures are
 * this library's multi-buffer path on one modern x86 core; the device
 * figures come from the backend (link bandwidth dominates on discrete
 * GPUs), plus the calling thread's packing.
 *
 * Sharing, the host threads but the one feeding the device hash from
 * t = 0 and the device joins after setup_s, so the batch ends at the t with
 *   (threads - 1) * t / cpu1 + max(0, t - setup_s) / dev = 1
 * (cpu1, dev: the whole batch on one host thread, on the device). That
 * beats the CPU alone exactly when the device, over the time it runs, does
 * more than the one host thread it takes. */
#define MIN_BYTES ((uint64_t)32 << 20)
#define MIN_MSGS ((size_t)1 << 18)
#define CPU_GBPS_PER_THREAD 1.5     /* bulk hashing, one thread */
#define CPU_NS_PER_MSG 40.0         /* per message on one thread: padding, lane refill */
#define PACK_NS_PER_MSG 25.0        /* device path, host thread: pack and scatter */

bool cckey_gpu_worth_it(size_t n, uint64_t total_bytes, unsigned cpu_threads, double device_gbps,
                        double setup_s, bool share)
{
    if (total_bytes < MIN_BYTES && n < MIN_MSGS) return false;
    if (cpu_threads == 0) cpu_threads = 1;
    double bytes = (double)total_bytes;
    double cpu1 = bytes / (CPU_GBPS_PER_THREAD * 1e9) + (double)n * CPU_NS_PER_MSG * 1e-9;
    double cpu_s = cpu1 / cpu_threads;
    double dev = bytes / (device_gbps * 1e9) + (double)n * PACK_NS_PER_MSG * 1e-9;
    double dev_s = setup_s + dev;
    if (share && cpu_threads > 1) {
        double hosts = cpu_threads - 1;
        double alone = cpu1 / hosts;   /* if the device never got going */
        double both = (1 + setup_s / dev) / (hosts / cpu1 + 1 / dev);
        dev_s = alone <= setup_s ? alone : both;
    }
    return dev_s * 1.25 < cpu_s;   /* a margin for what the estimates miss */
}

