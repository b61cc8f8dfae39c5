/* Bump allocation from a kept buffer (see scratch.h). */
#include "scratch.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN ((size_t)64)

static size_t round_up(size_t n) { return (n + ALIGN - 1) & ~(ALIGN - 1); }

static void *alloc_extra(cckey_scratch *s, size_t bytes)
{
    if (s->n_extra == s->extra_cap) {
        size_t cap = s->extra_cap ? 2 * s->extra_cap : 16;
        void **e = realloc(s->extra, cap * sizeof *e);
        if (!e) return NULL;
        s->extra = e;
        s->extra_cap = cap;
    }
    void *p = NULL;
    if (posix_memalign(&p, ALIGN, bytes ? bytes : 1) != 0) return NULL;
    s->extra[s->n_extra++] = p;
    return p;
}

void *cckey_scratch_alloc(cckey_scratch *s, size_t bytes)
{
    if (bytes > SIZE_MAX - ALIGN) return NULL;
    size_t r = round_up(bytes ? bytes : 1);
    s->need = s->need > SIZE_MAX - r ? SIZE_MAX : s->need + r;
    if (s->buf && r <= s->cap - s->used) {
        void *p = s->buf + s->used;
        s->used += r;
        return p;
    }
    return alloc_extra(s, r);
}

void *cckey_scratch_calloc(cckey_scratch *s, size_t bytes)
{
    void *p = cckey_scratch_alloc(s, bytes);
    if (p) memset(p, 0, bytes);
    return p;
}

void cckey_scratch_reset(cckey_scratch *s)
{
    if (!s->need && !s->n_extra) return;   /* nothing since the last reset: keep its size */
    for (size_t i = 0; i < s->n_extra; i++) free(s->extra[i]);
    s->n_extra = 0;
    size_t want = s->need < CCKEY_SCRATCH_KEEP ? s->need : CCKEY_SCRATCH_KEEP;
    /* Grow to what the batch needed; shrink only a buffer far too big, so
     * that alternating batch sizes do not reallocate every time. */
    if (want > s->cap || want < s->cap / 4) {
        free(s->buf);
        s->buf = NULL;
        s->cap = 0;
        void *p = NULL;
        if (want && posix_memalign(&p, ALIGN, want) == 0) {
            s->buf = p;
            s->cap = want;
        }
    }
    s->used = s->need = 0;
}

void cckey_scratch_free(cckey_scratch *s)
{
    for (size_t i = 0; i < s->n_extra; i++) free(s->extra[i]);
    free(s->extra);
    free(s->buf);
    memset(s, 0, sizeof *s);
}
