/* Errors, numbers and input files. */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static void vreport(const char *kind, const char *fmt, va_list ap)
{
    cli_progress_interrupt();
    fprintf(stderr, "cckey: %s", kind);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("", fmt, ap);
    va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
    if (cli_quiet) return;
    va_list ap;
    va_start(ap, fmt);
    vreport("warning: ", fmt, ap);
    va_end(ap);
}

bool cli_parse_size(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    uint64_t v;
    if (cckey_size_parse(s, &v) != CCKEY_OK || v < lo || v > hi) return false;
    *out = v;
    return true;
}

bool cli_parse_uint(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
    /* strtoul would skip leading blanks (and take a sign): " 1/2" was a
     * shard while "1/2 " was not. Digits only, first to last. */
    if (!s || !isdigit((unsigned char)*s)) return false;
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

/* The largest file read as a stream (its size unknown in advance). */
#define STREAM_MAX ((size_t)1 << 30)

/* Read fd to its end into a malloc'ed buffer: for files whose st_size says
 * nothing about their content (/proc/cpuinfo reports 0) or that cannot be
 * mapped. */
static int read_stream(int fd, cli_file *f, char *why, size_t why_len)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            snprintf(why, why_len, "out of memory");
            return -1;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            snprintf(why, why_len, "%s", errno == EAGAIN ? "no data to read (it would block)" : strerror(errno));
            free(buf);
            return -1;
        }
        if (got == 0) break;
        n += (size_t)got;
        if (n == cap) {
            if (cap >= STREAM_MAX) {
                snprintf(why, why_len, "reports no size and holds more than %zu bytes", STREAM_MAX);
                free(buf);
                return -1;
            }
            char *b = realloc(buf, cap *= 2);
            if (!b) free(buf);
            buf = b;
        }
    }
    f->ptr = buf;
    f->heap = buf;
    f->len = n;
    return 0;
}

int cli_file_map(const char *path, cli_file *f, char *why, size_t why_len)
{
    *f = (cli_file){0};
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
     * writer forever before the regular-file check below could refuse it. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        snprintf(why, why_len, "%s", strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(why, why_len, "%s", strerror(errno));
        close(fd);
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(why, why_len, "is a directory");
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, why_len, "is not a regular file");
        close(fd);
        return -1;
    }
    /* st_size 0 is no proof of emptiness (/proc, /sys): read to the end. */
    void *m = st.st_size == 0 ? MAP_FAILED : mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int err = errno;
    if (m == MAP_FAILED && (st.st_size == 0 || err == ENODEV || err == EINVAL || err == EACCES)) {
        int rc = read_stream(fd, f, why, why_len);
        close(fd);
        if (rc == 0 && f->len == 0) f->ptr = "";
        return rc;
    }
    close(fd);
    if (m == MAP_FAILED) {
        snprintf(why, why_len, "%s", strerror(err));
        return -1;
    }
    madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
    cli_mapped_enter();
    f->ptr = m;
    f->map = m;
    f->len = (size_t)st.st_size;
    return 0;
}

void cli_file_unmap(cli_file *f)
{
    if (f->map) {
        munmap(f->map, f->len);
        cli_mapped_leave();
    }
    free(f->heap);
    *f = (cli_file){0};
}

void cli_put_log(const char *log)
{
    const char *p = log;
    int lines = 0;
    while (*p && lines < 40) {
        size_t n = strcspn(p, "\n");
        if (n || p[n]) fprintf(stderr, "    | %.*s\n", (int)n, p);
        p += n + (p[n] == '\n');
        lines++;
    }
    if (*p) fprintf(stderr, "    | ... (log cut after 40 lines)\n");
}
