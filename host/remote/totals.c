/* The folder's running remote counters, DIR/remote-stats: one "name value"
 * line per counter. Each closing handle adds its own under flock, so
 * concurrent warms add up instead of overwriting each other. */
#include "remote.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

static const char *const names[] = {"hits", "misses", "errors", "puts", "bytes_in", "bytes_out"};
enum { N_COUNTERS = 6 };

static uint64_t *field(cckey_remote_counters *c, int i)
{
    uint64_t *f[N_COUNTERS] = {&c->hits, &c->misses, &c->errors, &c->puts, &c->bytes_in, &c->bytes_out};
    return f[i];
}

static void parse(const char *text, cckey_remote_counters *out)
{
    memset(out, 0, sizeof *out);
    for (const char *p = text; *p;) {
        char name[32];
        uint64_t v;
        if (sscanf(p, "%31s %" SCNu64, name, &v) == 2)
            for (int i = 0; i < N_COUNTERS; i++)
                if (strcmp(name, names[i]) == 0) *field(out, i) = v;
        const char *nl = strchr(p, '\n');
        if (!nl) break;
        p = nl + 1;
    }
}

static void read_fd(int fd, cckey_remote_counters *out)
{
    char text[1024];
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    parse(text, out);
}

void cckey_remote_totals_add(const char *dir, const cckey_remote_counters *c)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/remote-stats", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd < 0) return;   /* counters are best effort: a read-only folder keeps none */
    if (flock(fd, LOCK_EX) == 0) {
        cckey_remote_counters t;
        read_fd(fd, &t);
        char text[1024];
        int len = 0;
        for (int i = 0; i < N_COUNTERS; i++)
            len += snprintf(text + len, sizeof text - (size_t)len, "%s %" PRIu64 "\n", names[i],
                            *field(&t, i) + *field((cckey_remote_counters *)c, i));
        if (pwrite(fd, text, (size_t)len, 0) == len && ftruncate(fd, len) == 0) {}
        flock(fd, LOCK_UN);
    }
    close(fd);
}

void cckey_remote_totals_read(const char *dir, cckey_remote_counters *out)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/remote-stats", dir);
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return;
    if (flock(fd, LOCK_SH) == 0) read_fd(fd, out);
    close(fd);
}
