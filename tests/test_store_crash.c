/* The store under fire: writers killed with SIGKILL at each stage of a write
 * and at random moments, and several processes writing and reading one
 * folder at once. The property throughout: whatever a look-up returns is a
 * complete payload that some writer put, and no damaged entry ever exists
 * under an entry's name (verify removes nothing). */
#include "support.h"
#include "store/store_internal.h"
#include "testing/testing.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char dir[64];

static void make_dir(void) { cr_assert(cckey_test_make_dir(dir, "crash")); }
static void remove_tree(void) { cr_assert(cckey_test_remove_tree(dir), "%s", dir); }

TestSuite(crash, .init = make_dir, .fini = remove_tree);

static void key_of(char key[CCKEY_KEY_LEN + 1], int i)
{
    char name[32];
    snprintf(name, sizeof name, "k%d", i);
    cckey_test_ref_key(key, (cckey_bytes){"dev", 3}, (cckey_bytes){name, strlen(name)}, (cckey_bytes){"src", 3},
                       NULL, 0);
}

/* A payload that describes itself: 8 bytes of seed, then seed-derived
 * bytes, its length also derived from the seed. */
static uint8_t *make_payload(uint64_t seed, size_t max_len, size_t *len)
{
    uint64_t st = seed;
    *len = 8 + cckey_test_below(&st, max_len);
    uint8_t *p = malloc(*len);
    memcpy(p, &seed, 8);
    cckey_test_fill(&st, p + 8, *len - 8);
    return p;
}

static bool payload_ok(const void *buf, size_t len, size_t max_len)
{
    if (len < 8) return false;
    uint64_t seed;
    memcpy(&seed, buf, 8);
    size_t want_len;
    uint8_t *want = make_payload(seed, max_len, &want_len);
    bool ok = want_len == len && memcmp(want, buf, len) == 0;
    free(want);
    return ok;
}

static int hook_stage, hook_fd;

static void stop_here(int stage)
{
    if (stage != hook_stage) return;
    char c = '!';
    if (write(hook_fd, &c, 1) != 1) _exit(3);
    for (;;) pause();
}

/* Kill a writer at `stage` of a put that replaces "old" with a 3 MiB payload. */
static void kill_at(int stage)
{
    cckey_store *s;
    cr_assert_eq(cckey_store_open(&s, dir, 0), CCKEY_OK);
    char key[CCKEY_KEY_LEN + 1];
    key_of(key, stage);
    cr_assert_eq(cckey_store_put(s, key, "old", 3), CCKEY_OK);
    size_t len;
    uint8_t *big = make_payload(42, 3u << 20, &len);
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t child = fork();
    cr_assert_neq(child, -1);
    if (child == 0) {
        hook_stage = stage, hook_fd = fds[1];
        cckey_testing_store_stages(stop_here);
        cckey_store_put(s, key, big, len);
        _exit(2);   /* the hook never let it finish */
    }
    char c;
    cr_assert_eq(read(fds[0], &c, 1), 1, "the writer never reached stage %d", stage);
    kill(child, SIGKILL);
    int status;
    waitpid(child, &status, 0);
    cr_assert(WIFSIGNALED(status));
    close(fds[0]), close(fds[1]);

    void *buf;
    size_t got;
    cr_assert_eq(cckey_store_get(s, key, &buf, &got), CCKEY_OK, "stage %d: %s", stage, cckey_last_error());
    if (stage == CCKEY_STORE_STAGE_RENAMED) {
        cr_assert_eq(got, len);
        cr_assert_eq(memcmp(buf, big, len), 0);
    } else {
        cr_assert_eq(got, 3, "stage %d served a partial write", stage);
        cr_assert_eq(memcmp(buf, "old", 3), 0);
    }
    cckey_store_free_buffer(buf);
    cckey_store_usage u;
    cr_assert_eq(cckey_store_stats(s, &u), CCKEY_OK);
    cr_assert_eq(u.temp_files, stage == CCKEY_STORE_STAGE_RENAMED ? 0 : 1);
    cckey_store_report r;
    cr_assert_eq(cckey_store_verify(s, &r), CCKEY_OK);
    cr_assert_eq(r.removed, 0);
    cr_assert_eq(r.ok, 1);
    cr_assert_eq(r.temps_removed, u.temp_files, "a dead writer's temporary file stayed");
    free(big);
    cckey_store_close(s);
}

Test(crash, killed_after_open) { kill_at(CCKEY_STORE_STAGE_OPENED); }
Test(crash, killed_mid_payload) { kill_at(CCKEY_STORE_STAGE_CHUNK); }
Test(crash, killed_after_fsync_before_rename) { kill_at(CCKEY_STORE_STAGE_SYNCED); }
Test(crash, killed_after_rename) { kill_at(CCKEY_STORE_STAGE_RENAMED); }

Test(crash, killed_at_random_moments)
{
    enum { ROUNDS = 12, MAX_LEN = 4u << 20 };
    cckey_store *s;
    cr_assert_eq(cckey_store_open(&s, dir, 0), CCKEY_OK);
    char key[CCKEY_KEY_LEN + 1];
    key_of(key, 100);
    uint64_t rng = (uint64_t)time(NULL);
    size_t served = 0, missed = 0;
    for (int round = 0; round < ROUNDS; round++) {
        uint64_t first = cckey_test_rand(&rng);
        pid_t child = fork();
        cr_assert_neq(child, -1);
        if (child == 0) {
            for (uint64_t seed = first;; seed++) {
                size_t len;
                uint8_t *p = make_payload(seed, MAX_LEN, &len);
                cckey_store_put(s, key, p, len);
                free(p);
            }
        }
        usleep((useconds_t)cckey_test_below(&rng, 40000));
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        void *buf;
        size_t len;
        cckey_status st = cckey_store_get(s, key, &buf, &len);
        cr_assert(st == CCKEY_OK || st == CCKEY_ERR_NOT_FOUND, "round %d: %s (%s)", round, cckey_strerror(st),
                  cckey_last_error());
        if (st == CCKEY_OK) {
            cr_assert(payload_ok(buf, len, MAX_LEN), "round %d served a payload no writer wrote", round);
            served++;
        } else {
            missed++;
        }
        cckey_store_free_buffer(buf);
        cckey_store_report r;
        cr_assert_eq(cckey_store_verify(s, &r), CCKEY_OK);
        cr_assert_eq(r.removed, 0, "round %d left a damaged entry", round);
    }
    cr_log_info("random kills: %zu served, %zu misses", served, missed);
    cckey_store_close(s);
}

/* Several processes put and get the same few keys, some with a size limit
 * small enough to evict under the others' feet. */
Test(crash, concurrent_processes_share_a_folder)
{
    enum { PROCS = 4, ROUNDS = 120, KEYS = 12, MAX_LEN = 20000 };
    pid_t kids[PROCS];
    for (int p = 0; p < PROCS; p++) {
        kids[p] = fork();
        cr_assert_neq(kids[p], -1);
        if (kids[p]) continue;
        cckey_store *s;
        if (cckey_store_open(&s, dir, p % 2 ? 6 * MAX_LEN : 0) != CCKEY_OK) _exit(10);
        uint64_t rng = 1000 + (uint64_t)p;
        for (int i = 0; i < ROUNDS; i++) {
            char key[CCKEY_KEY_LEN + 1];
            key_of(key, (int)cckey_test_below(&rng, KEYS));
            if (cckey_test_below(&rng, 2)) {
                size_t len;
                uint8_t *pl = make_payload(cckey_test_rand(&rng), MAX_LEN, &len);
                cckey_status st = cckey_store_put(s, key, pl, len);
                free(pl);
                if (st != CCKEY_OK) _exit(11);
            } else {
                void *buf;
                size_t len;
                cckey_status st = cckey_store_get(s, key, &buf, &len);
                if (st == CCKEY_OK && !payload_ok(buf, len, MAX_LEN)) _exit(12);
                if (st != CCKEY_OK && st != CCKEY_ERR_NOT_FOUND) _exit(13);
                cckey_store_free_buffer(buf);
            }
        }
        cckey_store_close(s);
        _exit(0);
    }
    for (int p = 0; p < PROCS; p++) {
        int status;
        waitpid(kids[p], &status, 0);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "process %d: status %d", p,
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    uint64_t ok;
    cckey_store *s = cckey_test_open_sound(dir, &ok);
    cr_assert(s, "the racing writers left damage or temporary files");
    cr_assert_gt(ok, 0);
    cckey_store_close(s);
}

/* Entries copied in from a remote are renamed in without fsync (layered.c):
 * a machine that stops before the data reaches the disk may leave the file
 * short, zeroed or with a lost block under the entry's name. Each such file
 * must be a miss that removes it, never a payload; and bytes that arrive
 * damaged are refused before anything is written. */
typedef void (*tear_fn)(uint8_t *entry, size_t *n);

static void cut_to_zero(uint8_t *e, size_t *n) { (void)e, *n = 0; }
static void cut_in_header(uint8_t *e, size_t *n) { (void)e, *n = 100; }
static void header_only(uint8_t *e, size_t *n) { (void)e, *n = CCKEY_ENTRY_HEADER; }
static void cut_last_byte(uint8_t *e, size_t *n) { (void)e, *n -= 1; }
static void cut_at_half(uint8_t *e, size_t *n) { (void)e, *n /= 2; }
static void all_zero(uint8_t *e, size_t *n) { memset(e, 0, *n); }
static void payload_zero(uint8_t *e, size_t *n) { memset(e + CCKEY_ENTRY_HEADER, 0, *n - CCKEY_ENTRY_HEADER); }
static void lost_block(uint8_t *e, size_t *n) { memset(e + 8192, 0, 4096), (void)n; }
static void last_block_zero(uint8_t *e, size_t *n) { memset(e + *n - 4096, 0, 4096); }

static const tear_fn tears[] = {cut_to_zero, cut_in_header, header_only,  cut_last_byte,  cut_at_half,
                                all_zero,    payload_zero,  lost_block,   last_block_zero};

/* key's entry file in the folder of store s: a put's, n bytes. */
static uint8_t *entry_of(cckey_store *s, const char *key, const void *payload, size_t len, size_t *n)
{
    cr_assert_eq(cckey_store_put(s, key, payload, len), CCKEY_OK);
    void *e;
    cr_assert_eq(cckey_store_read_entry(s, key, &e, n), CCKEY_OK);
    cr_assert_eq(*n, CCKEY_ENTRY_HEADER + len);
    return e;
}

Test(crash, torn_installed_entry_is_a_miss_never_a_payload)
{
    enum { LEN = 100 * 1024 };
    uint8_t *payload = malloc(LEN);
    uint64_t st = 7;
    cckey_test_fill(&st, payload, LEN);
    char src[128], dst[128], key[CCKEY_KEY_LEN + 1], path[512];
    snprintf(src, sizeof src, "%s/src", dir);
    snprintf(dst, sizeof dst, "%s/dst", dir);
    cckey_store *a, *b;
    cr_assert_eq(cckey_store_open(&a, src, 0), CCKEY_OK);
    cr_assert_eq(cckey_store_open(&b, dst, 0), CCKEY_OK);
    for (size_t t = 0; t < sizeof tears / sizeof *tears; t++) {
        key_of(key, (int)t);
        size_t n;
        uint8_t *good = entry_of(a, key, payload, LEN, &n);
        /* Installed whole, then torn on disk as a crash could leave it. */
        size_t at = 0;
        cr_assert_eq(cckey_store_install(b, key, good, n, &at, NULL), CCKEY_OK);
        cr_assert_eq(at, CCKEY_ENTRY_HEADER);
        uint8_t *torn = malloc(n);
        memcpy(torn, good, n);
        size_t tn = n;
        tears[t](torn, &tn);
        cckey_test_entry_path(path, sizeof path, dst, key);
        cr_assert(cckey_test_write_file(path, torn, tn));
        void *got = NULL;
        size_t len = 0;
        cr_assert_neq(cckey_store_get(b, key, &got, &len), CCKEY_OK, "tear %zu served", t);
        cr_assert_null(got);
        cr_assert_eq(access(path, F_OK), -1, "tear %zu: the torn file stays", t);
        /* The same damage in the bytes received: refused, nothing written. */
        cr_assert_neq(cckey_store_install(b, key, torn, tn, NULL, NULL), CCKEY_OK, "tear %zu installed", t);
        cr_assert_eq(access(path, F_OK), -1, "tear %zu: written though refused", t);
        /* And the whole entry is served again, byte for byte. */
        cr_assert_eq(cckey_store_install(b, key, good, n, NULL, NULL), CCKEY_OK);
        cr_assert_eq(cckey_store_get(b, key, &got, &len), CCKEY_OK);
        cr_assert(len == LEN && memcmp(got, payload, LEN) == 0);
        cckey_store_free_buffer(got);
        free(torn);
        free(good);
    }
    cckey_store_close(a);
    cckey_store_close(b);
    free(payload);
}
