/* The device pipeline shared by the OpenCL and CUDA backends; the plan is
 * described in gpu_pipeline.h. */
#include "gpu_pipeline.h"
#include "../core/internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static size_t align_up(size_t n) { return (n + CCKEY_GPU_ALIGN - 1) & ~(size_t)(CCKEY_GPU_ALIGN - 1); }

cckey_gpu_slot cckey_gpu_slot_views(void *in, size_t cap_data, const void *out)
{
    return (cckey_gpu_slot){.data = in, .meta = (uint32_t *)((uint8_t *)in + cap_data), .digests = out};
}

/* A decimal size from the environment, with an optional K/M/G suffix. */
static cckey_status env_size(const char *var, size_t lo, size_t hi, size_t fallback, size_t *out)
{
    const char *s = getenv(var);
    *out = fallback;
    if (!s || !*s) return CCKEY_OK;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k') shift = 10, end++;
    else if (*end == 'M' || *end == 'm') shift = 20, end++;
    else if (*end == 'G' || *end == 'g') shift = 30, end++;
    if (errno || end == s || *end || s[0] == '-' || (v << shift >> shift) != v || (v << shift) < lo ||
        (v << shift) > hi)
        return cckey_fail(CCKEY_ERR_INVALID_ARG, "%s=%s: expected a size from %zu to %zu bytes (K, M, G allowed)",
                          var, s, lo, hi);
    *out = (size_t)(v << shift);
    return CCKEY_OK;
}

cckey_status cckey_gpu_params_get(cckey_gpu_params *p)
{
    cckey_status st = env_size("CCKEY_GPU_CHUNK_BYTES", 64, CCKEY_GPU_MAX_CHUNK_BYTES,
                               CCKEY_GPU_DEFAULT_CHUNK_BYTES, &p->chunk_bytes);
    if (st == CCKEY_OK)
        st = env_size("CCKEY_GPU_LONG_BYTES", 0, CCKEY_GPU_MAX_CHUNK_BYTES / 4, CCKEY_GPU_DEFAULT_LONG_BYTES,
                      &p->long_bytes);
    if (st != CCKEY_OK) return st;
    /* One message per 64 packed bytes: a chunk of short names fills its
     * message table about when it fills its data buffer. */
    p->chunk_msgs = p->chunk_bytes / 64 > 16 ? p->chunk_bytes / 64 : 16;
    p->fault_chunk = -1;
    const char *f = getenv("CCKEY_FAULT_CHUNK");
    if (f && *f) {
        char *end;
        long k = strtol(f, &end, 10);
        if (*end || end == f || k < 0)
            return cckey_fail(CCKEY_ERR_INVALID_ARG, "CCKEY_FAULT_CHUNK=%s: expected a chunk number >= 0", f);
        p->fault_chunk = k;
    }
    return CCKEY_OK;
}

bool cckey_gpu_fault_build(void)
{
    const char *f = getenv("CCKEY_FAULT_BUILD");
    return f && *f && strcmp(f, "0") != 0;
}

/* ---- the CPU's share: long messages, on a host thread ------------------- */

typedef struct cpu_share {
    cckey_msg *msgs;
    size_t *idx;          /* job index of each */
    uint8_t (*out)[CCKEY_MD5_DIGEST];
    size_t n;
    unsigned threads;
    cckey_status st;
    _Atomic uint64_t bytes_done;
    pthread_t thread;
    bool running;
} cpu_share;

static void share_progress(void *user, uint64_t done, uint64_t total)
{
    (void)total;
    cpu_share *c = user;
    atomic_store_explicit(&c->bytes_done, done, memory_order_relaxed);
}

static void *share_run(void *arg)
{
    cpu_share *c = arg;
    cckey_digest_job sub = {.msgs = c->msgs, .n = c->n, .out = c->out, .threads = c->threads,
                            .progress = share_progress, .progress_user = c};
    c->st = cckey_cpu_digest(&sub);
    return NULL;
}

/* Join the CPU's share and publish its digests. */
static cckey_status share_finish(cpu_share *c, const cckey_digest_job *job)
{
    if (c->running) pthread_join(c->thread, NULL);
    else if (c->n) share_run(c);   /* the thread could not start: do it here */
    c->running = false;
    if (c->st != CCKEY_OK) return c->st;
    for (size_t i = 0; i < c->n; i++) {
        memcpy(job->out[c->idx[i]], c->out[i], CCKEY_MD5_DIGEST);
        if (job->done) job->done[c->idx[i]] = 1;
    }
    return CCKEY_OK;
}

/* ---- ordering: by block count, longest first --------------------------- */

#define BUCKETS 4096u   /* beyond this many blocks, messages share a bucket */

static size_t bucket_of(size_t len)
{
    size_t blocks = (len + 8) / CCKEY_MD5_BLOCK + 1;
    return blocks < BUCKETS ? blocks : BUCKETS - 1;
}

/* Counting sort of the device's messages, descending; O(n). */
static cckey_status order_by_blocks(const cckey_msg *msgs, const size_t *in, size_t n, size_t *out)
{
    size_t *start = calloc(BUCKETS + 1, sizeof *start);
    if (!start) return cckey_fail(CCKEY_ERR_NO_MEMORY, "sort buckets");
    for (size_t i = 0; i < n; i++) start[BUCKETS - 1 - bucket_of(msgs[in[i]].len) + 1]++;
    for (size_t b = 1; b <= BUCKETS; b++) start[b] += start[b - 1];
    for (size_t i = 0; i < n; i++) out[start[BUCKETS - 1 - bucket_of(msgs[in[i]].len)]++] = in[i];
    free(start);
    return CCKEY_OK;
}

/* ---- the device loop ---------------------------------------------------- */

typedef struct inflight {
    size_t begin, end;    /* range of order[] in this slot */
    uint64_t bytes;
    bool busy;
} inflight;

typedef struct run {
    const cckey_digest_job *job;
    const cckey_gpu_ops *ops;
    void *self;
    const size_t *order;
    cckey_gpu_slot slot[CCKEY_GPU_MAX_SLOTS];
    inflight fl[CCKEY_GPU_MAX_SLOTS];
    uint64_t bytes_done, bytes_total;
    cpu_share *cpu;
} run;

static void report(run *r)
{
    const cckey_digest_job *job = r->job;
    if (job->progress)
        job->progress(job->progress_user,
                      r->bytes_done + atomic_load_explicit(&r->cpu->bytes_done, memory_order_relaxed),
                      r->bytes_total);
}

static cckey_status finish_slot(run *r, unsigned s)
{
    inflight *f = &r->fl[s];
    f->busy = false;
    cckey_status st = r->ops->wait(r->self, s);
    if (st != CCKEY_OK) return st;
    const cckey_digest_job *job = r->job;
    const uint32_t *d = r->slot[s].digests;
    for (size_t j = f->begin; j < f->end; j++, d += 4) {
        size_t i = r->order[j];
        cckey_md5_store(job->out[i], d);
        if (job->done) job->done[i] = 1;
    }
    r->bytes_done += f->bytes;
    report(r);
    return CCKEY_OK;
}

/* Copying a chunk into staging memory is the host's main cost on a fast
 * device; a big chunk is copied by several threads. */
#define PAR_COPY_BYTES ((size_t)2 << 20)   /* below this, starting threads costs more */
#define COPY_RUN 256u                     /* messages per claim */

typedef struct copy_work {
    const cckey_msg *msgs;
    const size_t *order;    /* this chunk's part of the order */
    const uint32_t *meta;
    uint8_t *data;
    size_t n;
    _Atomic size_t next;
} copy_work;

static void copy_worker(void *arg, unsigned tid)
{
    (void)tid;
    copy_work *w = arg;
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

/* Pack order[pos..) into slot s, as much as fits; returns the end. */
static size_t pack(run *r, unsigned s, size_t pos, size_t n_dev, size_t cap_data, size_t cap_msgs,
                   size_t *data_bytes)
{
    const cckey_msg *msgs = r->job->msgs;
    uint32_t *meta = r->slot[s].meta;
    size_t off = 0, j = 0;
    uint64_t bytes = 0;
    for (; pos + j < n_dev && j < cap_msgs; j++) {
        size_t len = msgs[r->order[pos + j]].len;
        if (off + align_up(len) > cap_data) break;
        meta[2 * j] = (uint32_t)off;
        meta[2 * j + 1] = (uint32_t)len;
        off += align_up(len);
        bytes += len;
    }
    copy_work w = {.msgs = msgs, .order = r->order + pos, .meta = meta, .data = r->slot[s].data, .n = j};
    atomic_init(&w.next, 0);
    unsigned threads = r->job->threads ? r->job->threads : cckey_cpu_count();
    size_t enough = off / PAR_COPY_BYTES + 1;
    if (enough < threads) threads = (unsigned)enough;
    /* Work is claimed, so whatever threads start finish it; if none can
     * (no memory for the thread table), this thread copies alone. */
    if (cckey_parallel_run(threads, copy_worker, &w) != CCKEY_OK) copy_worker(&w, 0);
    r->fl[s] = (inflight){.begin = pos, .end = pos + j, .bytes = bytes};
    *data_bytes = off;
    return pos + j;
}

#define MIN_CHUNK_BYTES ((size_t)8 << 20)
#define MIN_CHUNK_MSGS ((size_t)64 << 10)

static cckey_status device_loop(run *r, const cckey_gpu_params *prm, size_t n_dev, size_t total_aligned,
                                size_t max_aligned)
{
    unsigned slots = 0;
    cckey_status st = r->ops->open(&r->self, &slots);
    if (st != CCKEY_OK) {
        r->ops->close(r->self, true);   /* open and close always pair up */
        return st;
    }
    if (slots < 2 || slots > CCKEY_GPU_MAX_SLOTS) slots = 2;

    /* A mid-sized batch is cut into a few chunks per slot, so that copies
     * and kernels overlap; below MIN_CHUNK_* a launch costs more than the
     * overlap wins. Small batches get small buffers, and the longest
     * message always fits. */
    size_t cap_data = total_aligned / (2 * slots);
    if (cap_data < MIN_CHUNK_BYTES) cap_data = MIN_CHUNK_BYTES;
    if (cap_data > prm->chunk_bytes) cap_data = prm->chunk_bytes;
    if (cap_data > total_aligned) cap_data = total_aligned;
    if (cap_data < max_aligned) cap_data = max_aligned;
    if (cap_data < CCKEY_GPU_ALIGN) cap_data = CCKEY_GPU_ALIGN;
    size_t cap_msgs = n_dev / (2 * slots);
    if (cap_msgs < MIN_CHUNK_MSGS) cap_msgs = MIN_CHUNK_MSGS;
    if (cap_msgs > prm->chunk_msgs) cap_msgs = prm->chunk_msgs;
    if (cap_msgs > n_dev) cap_msgs = n_dev;
    st = r->ops->reserve(r->self, cap_data, cap_msgs, r->slot);

    size_t pos = 0;
    unsigned long chunk = 0;
    for (; st == CCKEY_OK && pos < n_dev; chunk++) {
        unsigned s = (unsigned)(chunk % slots);
        if (r->fl[s].busy && (st = finish_slot(r, s)) != CCKEY_OK) break;
        if (prm->fault_chunk >= 0 && chunk == (unsigned long)prm->fault_chunk) {
            st = cckey_fail(CCKEY_ERR_DEVICE, "%s: injected fault before chunk %lu (CCKEY_FAULT_CHUNK)",
                            r->ops->name, chunk);
            break;
        }
        size_t data_bytes;
        size_t end = pack(r, s, pos, n_dev, cap_data, cap_msgs, &data_bytes);
        st = r->ops->launch(r->self, s, end - pos, data_bytes);
        if (st != CCKEY_OK) break;
        r->fl[s].busy = true;
        pos = end;
    }
    /* Collect the chunks still in flight, oldest first. After a failure
     * they are abandoned unread (close() waits them out): the planner's CPU
     * fallback redoes exactly the messages not marked done. */
    for (unsigned k = 0; k < slots; k++) {
        unsigned s = (unsigned)((chunk + k) % slots);
        if (!r->fl[s].busy) continue;
        if (st == CCKEY_OK) st = finish_slot(r, s);
        else r->fl[s].busy = false;
    }
    r->ops->close(r->self, st != CCKEY_OK);
    return st;
}

cckey_status cckey_gpu_digest(const cckey_digest_job *job, const cckey_gpu_ops *ops)
{
    cckey_gpu_params prm;
    cckey_status st = cckey_gpu_params_get(&prm);
    if (st != CCKEY_OK || job->n == 0) return st;

    size_t *todo = malloc(job->n * sizeof *todo);
    size_t *order = malloc(job->n * sizeof *order);
    cpu_share cpu = {.st = CCKEY_OK};
    atomic_init(&cpu.bytes_done, 0);
    if (!todo || !order) {
        free(todo), free(order);
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "ordering %zu messages", job->n);
    }
    run r = {.job = job, .ops = ops, .order = order, .cpu = &cpu};
    size_t n_dev = 0, total_aligned = 0, max_aligned = 0;
    for (size_t i = 0; i < job->n; i++) {
        if (job->done && job->done[i]) continue;
        size_t len = job->msgs[i].len;
        r.bytes_total += len;
        if (len > prm.long_bytes) {
            cpu.n++;
            continue;
        }
        todo[n_dev++] = i;
        total_aligned += align_up(len);
        if (align_up(len) > max_aligned) max_aligned = align_up(len);
    }

    if (cpu.n) {
        cpu.msgs = malloc(cpu.n * sizeof *cpu.msgs);
        cpu.idx = malloc(cpu.n * sizeof *cpu.idx);
        cpu.out = malloc(cpu.n * sizeof *cpu.out);
        if (!cpu.msgs || !cpu.idx || !cpu.out) {
            st = cckey_fail(CCKEY_ERR_NO_MEMORY, "CPU share of %zu long messages", cpu.n);
            goto out;
        }
        size_t k = 0;
        for (size_t i = 0; i < job->n; i++)
            if (!(job->done && job->done[i]) && job->msgs[i].len > prm.long_bytes) {
                cpu.idx[k] = i;
                cpu.msgs[k++] = job->msgs[i];
            }
        unsigned threads = job->threads ? job->threads : cckey_cpu_count();
        cpu.threads = threads > 1 ? threads - 1 : 1;   /* this thread feeds the device */
        cpu.running = pthread_create(&cpu.thread, NULL, share_run, &cpu) == 0;
    }

    if (n_dev) {
        st = order_by_blocks(job->msgs, todo, n_dev, order);
        if (st == CCKEY_OK) st = device_loop(&r, &prm, n_dev, total_aligned, max_aligned);
    }
    /* The CPU's share is finished and kept whatever the device did. */
    cckey_status cst = share_finish(&cpu, job);
    if (st == CCKEY_OK) st = cst;
    if (st == CCKEY_OK) report(&r);
out:
    free(todo), free(order), free(cpu.msgs), free(cpu.idx), free(cpu.out);
    return st;
}

/* ---- when a device is worth it ------------------------------------------
 *
 * `auto` must never be slower than the CPU alone, so the rule is
 * conservative: a small batch never touches a device (loading a driver
 * and building a kernel costs more than hashing a few megabytes), and a
 * large one goes to the device only when the estimated time there,
 * including the host's single-threaded packing, beats the estimated time on
 * all host threads. The CPU figures are this library's multi-buffer path
 * on one modern x86 core; the device figures come from the backend (link
 * bandwidth dominates on discrete GPUs). */
#define MIN_BYTES ((uint64_t)32 << 20)
#define MIN_MSGS ((size_t)1 << 18)
#define CPU_GBPS_PER_THREAD 1.5     /* bulk hashing, one thread */
#define CPU_NS_PER_MSG 40.0         /* per message on one thread: padding, lane refill */
#define PACK_NS_PER_MSG 25.0        /* device path, host thread: pack and scatter */

bool cckey_gpu_worth_it(size_t n, uint64_t total_bytes, unsigned cpu_threads, double device_gbps,
                        double setup_s)
{
    if (total_bytes < MIN_BYTES && n < MIN_MSGS) return false;
    if (cpu_threads == 0) cpu_threads = 1;
    double bytes = (double)total_bytes;
    double cpu_s = (bytes / (CPU_GBPS_PER_THREAD * 1e9) + (double)n * CPU_NS_PER_MSG * 1e-9) / cpu_threads;
    double dev_s = setup_s + bytes / (device_gbps * 1e9) + (double)n * PACK_NS_PER_MSG * 1e-9;
    return dev_s * 1.25 < cpu_s;   /* a margin for what the estimates miss */
}

bool cckey_gpu_auto_ok(const cckey_gpu_ops *ops, size_t n, uint64_t total_bytes, unsigned cpu_threads)
{
    /* The size test first: a small batch must not even load the runtime. */
    if (!cckey_gpu_worth_it(n, total_bytes, cpu_threads, ops->device_gbps, ops->setup_s)) return false;
    const cckey_device_info *d = ops->device(NULL, 0);
    return d && d->auto_ok;
}

cckey_status cckey_gpu_available(const cckey_gpu_ops *ops, char *why, size_t why_len)
{
    return ops->device(why, why_len) ? CCKEY_OK : CCKEY_ERR_UNAVAILABLE;
}
