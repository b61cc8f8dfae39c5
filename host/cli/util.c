/* Errors, numbers, atomic output files and mapped input files. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
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

bool cli_parse_uint(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
    if (!s || !*s || *s == '-' || *s == '+') return false;
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

/* A mapped source that shrinks under us raises SIGBUS on the next read.
 * Then no key can be trusted: say so, leave no temporary output behind, and
 * exit 1 instead of dying with a bare signal. Only async-signal-safe calls. */
static char pending_tmp[4096];

static void on_sigbus(int sig)
{
    (void)sig;
    static const char msg[] = "cckey: a source file shrank while it was being read; stopped, no -o file written\n";
    if (pending_tmp[0]) unlink(pending_tmp);
    ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)w;
    _exit(1);
}

static void watch_sigbus(void)
{
    static bool installed;
    if (installed) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigbus;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);
    installed = true;
}

int cli_output_open(cli_output *o, const char *path)
{
    watch_sigbus();
    *o = (cli_output){0};
    if (!path || strcmp(path, "-") == 0) {
        o->f = stdout;
        return 0;
    }
    o->path = strdup(path);
    char *dir_copy = strdup(path);
    if (!o->path || !dir_copy) {
        free(dir_copy);
        cli_error("out of memory");
        return -1;
    }
    const char *dir = dirname(dir_copy);
    size_t n = strlen(dir) + 32;
    o->tmp = malloc(n);
    if (!o->tmp) {
        free(dir_copy);
        cli_error("out of memory");
        return -1;
    }
    snprintf(o->tmp, n, "%s/.cckey-out.XXXXXX", dir);
    free(dir_copy);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        cli_error("%s: cannot create a temporary file beside it: %s", path, strerror(errno));
        free(o->tmp), free(o->path);
        *o = (cli_output){0};
        return -1;
    }
    /* mkstemp makes 0600; a finished output gets the usual 0666 & ~umask. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    if (strlen(o->tmp) < sizeof pending_tmp) strcpy(pending_tmp, o->tmp);
    o->f = fdopen(fd, "w");
    if (!o->f) {
        close(fd);
        cli_output_abort(o);
        cli_error("%s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int cli_output_commit(cli_output *o)
{
    if (!o->path) {
        if (fflush(stdout) != 0 || ferror(stdout)) {
            cli_error("writing standard output: %s", strerror(errno));
            return -1;
        }
        return 0;
    }
    int bad = fflush(o->f) != 0 || ferror(o->f) || fsync(fileno(o->f)) != 0;
    int err = errno;
    if (fclose(o->f) != 0 && !bad) bad = 1, err = errno;
    o->f = NULL;
    if (bad || rename(o->tmp, o->path) != 0) {
        if (!bad) err = errno;
        cli_error("%s: %s", o->path, strerror(err));
        cli_output_abort(o);
        return -1;
    }
    pending_tmp[0] = '\0';
    free(o->tmp), free(o->path);
    *o = (cli_output){0};
    return 0;
}

void cli_output_abort(cli_output *o)
{
    pending_tmp[0] = '\0';
    if (o->path) {
        if (o->f) fclose(o->f);
        unlink(o->tmp);
        free(o->tmp), free(o->path);
    }
    *o = (cli_output){0};
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
    if (st.st_size == 0) {
        close(fd);
        f->ptr = "";
        return 0;
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int err = errno;
    close(fd);
    if (m == MAP_FAILED) {
        snprintf(why, why_len, "%s", strerror(err));
        return -1;
    }
    madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
    f->ptr = m;
    f->map = m;
    f->len = (size_t)st.st_size;
    return 0;
}

void cli_file_unmap(cli_file *f)
{
    if (f->map) munmap(f->map, f->len);
    *f = (cli_file){0};
}
