/* A folder's running counters in a bounded set of files, as ccache keeps
 * its statistics: DIR/stats/0 .. DIR/stats/15, each "NAME VALUE" lines
 * under a "# cckey counters 1" line. A writer picks a file by its pid,
 * takes the file's fcntl lock (DIR/stats/N.lock: a lock that works over
 * NFS and that the kernel drops when its holder dies), adds its counts and
 * renames the new file over the old one; a reader sums the files without
 * locks and sees each file's old totals or its new ones, never half. At
 * most 16 counter files, 16 lock files and 16 temporary files exist,
 * whatever the number of processes.
 *
 * The files of older cckey versions, DIR/stats/HOST-PID (one per process)
 * and DIR/remote-stats, are folded into a counter file by the first writer
 * that finds them, and removed: each is claimed by a rename first, so two
 * writers never fold one file twice. */
#include "store_internal.h"
#include "../core/internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HEADER "# cckey counters 1\n"
#define ZEROED "zeroed_at"
#define MAX_FILE (64u << 10)   /* a counter file holds a few hundred bytes */

/* How long a writer waits for its file's lock when every file is busy
 * (the holder of a lock keeps it for one small read and rename). A
 * holder that is stopped or stuck costs this once; the counts are then
 * dropped, never a look-up. */
#define LOCK_WAIT_MS 1000

bool cckey_tally_add(cckey_tally *t, const char *name, uint64_t v)
{
    if (strcmp(name, ZEROED) == 0) {   /* a time, not a count: the latest zeroing wins */
        if ((int64_t)v > t->zeroed) t->zeroed = (int64_t)v;
        return true;
    }
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->names[i], name) == 0) {
            t->values[i] += v;
            return true;
        }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        char **names = realloc(t->names, cap * sizeof *names);
        if (names) t->names = names;
        uint64_t *values = names ? realloc(t->values, cap * sizeof *values) : NULL;
        if (!values) return false;
        t->values = values, t->cap = cap;
    }
    if (!(t->names[t->n] = strdup(name))) return false;
    t->values[t->n++] = v;
    return true;
}

uint64_t cckey_tally_get(const cckey_tally *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->names[i], name) == 0) return t->values[i];
    return 0;
}

void cckey_tally_free(cckey_tally *t)
{
    for (size_t i = 0; i < t->n; i++) free(t->names[i]);
    free(t->names);
    free(t->values);
    *t = (cckey_tally){0};
}

/* A name as this file writes them: printable, no blanks, not too long. */
static bool name_ok(const char *p, size_t n)
{
    if (!n || n > 600) return false;
    for (size_t i = 0; i < n; i++)
        if (!isgraph((unsigned char)p[i])) return false;
    return true;
}

/* One "NAME VALUE" line into t; false when it is no such line. */
static bool parse_line(cckey_tally *t, const char *line, size_t len)
{
    const char *sp = memchr(line, ' ', len);
    if (!sp || !name_ok(line, (size_t)(sp - line))) return false;
    const char *v = sp + 1, *end = line + len;
    if (v == end || end - v > 20) return false;
    uint64_t n = 0;
    for (const char *p = v; p < end; p++) {
        if (!isdigit((unsigned char)*p) || n > (UINT64_MAX - 9) / 10) return false;
        n = n * 10 + (uint64_t)(*p - '0');
    }
    char name[608];
    memcpy(name, line, (size_t)(sp - line));
    name[sp - line] = '\0';
    return cckey_tally_add(t, name, n);
}

/* The good lines of text into t (prefix added to each name); false when
 * some line was not good (a damaged file: what could be read is kept). */
static bool parse_text(cckey_tally *t, const char *text, size_t len, const char *prefix)
{
    bool ok = true;
    char line[640];
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        bool good = nl != NULL && n + strlen(prefix) < sizeof line;
        if (good) {
            snprintf(line, sizeof line, "%s%.*s", prefix, (int)n, text + at);
            good = parse_line(t, line, strlen(line));
        }
        ok = ok && good;
        at += n + 1;
    }
    return ok;
}

/* The file's text (NUL-terminated; at most MAX_FILE bytes), or NULL. */
static char *slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return NULL;
    struct stat st;
    char *text = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (text = malloc(MAX_FILE + 1))) {
        ssize_t n = pread(fd, text, MAX_FILE, 0);
        *len = n > 0 ? (size_t)n : 0;
        text[*len] = '\0';
    }
    close(fd);
    return text;
}

/* A counter file into t; false when it is there but damaged. */
static bool read_counter_file(cckey_tally *t, const char *path)
{
    size_t len = 0;
    char *text = slurp(path, &len);
    if (!text) return errno == ENOENT;
    size_t h = strlen(HEADER);
    bool ok = len >= h && memcmp(text, HEADER, h) == 0;
    ok = parse_text(t, text + (ok ? h : 0), len - (ok ? h : 0), "") && ok;
    free(text);
    return ok;
}

/* An older version's file into t: "hits N" lines (prefix "" for the
 * per-process files, "remote." for remote-stats). */
static bool read_old_file(cckey_tally *t, const char *path, const char *prefix)
{
    size_t len = 0;
    char *text = slurp(path, &len);
    if (!text) return errno == ENOENT;
    bool ok = parse_text(t, text, len, prefix);
    free(text);
    return ok;
}

/* 0 .. 15: a counter file; -1: a lock, a temporary file or the like;
 * -2: an older version's per-process file. */
static int file_kind(const char *name)
{
    if (name[0] == '.' || strchr(name, '.')) return -1;
    char *end;
    long i = strtol(name, &end, 10);
    if (isdigit((unsigned char)name[0]) && !*end && i >= 0 && i < CCKEY_COUNTER_FILES) return (int)i;
    return strchr(name, '-') ? -2 : -1;
}

void cckey_counters_read(const char *dir, cckey_tally *t)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/remote-stats", dir);
    if (!read_old_file(t, path, "remote.")) t->damaged++;
    snprintf(path, sizeof path, "%s/stats", dir);
    DIR *d = opendir(path);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        int kind = file_kind(e->d_name);
        if (kind == -1) continue;
        snprintf(path, sizeof path, "%s/stats/%s", dir, e->d_name);
        if (!(kind >= 0 ? read_counter_file(t, path) : read_old_file(t, path, ""))) t->damaged++;
    }
    closedir(d);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Counter file i's lock: its descriptor, or -1 (busy past wait_ms, or no
 * lock file can be made: a read-only folder). */
static int lock_file(const char *dir, int i, int wait_ms)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/stats/%d.lock", dir, i);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd < 0) return -1;
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    int64_t until = now_ms() + wait_ms;
    while (fcntl(fd, F_SETLK, &fl) != 0) {
        if ((errno != EACCES && errno != EAGAIN && errno != EINTR) || now_ms() >= until) {
            close(fd);
            return -1;
        }
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    return fd;   /* closing it drops the lock */
}

/* One of the counter files locked: the pid's own if it is free, else any
 * free one, else the pid's own after waiting. *which receives its number. */
static int lock_some(const char *dir, int *which)
{
    int first = (int)(getpid() % CCKEY_COUNTER_FILES);
    for (int k = 0; k < CCKEY_COUNTER_FILES; k++) {
        int i = (first + k) % CCKEY_COUNTER_FILES, fd = lock_file(dir, i, 0);
        if (fd >= 0) return *which = i, fd;
    }
    *which = first;
    return lock_file(dir, first, LOCK_WAIT_MS);
}

/* t as a counter file's text; NULL when out of memory. */
static char *format_tally(const cckey_tally *t, size_t *len)
{
    size_t cap = strlen(HEADER) + 64;
    for (size_t i = 0; i < t->n; i++) cap += strlen(t->names[i]) + 24;
    char *text = malloc(cap);
    if (!text) return NULL;
    int n = snprintf(text, cap, HEADER "%s %lld\n", ZEROED, (long long)t->zeroed);
    for (size_t i = 0; i < t->n; i++)
        n += snprintf(text + n, cap - (size_t)n, "%s %llu\n", t->names[i], (unsigned long long)t->values[i]);
    *len = (size_t)n;
    return text;
}

/* Replace counter file i with t (the lock held). */
static bool write_counter_file(const char *dir, int i, const cckey_tally *t)
{
    char path[4300], tmp[4300];
    snprintf(path, sizeof path, "%s/stats/%d", dir, i);
    snprintf(tmp, sizeof tmp, "%s/stats/.tmp-%d", dir, i);   /* one per file: only its lock's holder writes it */
    size_t len;
    char *text = format_tally(t, &len);
    int fd = text ? open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666) : -1;
    bool ok = fd >= 0 && cckey_entry_write_all(fd, text, len);
    if (fd >= 0) ok = close(fd) == 0 && ok;
    free(text);
    if (ok && rename(tmp, path) == 0) return true;
    /* An empty folder in a counter file's place is repaired. */
    if (ok && (errno == EISDIR || errno == ENOTEMPTY || errno == EEXIST) && rmdir(path) == 0 && rename(tmp, path) == 0)
        return true;
    unlink(tmp);
    return false;
}

typedef struct claimed {
    char from[8][4300], to[8][4300];
    int n;
} claimed;

/* Claim an older version's file (rename it out of readers' sight) and
 * add it to t; false when another writer claimed it first. */
static bool claim(claimed *c, const char *from, const char *dir, const char *name, cckey_tally *t,
                  const char *prefix)
{
    if (c->n == 8) return false;   /* the rest wait for the next writer */
    snprintf(c->to[c->n], sizeof c->to[0], "%s/stats/.fold-%ld-%d-%s", dir, (long)getpid(), c->n, name);
    if (rename(from, c->to[c->n]) != 0) return false;
    snprintf(c->from[c->n], sizeof c->from[0], "%s", from);
    read_old_file(t, c->to[c->n], prefix);   /* a damaged one gives what it can */
    c->n++;
    return true;
}

/* Fold up to 8 of the older version's files into t. */
static void claim_old(const char *dir, claimed *c, cckey_tally *t)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/remote-stats", dir);
    claim(c, path, dir, "remote-stats", t, "remote.");
    snprintf(path, sizeof path, "%s/stats", dir);
    DIR *d = opendir(path);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) && c->n < 8;) {
        if (file_kind(e->d_name) != -2) continue;
        snprintf(path, sizeof path, "%s/stats/%s", dir, e->d_name);
        claim(c, path, dir, e->d_name, t, "");
    }
    closedir(d);
}

/* The claimed files: removed once their counts are in a counter file,
 * else put back for the next writer. */
static void release_old(claimed *c, bool folded)
{
    for (int i = 0; i < c->n; i++)
        if (folded ? unlink(c->to[i]) != 0 : rename(c->to[i], c->from[i]) != 0) unlink(c->to[i]);
}

static bool make_stats_dir(const char *dir)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/stats", dir);
    return mkdir(path, 0777) == 0 || errno == EEXIST;
}

bool cckey_counters_add(const char *dir, const cckey_tally *add)
{
    int i;
    int fd = make_stats_dir(dir) ? lock_some(dir, &i) : -1;
    if (fd < 0) return false;
    char path[4300];
    snprintf(path, sizeof path, "%s/stats/%d", dir, i);
    cckey_tally t = {0};
    read_counter_file(&t, path);   /* a damaged file keeps what can be read, and is rewritten whole */
    bool ok = true;
    for (size_t k = 0; k < add->n; k++) ok = cckey_tally_add(&t, add->names[k], add->values[k]) && ok;
    claimed c = {.n = 0};
    claim_old(dir, &c, &t);
    ok = ok && write_counter_file(dir, i, &t);
    release_old(&c, ok);
    cckey_tally_free(&t);
    close(fd);
    return ok;
}

cckey_status cckey_counters_zero(const char *dir)
{
    if (!make_stats_dir(dir)) return cckey_fail(CCKEY_ERR_IO, "%s/stats: %s", dir, strerror(errno));
    cckey_tally t = {.zeroed = (int64_t)time(NULL)};
    int failed = 0;
    for (int i = 0; i < CCKEY_COUNTER_FILES; i++) {
        int fd = lock_file(dir, i, LOCK_WAIT_MS);
        if (fd < 0 || !write_counter_file(dir, i, &t)) failed++;
        if (fd >= 0) close(fd);
    }
    /* The older version's files are counts from before now: dropped. */
    cckey_tally old = {0};
    claimed c = {.n = 0};
    do {
        c.n = 0;
        claim_old(dir, &c, &old);
        release_old(&c, true);
    } while (c.n == 8);
    cckey_tally_free(&old);
    if (failed) return cckey_fail(CCKEY_ERR_IO, "%s/stats: %d of %d counter files could not be zeroed (locked or "
                                  "not writable)", dir, failed, CCKEY_COUNTER_FILES);
    return CCKEY_OK;
}
