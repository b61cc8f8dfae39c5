/* The lane manager, shared by every SIMD path: each lane walks one message
 * block by block (the body straight from the caller's memory, then the 1-2
 * padded tail blocks); the moment a lane's message ends, the lane takes the
 * next message, so lanes never wait for the longest one (isa-l md5_mb
 * style). Any order of lengths is correct; longest-first only keeps the end
 * of a batch short. There, with no message left to start, the busy lanes
 * move to the narrower kernel once they fit in it, and to scalar code once
 * half-empty vector calls cost more than finishing lane by lane. */
#include "md5_mb.h"
#include "md5_pad.h"

#include <stdlib.h>
#include <string.h>

typedef struct mb_lane {
    const uint8_t *p;     /* next block */
    size_t left;          /* blocks from p on; 0 = idle lane */
    size_t tail_blocks;   /* padded blocks still to come after the body */
    size_t msg;
    size_t dirty;         /* for cckey_md5_pad_into */
} mb_lane;

typedef struct mb_state {
    _Alignas(64) uint32_t st[4][CCKEY_MD5_MAX_LANES];
    _Alignas(64) uint8_t tail[CCKEY_MD5_MAX_LANES][2 * CCKEY_MD5_BLOCK];
    const uint8_t *blk[CCKEY_MD5_MAX_LANES];
    mb_lane lane[CCKEY_MD5_MAX_LANES];
} mb_state;

/* What idle lanes chew on; their results are never read. */
static const uint8_t idle_block[CCKEY_MD5_BLOCK];

static inline void lane_start(mb_state *s, unsigned l, const cckey_msg *m, size_t idx)
{
    mb_lane *ln = &s->lane[l];
    size_t whole = m->len / CCKEY_MD5_BLOCK, rem = m->len % CCKEY_MD5_BLOCK;
    size_t nt = cckey_md5_pad_into(s->tail[l], rem ? m->ptr + (m->len - rem) : NULL, rem, m->len,
                                   &ln->dirty);
    for (int w = 0; w < 4; w++) s->st[w][l] = cckey_md5_iv[w];
    ln->msg = idx;
    if (whole) {
        ln->p = m->ptr;
        ln->left = whole;
        ln->tail_blocks = nt;
    } else {
        ln->p = s->tail[l];
        ln->left = nt;
        ln->tail_blocks = 0;
    }
    s->blk[l] = ln->p;
}

static inline void lane_store(const mb_state *s, unsigned l, uint8_t out[CCKEY_MD5_DIGEST])
{
    /* Word by word: composing the 16 bytes first made GCC assemble them on
     * the stack and reload them wider, a store-forwarding stall per digest. */
    for (int w = 0; w < 4; w++) {
        uint32_t v = s->st[w][l];
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        memcpy(out + 4 * w, &v, 4);
#else
        for (int j = 0; j < 4; j++) out[4 * w + j] = (uint8_t)(v >> (8 * j));
#endif
    }
}

static void lane_move(mb_state *s, unsigned to, unsigned from)
{
    mb_lane *ln = &s->lane[to];
    *ln = s->lane[from];
    for (int w = 0; w < 4; w++) s->st[w][to] = s->st[w][from];
    memcpy(s->tail[to], s->tail[from], sizeof s->tail[to]);
    if (ln->p >= s->tail[from] && ln->p < s->tail[from] + sizeof s->tail[from])
        ln->p = s->tail[to] + (ln->p - s->tail[from]);
    s->blk[to] = ln->p;
}

/* Busy lanes to the front, so a narrower kernel sees all of them. */
static void compact(mb_state *s, unsigned lanes)
{
    unsigned to = 0;
    for (unsigned from = 0; from < lanes; from++) {
        if (!s->lane[from].left) continue;
        if (from != to) lane_move(s, to, from);
        to++;
    }
    for (unsigned l = to; l < lanes; l++) {
        s->lane[l].left = s->lane[l].tail_blocks = 0;
        s->blk[l] = idle_block;
    }
}

/* Finishing every lane with scalar code costs the sum of what is left;
 * more vector calls cost call_cost per call, max-left calls. */
static int scalar_cheaper(const cckey_md5_path *path, const mb_state *s)
{
    size_t sum = 0, max = 0;
    for (unsigned l = 0; l < path->lanes; l++) {
        if (!s->lane[l].left) continue;   /* idle: its other fields mean nothing */
        size_t r = s->lane[l].left + s->lane[l].tail_blocks;
        sum += r;
        if (r > max) max = r;
    }
    return sum * 16 <= (size_t)path->call_cost16 * max;
}

static void drain_scalar(mb_state *s, unsigned lanes, uint8_t (*out)[CCKEY_MD5_DIGEST])
{
    for (unsigned l = 0; l < lanes; l++) {
        mb_lane *ln = &s->lane[l];
        if (!ln->left) continue;
        uint32_t state[4];
        for (int w = 0; w < 4; w++) state[w] = s->st[w][l];
        cckey_md5_compress_scalar(state, ln->p, ln->left);
        if (ln->tail_blocks) cckey_md5_compress_scalar(state, s->tail[l], ln->tail_blocks);
        cckey_md5_store(out[ln->msg], state);
    }
}

static void mb_general(const cckey_md5_path *path, const cckey_msg *msgs, size_t n,
                       uint8_t (*out)[CCKEY_MD5_DIGEST])
{
    mb_state s;
    unsigned lanes = path->lanes, active = 0;
    size_t next = 0;
    /* Zero once; from then on each lane clears only what it dirtied. */
    memset(s.tail, 0, lanes * sizeof s.tail[0]);
    for (unsigned l = 0; l < lanes; l++) {
        s.lane[l].dirty = 0;
        if (next < n) {
            lane_start(&s, l, &msgs[next], next);
            next++;
            active++;
        } else {
            s.lane[l].left = s.lane[l].tail_blocks = 0;
            s.blk[l] = idle_block;
        }
    }
    while (active) {
        if (next == n) {
            if (path->narrow && active <= path->narrow->lanes) {
                compact(&s, lanes);
                path = path->narrow;
                lanes = path->lanes;
                continue;
            }
            if (scalar_cheaper(path, &s)) {
                drain_scalar(&s, lanes, out);
                return;
            }
        }
        path->kernel(s.st, s.blk);
        for (unsigned l = 0; l < lanes; l++) {
            mb_lane *ln = &s.lane[l];
            if (!ln->left) continue;
            if (--ln->left) {
                s.blk[l] = ln->p += CCKEY_MD5_BLOCK;
                continue;
            }
            if (ln->tail_blocks) {
                s.blk[l] = ln->p = s.tail[l];
                ln->left = ln->tail_blocks;
                ln->tail_blocks = 0;
                continue;
            }
            lane_store(&s, l, out[ln->msg]);
            if (next < n) {
                lane_start(&s, l, &msgs[next], next);
                next++;
            } else {
                s.blk[l] = idle_block;
                active--;
            }
        }
    }
}

/* Messages of at most 55 bytes are one padded block each, and those of at
 * most 119 bytes two: a kernel call's worth of either needs none of the
 * per-lane walking above, only a whole padded copy per lane, the IV and the
 * digests. Short-key workloads are mostly these (names, devices, options,
 * one-line sources). */
#define SINGLE_MAX (CCKEY_MD5_BLOCK - 9)
#define DOUBLE_MAX (2 * CCKEY_MD5_BLOCK - 9)

/* Padded blocks of a message that fits in two: 1, 2, or 0 (longer). */
static inline unsigned tail_class(size_t len)
{
    return len <= SINGLE_MAX ? 1 : len <= DOUBLE_MAX ? 2 : 0;
}

/* A message of 56..119 bytes and its padding into tail, two blocks. dirty[0]
 * and dirty[1] say what the lane's last message left in each block (as
 * cckey_md5_pad_into's *dirty); both are cleared here as needed. */
static inline void pad_whole(uint8_t tail[3 * CCKEY_MD5_BLOCK], const cckey_msg *m, size_t *dirty)
{
    if (m->len < CCKEY_MD5_BLOCK) {
        /* 56..63 bytes: the pad runs into block 1, whose bytes up to the
         * length field must be zero again. */
        if (dirty[1]) cckey_md5_zero_small(tail + CCKEY_MD5_BLOCK, dirty[1]);
        dirty[1] = 0;
        cckey_md5_pad_into(tail, m->ptr, m->len, m->len, dirty);
        return;
    }
    /* 64..119 bytes: the first block whole, the rest as a one-block tail. */
    size_t rem = m->len - CCKEY_MD5_BLOCK;
    memcpy(tail, m->ptr, CCKEY_MD5_BLOCK);
    *dirty = CCKEY_MD5_BLOCK - 8;   /* block 0 is all message now */
    size_t d2 = dirty[1];
    cckey_md5_pad_into(tail + CCKEY_MD5_BLOCK, m->ptr + CCKEY_MD5_BLOCK, rem, m->len, &d2);
    dirty[1] = d2;
}

static void mb_short(const cckey_md5_path *path, const cckey_msg *msgs, size_t n, unsigned blocks,
                     uint8_t (*out)[CCKEY_MD5_DIGEST])
{
    mb_state s;
    unsigned lanes = path->lanes;
    /* Per lane, what the last message left behind in each half of its tail
     * (see cckey_md5_pad_into), so that only that is cleared. */
    size_t dirty[CCKEY_MD5_MAX_LANES][2];
    /* Three blocks per lane: a one-block tail for the second half's pad
     * needs its own zeroed bytes 64..119, which tail[l] + 64 has. */
    _Alignas(64) uint8_t tails[CCKEY_MD5_MAX_LANES][3 * CCKEY_MD5_BLOCK];
    memset(tails, 0, lanes * sizeof tails[0]);
    for (unsigned l = 0; l < lanes; l++) dirty[l][0] = dirty[l][1] = 0;
    for (size_t i = 0; i + lanes <= n; i += lanes) {
        for (unsigned l = 0; l < lanes; l++) {
            if (blocks == 1) cckey_md5_pad_into(tails[l], msgs[i + l].ptr, msgs[i + l].len, msgs[i + l].len, &dirty[l][0]);
            else pad_whole(tails[l], &msgs[i + l], dirty[l]);
            s.blk[l] = tails[l];
        }
        for (int w = 0; w < 4; w++)
            for (unsigned l = 0; l < lanes; l++) s.st[w][l] = cckey_md5_iv[w];
        path->kernel(s.st, s.blk);
        if (blocks == 2) {
            for (unsigned l = 0; l < lanes; l++) s.blk[l] = tails[l] + CCKEY_MD5_BLOCK;
            path->kernel(s.st, s.blk);
        }
        for (unsigned l = 0; l < lanes; l++) lane_store(&s, l, out[i + l]);
    }
}

static int by_blocks_desc(const void *a, const void *b, void *ctx)
{
    const cckey_msg *m = ctx;
    size_t x = m[*(const size_t *)a].len / CCKEY_MD5_BLOCK, y = m[*(const size_t *)b].len / CCKEY_MD5_BLOCK;
    return (x < y) - (x > y);
}

/* Longest first: lanes refill either way, but a long message started last
 * would finish alone in the drain, mostly on scalar code. Callers that
 * already sort (the CPU backend) pay one pass to find out. Returns 0 when
 * it digested the batch, -1 when the batch is sorted already (or there is
 * no memory to sort it: order only changes speed). */
static int mb_sorted(const cckey_md5_path *path, const cckey_msg *msgs, size_t n,
                     uint8_t (*out)[CCKEY_MD5_DIGEST])
{
    size_t i = 1;
    while (i < n && msgs[i].len / CCKEY_MD5_BLOCK <= msgs[i - 1].len / CCKEY_MD5_BLOCK) i++;
    if (i == n || n <= 2 * (size_t)path->lanes) return -1;
    size_t *order = malloc(n * sizeof *order);
    cckey_msg *sorted = malloc(n * sizeof *sorted);
    uint8_t (*dig)[CCKEY_MD5_DIGEST] = malloc(n * sizeof *dig);
    int r = -1;
    if (order && sorted && dig) {
        for (size_t k = 0; k < n; k++) order[k] = k;
        qsort_r(order, n, sizeof *order, by_blocks_desc, (void *)msgs);
        for (size_t k = 0; k < n; k++) sorted[k] = msgs[order[k]];
        cckey_md5_mb(path, sorted, n, dig);
        for (size_t k = 0; k < n; k++) memcpy(out[order[k]], dig[k], CCKEY_MD5_DIGEST);
        r = 0;
    }
    free(order), free(sorted), free(dig);
    return r;
}

void cckey_md5_mb(const cckey_md5_path *path, const cckey_msg *msgs, size_t n,
                  uint8_t (*out)[CCKEY_MD5_DIGEST])
{
    if (mb_sorted(path, msgs, n, out) == 0) return;
    /* Whole kernel calls of one- or two-block messages take the short
     * path; the rest, in order, the general manager. */
    size_t lanes = path->lanes, done = 0, i = 0;
    while (i < n) {
        unsigned c = tail_class(msgs[i].len);
        size_t run = i + 1;
        while (c && run < n && tail_class(msgs[run].len) == c) run++;
        size_t whole = c ? (run - i) / lanes * lanes : 0;
        if (whole) {
            if (i > done) mb_general(path, msgs + done, i - done, out + done);
            mb_short(path, msgs + i, whole, c, out + i);
            done = i + whole;
        }
        i = run;
    }
    if (n > done) mb_general(path, msgs + done, n - done, out + done);
}
