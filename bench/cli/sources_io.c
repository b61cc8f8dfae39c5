/* Small source files: read() into one reused buffer against mmap, the two
 * ways cckey batch can digest a source_file (host/cli/batch_sources.c).
 * Each pass opens, reads or maps, digests (public API), and closes every
 * file of a set; the files are in the page cache (one untimed pass first),
 * as they are for a manifest that names each file on many lines. Both
 * modes must give the same digests. Best of REPS passes, one thread.
 *
 * Usage: cckey_bench_sources_io [FILES [REPS]]   (default 1000 files, 9) */
#include "cckey.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int digest(const void *p, size_t n, char hex[CCKEY_HEX_LEN + 1])
{
    cckey_source *s = NULL;
    int ok = cckey_source_new(&s, (cckey_bytes){p, n}, CCKEY_SOURCE_BORROW) == CCKEY_OK &&
             cckey_source_digest(hex, s) == CCKEY_OK;
    cckey_source_free(s);
    return ok ? 0 : -1;
}

/* One file by read() to its end into *buf (grown, kept). */
static int by_read(const char *path, char **buf, size_t *cap, char hex[CCKEY_HEX_LEN + 1])
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) return -1;
    size_t used = 0;
    for (ssize_t got;; used += (size_t)got) {
        if (used == *cap) {
            *cap = *cap ? 2 * *cap : 65536;
            if (!(*buf = realloc(*buf, *cap))) return -1;
        }
        if ((got = read(fd, *buf + used, *cap - used)) <= 0) break;
    }
    close(fd);
    return digest(*buf, used, hex);
}

/* One file mapped for its digest and unmapped at once. */
static int by_mmap(const char *path, char hex[CCKEY_HEX_LEN + 1])
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) return -1;
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return -1;
    int rc = digest(p, (size_t)st.st_size, hex);
    munmap(p, (size_t)st.st_size);
    return rc;
}

int main(int argc, char **argv)
{
    size_t files = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000, reps = argc > 2 ? strtoul(argv[2], NULL, 10) : 9;
    static const size_t sizes[] = {1024, 4096, 16384, 65536, 262144, 1048576};
    char dir[] = "/tmp/cckey-sources-io-XXXXXX";
    if (!files || !reps || !mkdtemp(dir)) return 2;
    char *data = malloc(sizes[5]), *buf = NULL;
    char (*hex)[2][CCKEY_HEX_LEN + 1] = calloc(files, sizeof *hex);
    size_t cap = 0;
    char path[256];
    int rc = 0;
    for (size_t i = 0; i < sizes[5]; i++) data[i] = (char)("abcdefghij {}();\n"[(i * 7 + i / 13) % 17]);
    printf("%zu files a set, best of %zu passes, page cache warm, one thread\n", files, reps);
    printf("%-9s %12s %12s %10s %10s %12s\n", "size", "read_us/file", "mmap_us/file", "read_MB/s", "mmap_MB/s", "mmap/read");
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes && !rc; z++) {
        for (size_t f = 0; f < files; f++) {
            snprintf(path, sizeof path, "%s/f%zu", dir, f);
            data[0] = (char)f, data[1] = (char)(f >> 8);   /* distinct files */
            FILE *o = fopen(path, "wb");
            if (!o || fwrite(data, 1, sizes[z], o) != sizes[z] || fclose(o) != 0) rc = 1;
        }
        double best[2] = {1e9, 1e9};
        for (size_t r = 0; r <= reps && !rc; r++) {
            for (int mode = 0; mode < 2; mode++) {
                double t = now();
                for (size_t f = 0; f < files && !rc; f++) {
                    snprintf(path, sizeof path, "%s/f%zu", dir, f);
                    rc = mode ? by_mmap(path, hex[f][1]) : by_read(path, &buf, &cap, hex[f][0]);
                }
                t = now() - t;
                if (r && t < best[mode]) best[mode] = t;   /* pass 0 warms the cache */
            }
            for (size_t f = 0; f < files && !rc; f++)
                if (strcmp(hex[f][0], hex[f][1]) != 0) {
                    fprintf(stderr, "digests differ for %zu bytes\n", sizes[z]);
                    rc = 1;
                }
        }
        if (!rc)
            printf("%-9zu %12.2f %12.2f %10.0f %10.0f %11.2fx\n", sizes[z], 1e6 * best[0] / (double)files,
                   1e6 * best[1] / (double)files, (double)(files * sizes[z]) / best[0] / 1e6,
                   (double)(files * sizes[z]) / best[1] / 1e6, best[1] / best[0]);
    }
    for (size_t f = 0; f < files; f++) {
        snprintf(path, sizeof path, "%s/f%zu", dir, f);
        unlink(path);
    }
    rmdir(dir);
    free(data), free(buf), free(hex);
    return rc;
}
