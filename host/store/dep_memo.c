/* Header digests, remembered per run: re-checking the dependencies of a
 * large suite reads each header once. A remembered digest is used only while
 * the file's path, size, modification time and inode are what they were when
 * it was read. */
#include "store_internal.h"
#include "../core/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct memo_slot {
    char *path;          /* NULL: empty */
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    uint8_t md5[16];
} memo_slot;

struct cckey_dep_memo {
    pthread_mutex_t lock;
    memo_slot *slots;
    size_t cap, used;    /* cap: a power of two */
};

cckey_status cckey_dep_memo_new(cckey_dep_memo **out)
{
    if (!out) return cckey_fail(CCKEY_ERR_INVALID_ARG, "out is NULL");
    cckey_dep_memo *m = calloc(1, sizeof *m);
    if (!m || !(m->slots = calloc(m->cap = 256, sizeof *m->slots))) {
        free(m);
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
    }
    pthread_mutex_init(&m->lock, NULL);
    *out = m;
    return CCKEY_OK;
}

void cckey_dep_memo_free(cckey_dep_memo *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->cap; i++) free(m->slots[i].path);
    free(m->slots);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

static size_t hash_path(const char *p)
{
    size_t h = 1469598103934665603u;
    for (; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211u;
    return h;
}

/* The slot of path, or the empty one where it would go. Lock held. */
static memo_slot *slot_of(cckey_dep_memo *m, const char *path)
{
    for (size_t i = hash_path(path) & (m->cap - 1);; i = (i + 1) & (m->cap - 1))
        if (!m->slots[i].path || strcmp(m->slots[i].path, path) == 0) return &m->slots[i];
}

static bool same_file(const memo_slot *e, const struct stat *st)
{
    return e->dev == st->st_dev && e->ino == st->st_ino && e->size == st->st_size &&
           e->mtime.tv_sec == st->st_mtim.tv_sec && e->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

static bool recall(cckey_dep_memo *m, const char *path, const struct stat *st, uint8_t md5[16])
{
    if (!m) return false;
    pthread_mutex_lock(&m->lock);
    memo_slot *e = slot_of(m, path);
    bool hit = e->path && same_file(e, st);
    if (hit) memcpy(md5, e->md5, 16);
    pthread_mutex_unlock(&m->lock);
    return hit;
}

static void grow(cckey_dep_memo *m)
{
    memo_slot *old = m->slots;
    size_t old_cap = m->cap;
    memo_slot *slots = calloc(old_cap * 2, sizeof *slots);
    if (!slots) return;   /* stays at this size: the memo only gets slower */
    m->slots = slots, m->cap = old_cap * 2;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].path) *slot_of(m, old[i].path) = old[i];
    free(old);
}

static void remember(cckey_dep_memo *m, const char *path, const struct stat *st, const uint8_t md5[16])
{
    if (!m) return;
    pthread_mutex_lock(&m->lock);
    if (2 * (m->used + 1) > m->cap) grow(m);
    memo_slot *e = slot_of(m, path);
    if (!e->path && 2 * (m->used + 1) <= m->cap && (e->path = strdup(path))) m->used++;
    if (e->path) {
        e->dev = st->st_dev, e->ino = st->st_ino, e->size = st->st_size, e->mtime = st->st_mtim;
        memcpy(e->md5, md5, 16);
    }
    pthread_mutex_unlock(&m->lock);
}

/* The whole file open on fd, NUL-terminated. */
static char *slurp(int fd, size_t size, size_t *got)
{
    char *buf = malloc(size + 1);
    size_t n = 0;
    while (buf) {
        if (n == size) {
            char *more = realloc(buf, size * 2 + 64);   /* grew while read */
            if (!more) break;
            buf = more, size = size * 2 + 63;
        }
        ssize_t r = read(fd, buf + n, size - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) break;
        if (r == 0) {
            buf[n] = '\0';
            *got = n;
            return buf;
        }
        n += (size_t)r;
    }
    free(buf);
    return NULL;
}

cckey_status cckey_dep_read(cckey_dep_memo *m, const char *root, const char *rel, size_t rel_len,
                            cckey_file_digest *out, char **content)
{
    memset(out, 0, sizeof *out);
    if (content) *content = NULL;
    char path[4096];
    int n = root ? snprintf(path, sizeof path, "%s/%.*s", root, (int)rel_len, rel)
                 : snprintf(path, sizeof path, "%.*s", (int)rel_len, rel);
    if (n < 0 || (size_t)n >= sizeof path) return cckey_fail(CCKEY_ERR_IO, "%.*s: path too long", (int)rel_len, rel);
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) return CCKEY_OK;   /* absent */
        return cckey_fail(CCKEY_ERR_IO, "%s: %s", path, strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) return CCKEY_OK;   /* a folder is not a header: as the compiler sees it */
    out->exists = true;
    out->size = (uint64_t)st.st_size;
    if (!content && recall(m, path, &st, out->md5)) return CCKEY_OK;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat fst;
    if (fd < 0 || fstat(fd, &fst) != 0) {
        int err = errno;
        if (fd >= 0) close(fd);
        return cckey_fail(CCKEY_ERR_IO, "%s: %s", path, strerror(err));
    }
    size_t got = 0;
    char *buf = slurp(fd, (size_t)fst.st_size, &got);
    close(fd);
    if (!buf) return cckey_fail(CCKEY_ERR_IO, "%s: cannot read it", path);
    out->size = got;
    cckey_md5(buf, got, out->md5);
    /* Remembered under the state seen before the read: an edit during the
     * read changes mtime, so the next look-up reads the file again. */
    if ((uint64_t)fst.st_size == got) remember(m, path, &fst, out->md5);
    if (content) *content = buf;
    else free(buf);
    return CCKEY_OK;
}
