/* Output files: where -o writes, and the signals that must not leave a
 * temporary file behind.
 *
 * A regular file (or a path that does not exist yet) is replaced atomically:
 * a temporary file beside it, renamed over it on commit. Anything else (a
 * character device, a FIFO, /dev/stdout, /dev/fd/N) is written in place: a
 * rename would replace /dev/null with a regular file. A symlink is followed
 * first, so the file it points to is what gets replaced, and it stays a
 * symlink. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- signals ------------------------------------------------------------
 * The temporary file of the output in progress, for the handlers: only
 * async-signal-safe calls touch it there. pending_set is raised after the
 * name is complete and dropped before it changes. */
static char pending_tmp[PATH_MAX + 64];
static volatile sig_atomic_t pending_set;
static atomic_int mapped_files;

static void drop_pending(void)
{
    if (pending_set) unlink(pending_tmp);
}

/* SIGINT, SIGTERM, SIGHUP, SIGPIPE: remove the temporary file, then die of
 * the same signal, so that the exit status tells what happened. */
static void on_fatal(int sig)
{
    int saved = errno;
    drop_pending();
    signal(sig, SIG_DFL);
    raise(sig);   /* blocked while we run: delivered when the handler returns */
    errno = saved;
}

/* A mapped source that shrinks under us raises SIGBUS on the next read.
 * Then no key can be trusted: say so, leave no temporary output behind, and
 * exit 1 instead of dying with a bare signal. A SIGBUS while no file is
 * mapped is some other fault: it keeps its default action. */
static void on_sigbus(int sig)
{
    static const char msg[] = "cckey: a mapped file (a source, or the manifest) shrank while it was being read; "
                              "stopped, no -o file written\n";
    if (atomic_load(&mapped_files) == 0) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    drop_pending();
    ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)w;
    _exit(1);
}

static void install(int sig, void (*fn)(int))
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, NULL, &old) != 0) return;
    /* A signal the caller chose to ignore (nohup, a shell's trap '' PIPE)
     * stays ignored. */
    if (old.sa_handler == SIG_IGN) return;
    sigaction(sig, &sa, NULL);
}

static void watch_signals(void)
{
    static bool installed;
    if (installed) return;
    installed = true;
    static const int fatal[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++) install(fatal[i], on_fatal);
    install(SIGBUS, on_sigbus);
}

void cli_mapped_enter(void)
{
    watch_signals();
    atomic_fetch_add(&mapped_files, 1);
}

void cli_mapped_leave(void) { atomic_fetch_sub(&mapped_files, 1); }

/* ---- where the output goes ------------------------------------------------ */

/* The descriptor a /dev/stdout, /dev/stderr, /dev/fd/N or /proc/self/fd/N
 * path stands for, or -1. Writing through a duplicate keeps what the shell
 * set up (a pipe, a file opened for appending) instead of reopening it. */
static int fd_path(const char *path)
{
    if (strcmp(path, "/dev/stdout") == 0) return STDOUT_FILENO;
    if (strcmp(path, "/dev/stderr") == 0) return STDERR_FILENO;
    const char *n = NULL;
    if (strncmp(path, "/dev/fd/", 8) == 0) n = path + 8;
    else if (strncmp(path, "/proc/self/fd/", 14) == 0) n = path + 14;
    unsigned long fd;
    if (!n || !cli_parse_uint(n, 0, INT_MAX, &fd)) return -1;
    return (int)fd;
}

/* Follow path while it is a symlink (a dangling one included: its target is
 * what gets created). A malloc'ed path, or NULL with errno set. */
static char *follow_links(const char *path)
{
    char *cur = strdup(path);
    for (int hops = 0; cur && hops < 40; hops++) {
        struct stat st;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) return cur;
        if (fd_path(cur) >= 0) return cur;
        char target[PATH_MAX];
        ssize_t n = readlink(cur, target, sizeof target - 1);
        if (n < 0) break;
        target[n] = '\0';
        char *next;
        const char *slash = strrchr(cur, '/');
        if (target[0] == '/' || !slash) next = strdup(target);
        else if (asprintf(&next, "%.*s/%s", (int)(slash - cur), cur, target) < 0) next = NULL;
        free(cur);
        cur = next;
    }
    if (cur) errno = ELOOP;
    free(cur);
    return NULL;
}

static int fail(cli_output *o, const char *path, int err)
{
    cli_error("%s: %s", path, strerror(err));
    free(o->tmp), free(o->path);
    *o = (cli_output){0};
    return -1;
}

/* Write in place: a device, a FIFO, an inherited descriptor. */
static int open_in_place(cli_output *o, const char *shown, int fd)
{
    o->f = fdopen(fd, "w");
    if (!o->f) {
        int err = errno;
        close(fd);
        return fail(o, shown, err);
    }
    return 0;
}

/* A temporary file beside path, renamed over it on commit. */
static int open_atomic(cli_output *o, const char *shown)
{
    const char *slash = strrchr(o->path, '/');
    int dir_len = slash ? (int)(slash - o->path) : 1;
    const char *dir = slash ? o->path : ".";
    if (slash == o->path) dir_len = 1;   /* a file in "/" */
    if (asprintf(&o->tmp, "%.*s/.cckey-out.XXXXXX", dir_len, dir) < 0) {
        o->tmp = NULL;
        return fail(o, shown, ENOMEM);
    }
    watch_signals();
    /* The signals wait until the handlers know the file's name. */
    sigset_t fatal, old;
    sigemptyset(&fatal);
    sigaddset(&fatal, SIGINT), sigaddset(&fatal, SIGTERM), sigaddset(&fatal, SIGHUP), sigaddset(&fatal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &fatal, &old);
    int fd = mkstemp(o->tmp);
    int err = errno;
    if (fd >= 0 && strlen(o->tmp) < sizeof pending_tmp) {
        strcpy(pending_tmp, o->tmp);
        pending_set = 1;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (fd < 0) {
        cli_error("%s: cannot create a temporary file beside it: %s", shown, strerror(err));
        free(o->tmp), free(o->path);
        *o = (cli_output){0};
        return -1;
    }
    /* mkstemp makes 0600; a finished output gets the usual 0666 & ~umask. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    o->f = fdopen(fd, "w");
    if (!o->f) {
        int err = errno;
        close(fd);
        cli_output_abort(o);
        cli_error("%s: %s", shown, strerror(err));
        return -1;
    }
    return 0;
}

int cli_output_open(cli_output *o, const char *path)
{
    *o = (cli_output){0};
    if (!path || strcmp(path, "-") == 0) {
        o->f = stdout;
        return 0;
    }
    if (!*path) {
        cli_error("the output file name (-o) is empty; give a path, or - for standard output");
        return -1;
    }
    int fd = fd_path(path);
    if (fd >= 0) {
        o->path = strdup(path);
        if (!o->path) return fail(o, path, ENOMEM);
        int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (dup_fd < 0) return fail(o, path, errno);
        return open_in_place(o, path, dup_fd);
    }
    o->path = follow_links(path);
    if (!o->path) return fail(o, path, errno);
    struct stat st;
    if (stat(o->path, &st) != 0) {
        if (errno != ENOENT) return fail(o, path, errno);
        return open_atomic(o, path);
    }
    if (S_ISREG(st.st_mode)) return open_atomic(o, path);
    if (S_ISDIR(st.st_mode)) return fail(o, path, EISDIR);
    /* O_NOCTTY: a terminal given as -o must not become ours. A FIFO waits
     * here for its reader, as a shell redirection would. */
    fd = open(o->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return fail(o, path, errno);
    return open_in_place(o, path, fd);
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
    /* fsync only what is renamed: a device or a pipe has nothing to sync. */
    int bad = fflush(o->f) != 0 || ferror(o->f) || (o->tmp && fsync(fileno(o->f)) != 0);
    int err = errno;
    if (fclose(o->f) != 0 && !bad) bad = 1, err = errno;
    o->f = NULL;
    if (bad || (o->tmp && rename(o->tmp, o->path) != 0)) {
        if (!bad) err = errno;
        cli_error("%s: %s", o->path, strerror(err));
        cli_output_abort(o);
        return -1;
    }
    pending_set = 0;
    free(o->tmp), free(o->path);
    *o = (cli_output){0};
    return 0;
}

void cli_output_abort(cli_output *o)
{
    if (o->path) {
        if (o->f) fclose(o->f);
        if (o->tmp) unlink(o->tmp);
        pending_set = 0;
        free(o->tmp), free(o->path);
    }
    *o = (cli_output){0};
}
