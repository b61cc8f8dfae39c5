/* In-flight claims on builds; see claims.h. */
#include "claims.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Locks that belong to the open file, not the process: two threads of one
 * warm never share a claim, and closing another descriptor of the file
 * cannot drop one (as it would a classic POSIX record lock). */
#ifdef F_OFD_SETLK
#define CLAIM_SETLK F_OFD_SETLK
#else
#define CLAIM_SETLK F_SETLK
#endif

void warm_claims_init(warm_claims *c, const char *store_dir)
{
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    snprintf(c->owner, sizeof c->owner, "%s %ld\n", host, (long)getpid());
    int n = snprintf(c->dir, sizeof c->dir, "%s/claims", store_dir);
    c->off = n < 0 || (size_t)n >= sizeof c->dir || (mkdir(c->dir, 0777) != 0 && errno != EEXIST);
}

/* 0 locked, 1 held by another, -1 no locks here. */
static int lock_now(int fd)
{
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(fd, CLAIM_SETLK, &fl) == 0) return 0;
    return errno == EAGAIN || errno == EACCES ? 1 : -1;
}

/* The lock is on the file at the path, not on one a finished owner
 * removed after this process opened it. */
static bool still_there(int fd, const char *path)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static void read_owner(int fd, char *owner, size_t len)
{
    if (!owner || !len) return;
    ssize_t n = pread(fd, owner, len - 1, 0);
    owner[n > 0 ? n : 0] = '\0';
    owner[strcspn(owner, "\n")] = '\0';
    if (!*owner) snprintf(owner, len, "another process");
}

warm_claim_result warm_claim_try(warm_claims *c, const char *id, warm_claim *out, char *owner, size_t owner_len)
{
    out->fd = -1;
    if (c->off) return WARM_CLAIM_OFF;
    int n = snprintf(out->path, sizeof out->path, "%s/%s", c->dir, id);
    if (n < 0 || (size_t)n >= sizeof out->path) return WARM_CLAIM_OFF;
    for (int tries = 0; tries < 100; tries++) {
        int fd = open(out->path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0) return WARM_CLAIM_OFF;
        int l = lock_now(fd);
        if (l < 0) {
            close(fd);
            return WARM_CLAIM_OFF;
        }
        if (l > 0) {
            read_owner(fd, owner, owner_len);
            close(fd);
            return WARM_CLAIM_BUSY;
        }
        if (still_there(fd, out->path)) {
            /* Ours, fresh or taken over from an owner that died. */
            /* The text only names the owner in others' messages: a
             * failed write costs nothing. */
            if (ftruncate(fd, 0) == 0) {
                ssize_t w = pwrite(fd, c->owner, strlen(c->owner), 0);
                (void)w;
            }
            out->fd = fd;
            return WARM_CLAIM_TAKEN;
        }
        close(fd);   /* released and removed while we opened it: again */
    }
    return WARM_CLAIM_OFF;
}

warm_claim_result warm_claim_wait(warm_claims *c, const char *id, warm_claim *out)
{
    for (;;) {
        warm_claim_result r = warm_claim_try(c, id, out, NULL, 0);
        if (r != WARM_CLAIM_BUSY) return r;
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

void warm_claim_release(warm_claim *cl)
{
    if (cl->fd < 0) return;
    unlink(cl->path);
    close(cl->fd);
    cl->fd = -1;
}
