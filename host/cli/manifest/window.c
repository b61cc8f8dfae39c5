/* A pinned manifest read through windows of the file mapped read-only
 * (see manifest.h, manifest_map).
 *
 * Copying a manifest out of the page cache with read() was the largest
 * single cost of a batch of inline sources: a third of its CPU time at
 * 4 KiB a line, where `cat` alone reads the bench's 887 MB in 0.19 s. A
 * window maps the next MANIFEST_PINNED_BYTES of the file instead, and a
 * chunk takes the window whole, exactly as it takes a read() buffer: its
 * lines stay valid until the chunk gives the window back. The next window
 * starts at the page holding the first unread byte, so nothing is copied
 * at a swap either.
 *
 * A file that shrinks under a window raises SIGBUS on the next touch of a
 * lost page: the CLI's guard (cli_mapped_enter, output.c) turns that into a
 * clear error and exit 1, as for mapped source files. */
#include "manifest.h"
#include "window.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

/* The file's size now, or -1. */
static off_t file_size(const manifest *m)
{
    struct stat st;
    return fstat(fileno(m->f), &st) == 0 ? st.st_size : -1;
}

/* Make the window from file offset pos (the first unread byte) on, at
 * least want bytes of the file when there are that many (buf[start] is
 * pos), and drop the old one into *old, *old_cap. 0, or -1 with nothing
 * changed. */
static int window_at(manifest *m, uint64_t pos, size_t want, char **old, size_t *old_cap)
{
    off_t now = file_size(m);
    if (now < 0) return -1;
    /* Cut below the first unread byte: an empty window there, at the end,
     * where the reader finds the file shorter than when it was opened. */
    uint64_t size = (uint64_t)now < pos ? pos : (uint64_t)now;
    uint64_t at = pos - pos % page_size();
    size_t len = want + (size_t)(pos - at);
    if (size < at + len) len = (size_t)(size - at);
    void *p = NULL;
    if (len > (size_t)(pos - at)) {   /* else nothing is left: an empty window at the end */
        p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fileno(m->f), (off_t)at);
        if (p == MAP_FAILED) return -1;
        cli_mapped_enter();
    } else {
        len = 0;
    }
    *old = m->buf;
    *old_cap = m->cap;
    m->buf = p;
    m->cap = len;
    m->map_at = at;
    m->start = m->map_start = (size_t)(pos - at);
    m->end = len > m->start ? len : m->start;
    m->eof = size <= at + m->end;
    m->nl_n = m->nl_next = m->nl_from = m->nl_to = 0;   /* offsets into the old window */
    return 0;
}

bool manifest_map(manifest *m)
{
    struct stat st;
    if (!m->pinned || m->buf || fstat(fileno(m->f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
        return false;
    /* Only from the start of the file: nothing read() took goes missing. */
    if (lseek(fileno(m->f), 0, SEEK_CUR) != 0) return false;
    m->mapped = true;
    char *none;
    size_t none_cap;
    if (window_at(m, 0, MANIFEST_PINNED_BYTES, &none, &none_cap) != 0) {
        m->mapped = false;
        m->start = m->end = 0;
        m->eof = false;
        return false;
    }
    return true;
}

void manifest_buffer_free(const manifest *m, char *buf, size_t cap)
{
    if (!buf) return;
    if (!m->mapped) {
        free(buf);
        return;
    }
    munmap(buf, cap);
    cli_mapped_leave();
}

int manifest_window_more(manifest *m)
{
    off_t size = file_size(m);
    if (size < 0) return -1;
    if ((uint64_t)size <= m->map_at + m->end) {   /* all of the file is in the window */
        m->eof = true;
        return 0;
    }
    /* Lines were handed out: the caller takes the window. Not start > 0:
     * a window begins at a page boundary, so a fresh one's start is the
     * unread byte's place in its page, and a long line that is not the
     * first would be handed back to the caller, remapped at the same place,
     * for ever (6f74adb). */
    if (m->start > m->map_start) return MANIFEST_FULL;
    /* One line fills the window (or the file grew): a larger one at the same place. */
    size_t want = 2 * (m->end - m->start), most = m->max_line + 2 + MANIFEST_PINNED_BYTES;
    if (want < MANIFEST_PINNED_BYTES) want = MANIFEST_PINNED_BYTES;
    if (want > most) want = most;
    char *old;
    size_t old_cap;
    if (window_at(m, m->map_at + m->start, want, &old, &old_cap) != 0) return -1;
    manifest_buffer_free(m, old, old_cap);
    return 0;
}

int manifest_window_swap(manifest *m, char **buf, size_t *cap)
{
    char *old;
    size_t old_cap;
    if (window_at(m, m->map_at + m->start, MANIFEST_PINNED_BYTES, &old, &old_cap) != 0) return -1;
    manifest_buffer_free(m, *buf, *cap);   /* the spare: windows are not reused */
    *buf = old;
    *cap = old_cap;
    return 0;
}
