/* cckey_remote_bench: entries moved through a store with a remote cache
 * under it, through the public API only (bench/remote.py runs it against
 * real servers next to redis-benchmark and curl).
 *
 *   put:  a store with the remote: N entries stored (each to the folder and
 *         the remote)
 *   get:  a fresh store with the same remote: N look-ups, each a remote hit
 *         checked and copied into the folder; every payload is compared with
 *         what was put
 *   local: the same N puts into a folder with no remote, for scale
 *   fetch: the get phase through a read-only handle: each entry checked in
 *         memory as a get checks it and handed over, nothing written (the
 *         remote transfer alone, with cckey's checks)
 *
 * Prints one CSV line per phase: phase,jobs,entries,payload_bytes,seconds,
 * cpu_seconds (this process's user + system time in the phase; the servers'
 * is not in it). $PHASES (default "lpg") picks phases to run, for profiling
 * one alone: l local, p put, g get, f fetch (g and f need p in the same
 * run). Usage: URL DIR_LOCAL DIR_PUT DIR_GET ENTRIES SIZE; fetch reads
 * through DIR_GET/ro, a folder that never exists. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* pthread_setname_np */
#endif
#include "cckey_store.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

typedef struct bench {
    cckey_store *store;
    size_t n, size;
    char (*keys)[CCKEY_KEY_LEN + 1];
    uint8_t *data;   /* the payloads, made before the clock starts */
    atomic_size_t next;
    atomic_int failures;
    int phase;   /* 0 put, 1 get (also fetch's) */
} bench;

static void payload(size_t i, size_t size, uint8_t *out)
{
    uint64_t x = 0x9e3779b97f4a7c15u * (i + 1);
    for (size_t k = 0; k < size; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        out[k] = (uint8_t)x;
    }
}

static void *worker(void *arg)
{
    bench *b = arg;
    /* A name of their own, so that a profile can keep the workers apart
     * from main's payload making (perf report --comm rb-worker). */
    pthread_setname_np(pthread_self(), "rb-worker");
    for (size_t i; (i = atomic_fetch_add(&b->next, 1)) < b->n;) {
        const uint8_t *want = b->data + i * b->size;
        if (b->phase == 0) {
            if (cckey_store_put(b->store, b->keys[i], want, b->size) != CCKEY_OK) atomic_fetch_add(&b->failures, 1);
            continue;
        }
        void *got;
        size_t len;
        if (cckey_store_get(b->store, b->keys[i], &got, &len) != CCKEY_OK) {
            atomic_fetch_add(&b->failures, 1);
            continue;
        }
        if (len != b->size || memcmp(got, want, len) != 0) atomic_fetch_add(&b->failures, 1);
        cckey_store_free_buffer(got);
    }
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static void warn(void *user, const char *msg)
{
    (void)user;
    fprintf(stderr, "cckey_remote_bench: warning: %s\n", msg);
}

/* One phase on a fresh handle of dir (with url unless NULL). */
static int phase(const char *name, int which, const char *dir, const char *url, bench *b, unsigned jobs)
{
    bool ro = which == 2;
    if ((ro ? cckey_store_open_read_only(&b->store, dir) : cckey_store_open(&b->store, dir, 0)) != CCKEY_OK) {
        fprintf(stderr, "cckey_remote_bench: %s: %s\n", dir, cckey_last_error());
        return 1;
    }
    cckey_remote_settings set = {.warn = warn};
    if (url && cckey_store_add_remote(b->store, url, &set) != CCKEY_OK) {
        fprintf(stderr, "cckey_remote_bench: %s\n", cckey_last_error());
        cckey_store_close(b->store);
        return 1;
    }
    b->phase = which ? 1 : 0;
    atomic_store(&b->next, 0);
    atomic_store(&b->failures, 0);
    pthread_t th[64];
    double t0 = now(), c0 = cpu_seconds();
    for (unsigned i = 0; i < jobs; i++) pthread_create(&th[i], NULL, worker, b);
    for (unsigned i = 0; i < jobs; i++) pthread_join(th[i], NULL);
    double dt = now() - t0, cpu = cpu_seconds() - c0;
    cckey_remote_counters c;
    cckey_store_remote_counters(b->store, 1, &c);
    cckey_store_close(b->store);
    int bad = atomic_load(&b->failures);
    if (bad || (url && (c.errors || (which >= 1 && c.hits != b->n)))) {
        fprintf(stderr, "cckey_remote_bench: %s: %d failures, %llu remote errors, %llu hits\n", name, bad,
                (unsigned long long)c.errors, (unsigned long long)c.hits);
        return 1;
    }
    printf("%s,%u,%zu,%zu,%.6f,%.6f\n", name, jobs, b->n, b->n * b->size, dt, cpu);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: cckey_remote_bench URL DIR_LOCAL DIR_PUT DIR_GET ENTRIES SIZE (jobs: $JOBS, default 1)\n");
        return 2;
    }
    const char *url = argv[1];
    bench b = {.n = strtoul(argv[5], NULL, 10), .size = strtoul(argv[6], NULL, 10)};
    const char *j = getenv("JOBS");
    unsigned jobs = j ? (unsigned)atoi(j) : 1;
    if (!b.n || !b.size || jobs < 1 || jobs > 64) return 2;
    b.keys = malloc(b.n * sizeof *b.keys);
    b.data = malloc(b.n * b.size);
    if (!b.keys || !b.data) return 1;
    for (size_t i = 0; i < b.n; i++) payload(i, b.size, b.data + i * b.size);
    /* Distinct keys per run, so a remote's earlier contents never count. */
    char source[64];
    snprintf(source, sizeof source, "bench %ld", (long)time(NULL) ^ (long)now());
    for (size_t i = 0; i < b.n; i++) {
        char name[32];
        snprintf(name, sizeof name, "k%zu", i);
        cckey_make_key(b.keys[i], (cckey_bytes){"bench", 5}, (cckey_bytes){name, strlen(name)},
                       (cckey_bytes){source, strlen(source)}, NULL, 0);
    }
    const char *only = getenv("PHASES");
    if (!only) only = "lpgf";
    char ro_dir[4096];
    snprintf(ro_dir, sizeof ro_dir, "%s/ro", argv[4]);
    int rc = (strchr(only, 'l') && phase("local", 0, argv[2], NULL, &b, jobs)) ||
             (strchr(only, 'p') && phase("put", 0, argv[3], url, &b, jobs)) ||
             (strchr(only, 'g') && phase("get", 1, argv[4], url, &b, jobs)) ||
             (strchr(only, 'f') && phase("fetch", 2, ro_dir, url, &b, jobs));
    free(b.keys), free(b.data);
    return rc;
}
