/* Line ends of a mapped manifest window found on all threads (see
 * manifest.h, manifest_index_lines).
 *
 * The first pass over a window's bytes is the search for line ends, and it
 * is also where each page is first touched (its fault, its trip from
 * memory). Done by the reader thread alone, it was the longest serial step
 * of a batch of inline sources; split into 1 MiB pieces, it runs on every
 * core, and the reader then takes line ends from the index. */
#include "manifest.h"
#include "../parallel_for.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define INDEX_MIN ((size_t)2 << 20)     /* less is left to the reader's memchr */
#define INDEX_PIECE ((size_t)1 << 20)   /* what one thread takes at a time */
#define INDEX_PIECES (MANIFEST_PINNED_BYTES / INDEX_PIECE)

typedef struct index_piece {
    const char *at;
    size_t len;
    uint32_t base;     /* at's offset in the window */
    uint32_t *nl;      /* its '\n's, as offsets in the window */
    size_t n_nl;
    bool whole;        /* every '\n' of the piece is in nl */
} index_piece;

/* The newlines of a piece, up to one per 16 bytes on average: a piece of
 * mostly blank lines is left to memchr rather than indexed at 4 bytes each. */
static void index_one(void *arg, size_t i)
{
    index_piece *p = &((index_piece *)arg)[i];
    size_t most = p->len / 16 + 1;
    if (!(p->nl = malloc(most * sizeof *p->nl))) return;
    for (const char *q = p->at, *end = p->at + p->len; (q = memchr(q, '\n', (size_t)(end - q))); q++) {
        if (p->n_nl == most) return;
        p->nl[p->n_nl++] = p->base + (uint32_t)(q - p->at);
    }
    p->whole = true;
}

/* The pieces' newlines, in order, as the manifest's index of
 * buf[from, ...) up to the first piece not indexed whole. */
static void keep_index(manifest *m, const index_piece *pieces, size_t n, size_t from)
{
    size_t total = 0, covered = from, k = 0;
    for (; k < n && pieces[k].whole; k++) total += pieces[k].n_nl, covered += pieces[k].len;
    m->nl_n = m->nl_next = m->nl_from = m->nl_to = 0;
    if (total > m->nl_cap) {
        uint32_t *nl = realloc(m->nl, total * sizeof *nl);
        if (!nl) return;   /* memchr does without */
        m->nl = nl;
        m->nl_cap = total;
    }
    for (size_t i = 0; i < k; i++) {
        memcpy(m->nl + m->nl_n, pieces[i].nl, pieces[i].n_nl * sizeof *m->nl);
        m->nl_n += pieces[i].n_nl;
    }
    m->nl_from = from;
    m->nl_to = covered;
}

void manifest_index_lines(manifest *m, size_t want, unsigned threads)
{
    if (!m->mapped || threads < 2) return;
    if (want > m->end - m->start) want = m->end - m->start;
    if (want > MANIFEST_PINNED_BYTES) want = MANIFEST_PINNED_BYTES;
    if (want < INDEX_MIN || m->start + want >= UINT32_MAX) return;
    index_piece pieces[INDEX_PIECES];
    size_t n = 0;
    for (size_t done = 0; done < want; done += INDEX_PIECE, n++) {
        size_t len = want - done < INDEX_PIECE ? want - done : INDEX_PIECE;
        pieces[n] = (index_piece){.at = m->buf + m->start + done, .len = len, .base = (uint32_t)(m->start + done)};
    }
    cli_parallel_for(n, threads, index_one, pieces);
    keep_index(m, pieces, n, m->start);
    for (size_t i = 0; i < n; i++) free(pieces[i].nl);
}
