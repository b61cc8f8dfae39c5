/* Distinct source files of a batch run (see batch_sources.h). */
#include "batch_sources.h"
#include "cli.h"
#include "manifest/manifest.h"
#include "parallel_for.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t hash_path(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211u;
    return h ^ h >> 29;
}

static int grow_index(batch_sources *t)
{
    size_t cap = t->index_cap ? 2 * t->index_cap : 1024;
    uint32_t *index = calloc(cap, sizeof *index);
    if (!index) return -1;
    for (size_t i = 0; i < t->n; i++) {
        size_t s = t->e[i].hash & (cap - 1);
        while (index[s]) s = (s + 1) & (cap - 1);
        index[s] = (uint32_t)i + 1;
    }
    free(t->index);
    t->index = index;
    t->index_cap = cap;
    return 0;
}

size_t batch_sources_add(batch_sources *t, cckey_bytes rel)
{
    uint64_t h = hash_path(rel.ptr, rel.len);
    if (t->index_cap) {
        for (size_t s = h & (t->index_cap - 1); t->index[s]; s = (s + 1) & (t->index_cap - 1)) {
            const batch_source *e = &t->e[t->index[s] - 1];
            if (e->hash == h && e->rel_len == rel.len && memcmp(e->rel, rel.ptr, rel.len) == 0) return t->index[s] - 1;
        }
    }
    if (t->n >= UINT32_MAX - 1) return SIZE_MAX;
    if (2 * (t->n + 1) > t->index_cap && grow_index(t)) return SIZE_MAX;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 1024;
        batch_source *e = realloc(t->e, cap * sizeof *e);
        if (!e) return SIZE_MAX;
        t->e = e;
        t->cap = cap;
    }
    char *copy = malloc(rel.len + 1);
    if (!copy) return SIZE_MAX;
    memcpy(copy, rel.ptr, rel.len);
    copy[rel.len] = '\0';
    t->e[t->n] = (batch_source){.rel = copy, .rel_len = rel.len, .hash = h};
    size_t s = h & (t->index_cap - 1);
    while (t->index[s]) s = (s + 1) & (t->index_cap - 1);
    t->index[s] = (uint32_t)t->n + 1;
    return t->n++;
}

static bool set_why(batch_source *e, const char *why)
{
    e->why = strdup(why);
    if (!e->why) e->why = strdup("out of memory");
    return false;
}

/* The handle knows the digest alone: the bytes are a buffer or mapping
 * that is gone once the file is digested. */
static bool digest_bytes(batch_source *e, const void *p, size_t n)
{
    unsigned char bin[CCKEY_DIGEST_LEN];
    cckey_digest d;
    bool ok = cckey_digest_init(&d) == CCKEY_OK && cckey_digest_update(&d, p, n) == CCKEY_OK &&
              cckey_digest_final(&d, NULL, bin) == CCKEY_OK && cckey_source_new_digest(&e->src, bin) == CCKEY_OK;
    if (!ok) set_why(e, cckey_last_error());
    return ok;
}

/* Small files: read() to the end into buf (grown as needed, kept by the
 * thread). Reading to the end also gets files whose size says 0 right. */
static void read_small(batch_source *e, int fd, char **buf, size_t *cap)
{
    size_t used = 0;
    for (;;) {
        if (used == *cap) {
            size_t ncap = *cap ? 2 * *cap : 65536;
            char *b = realloc(*buf, ncap);
            if (!b) {
                set_why(e, "out of memory");
                return;
            }
            *buf = b;
            *cap = ncap;
        }
        ssize_t got = read(fd, *buf + used, *cap - used);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            set_why(e, strerror(errno));
            return;
        }
        if (got == 0) break;
        used += (size_t)got;
    }
    digest_bytes(e, *buf, used);
}

static void digest_one(const batch_sources *t, batch_source *e, char **buf, size_t *cap)
{
    char *path = manifest_join_path(t->base_dir, (cckey_bytes){e->rel, e->rel_len});
    if (!path) {
        set_why(e, "out of memory");
        return;
    }
    char why[256];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);   /* a FIFO must not block */
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        set_why(e, strerror(errno));
    } else if (S_ISDIR(st.st_mode)) {
        set_why(e, "is a directory");
    } else if (!S_ISREG(st.st_mode)) {
        set_why(e, "is not a regular file");
    } else if ((size_t)st.st_size <= BATCH_SOURCES_READ_MAX) {
        read_small(e, fd, buf, cap);
    } else {
        cli_file f;
        if (cli_file_map(path, &f, why, sizeof why) != 0) set_why(e, why);
        else {
            digest_bytes(e, f.ptr, f.len);
            cli_file_unmap(&f);
        }
    }
    if (fd >= 0) close(fd);
    free(path);
}

typedef struct digest_work {
    batch_sources *t;
    size_t from;
} digest_work;

static void digest_range(void *ctx, size_t begin, size_t end)
{
    digest_work *w = ctx;
    char *buf = NULL;
    size_t cap = 0;
    for (size_t i = begin; i < end; i++) digest_one(w->t, &w->t->e[w->from + i], &buf, &cap);
    free(buf);
}

void batch_sources_digest(batch_sources *t, unsigned threads)
{
    digest_work w = {t, t->digested};
    cli_parallel_ranges(t->n - t->digested, 8, threads, digest_range, &w);
    t->digested = t->n;
}

void batch_sources_free(batch_sources *t)
{
    for (size_t i = 0; i < t->n; i++) free(t->e[i].rel), free(t->e[i].why), cckey_source_free(t->e[i].src);
    free(t->e);
    free(t->index);
    memset(t, 0, sizeof *t);
}
