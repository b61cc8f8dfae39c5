/* Read-ahead for pinned manifests (see manifest.h): a chunk's worth of a
 * regular file read by several threads at once.
 *
 * Copying the manifest out of the page cache is the largest single cost
 * of a batch of inline sources (a third of its CPU time at 4 KiB a line),
 * and read() does it on the reader thread alone while the other cores
 * wait for the chunk. pread() into disjoint parts of the buffer spreads
 * that copy over the cores; the lines are then found in place as before. */
#include "manifest.h"
#include "parallel_for.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILL_MIN ((size_t)2 << 20)     /* smaller read-aheads are one read() */
#define FILL_PIECE ((size_t)1 << 20)   /* what one thread reads at a time: its newlines are found while it is in cache */
#define FILL_PIECES (MANIFEST_PINNED_BYTES / FILL_PIECE)

typedef struct fill_piece {
    int fd;
    char *dst;
    off_t at;
    size_t len, got;
    int err;
    uint32_t base;     /* dst's offset in the buffer */
    uint32_t *nl;      /* its '\n's, as offsets in the buffer */
    size_t n_nl;
    bool indexed;      /* every '\n' of the piece is in nl */
} fill_piece;

/* The newlines of a piece, up to one per 16 bytes on average: a piece of
 * mostly blank lines is left to memchr rather than indexed at 4 bytes each. */
static void index_piece(fill_piece *p)
{
    size_t most = p->got / 16 + 1;
    if (!(p->nl = malloc(most * sizeof *p->nl))) return;
    for (const char *q = p->dst, *end = p->dst + p->got; (q = memchr(q, '\n', (size_t)(end - q))); q++) {
        if (p->n_nl == most) return;
        p->nl[p->n_nl++] = p->base + (uint32_t)(q - p->dst);
    }
    p->indexed = true;
}

static void read_piece(void *arg, size_t i)
{
    fill_piece *p = &((fill_piece *)arg)[i];
    while (p->got < p->len) {
        ssize_t n = pread(p->fd, p->dst + p->got, p->len - p->got, p->at + (off_t)p->got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) p->err = errno;
        if (n <= 0) break;
        p->got += (size_t)n;
    }
    if (!p->err) index_piece(p);
}

/* The pieces' newlines, in order, as the manifest's index of
 * buf[from, ...) up to the first piece not indexed whole. */
static void keep_index(manifest *m, fill_piece *pieces, size_t n, size_t from)
{
    size_t total = 0, covered = from, k = 0;
    for (; k < n && pieces[k].indexed; k++) total += pieces[k].n_nl, covered += pieces[k].got;
    m->nl_n = m->nl_next = m->nl_from = m->nl_to = 0;
    if (total > m->nl_cap) {
        uint32_t *nl = realloc(m->nl, total * sizeof *nl);
        if (!nl) return;   /* memchr does without */
        m->nl = nl;
        m->nl_cap = total;
    }
    for (size_t i = 0; i < k; i++) memcpy(m->nl + m->nl_n, pieces[i].nl, pieces[i].n_nl * sizeof *m->nl), m->nl_n += pieces[i].n_nl;
    m->nl_from = from;
    m->nl_to = covered;
}

/* A mapped window holds the bytes already: its newlines are found on all
 * threads, which also takes the page faults side by side. */
static void index_piece_only(void *arg, size_t i)
{
    index_piece(&((fill_piece *)arg)[i]);
}

static void index_window(manifest *m, size_t want, unsigned threads)
{
    if (want > m->end - m->start) want = m->end - m->start;
    if (want > MANIFEST_PINNED_BYTES) want = MANIFEST_PINNED_BYTES;
    if (want < FILL_MIN || m->start + want >= UINT32_MAX) return;
    fill_piece pieces[FILL_PIECES];
    size_t n = 0;
    for (size_t done = 0; done < want; done += FILL_PIECE, n++) {
        size_t len = want - done < FILL_PIECE ? want - done : FILL_PIECE;
        pieces[n] = (fill_piece){.dst = m->buf + m->start + done, .len = len, .got = len,
                                 .base = (uint32_t)(m->start + done)};
    }
    cli_parallel_for(n, threads, index_piece_only, pieces);
    keep_index(m, pieces, n, m->start);
    for (size_t i = 0; i < n; i++) free(pieces[i].nl);
}

int manifest_fill(manifest *m, size_t want, unsigned threads, char *err, size_t err_len)
{
    struct stat st;
    int fd = fileno(m->f);
    if (!m->pinned || (m->eof && !m->mapped) || threads < 2) return 0;
    if (m->mapped) {
        index_window(m, want, threads);
        return 0;
    }
    if (want <= m->end - m->start || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    want -= m->end - m->start;   /* what is unread is there already */
    if (!m->buf) {
        if (!(m->buf = malloc(MANIFEST_PINNED_BYTES))) return 0;   /* read() will say it */
        m->cap = MANIFEST_PINNED_BYTES;
    }
    if (want > m->cap - m->end) want = m->cap - m->end;
    if (want > MANIFEST_PINNED_BYTES) want = MANIFEST_PINNED_BYTES;
    off_t at = lseek(fd, 0, SEEK_CUR);
    if (want < FILL_MIN || at < 0 || m->end + want >= UINT32_MAX) return 0;
    fill_piece pieces[FILL_PIECES];
    size_t n = 0;
    for (size_t done = 0; done < want; done += FILL_PIECE, n++) {
        size_t len = want - done < FILL_PIECE ? want - done : FILL_PIECE;
        pieces[n] = (fill_piece){.fd = fd, .dst = m->buf + m->end + done, .at = at + (off_t)done, .len = len,
                                 .base = (uint32_t)(m->end + done)};
    }
    cli_parallel_for(n, threads, read_piece, pieces);
    /* Bytes count up to the first short piece: past it (the end of the
     * file, or a file that shrank) nothing read is contiguous. */
    size_t total = 0, used = 0;
    int rc = 0;
    while (used < n) {
        const fill_piece *p = &pieces[used++];
        if (p->err) {
            snprintf(err, err_len, "%s: read error: %s", m->label, strerror(p->err));
            rc = -1;
            break;
        }
        total += p->got;
        if (p->got < p->len) break;
    }
    if (!rc && lseek(fd, at + (off_t)total, SEEK_SET) < 0) {
        snprintf(err, err_len, "%s: seek error: %s", m->label, strerror(errno));
        rc = -1;
    }
    if (!rc) {
        keep_index(m, pieces, used, m->end);
        m->end += total;
    }
    for (size_t i = 0; i < n; i++) free(pieces[i].nl);
    return rc;
}
