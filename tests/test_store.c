/* The on-disk store: format (read back by hand, checksum by OpenSSL),
 * corruption and truncation, verify, clear and the size limit. */
#include "support.h"
#include "store/store_internal.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char dir[64];

static void make_dir(void) { cr_assert(cckey_test_make_dir(dir, "store")); }
static void remove_tree(const char *path) { cr_assert(cckey_test_remove_tree(path), "%s", path); }

TestSuite(store, .init = make_dir, .fini = NULL);

static cckey_store *open_store(void)
{
    cckey_store *s;
    cr_assert_eq(cckey_store_open(&s, dir, 0), CCKEY_OK);
    return s;
}

/* The end of a test: its store closed and its folder gone (a failed test
 * leaves the folder to look at). */
static void close_and_remove(cckey_store *s)
{
    cckey_store_close(s);
    remove_tree(dir);
}

static uint8_t *read_file(const char *path, size_t *len)
{
    uint8_t *buf = (uint8_t *)cckey_test_read_file(path, len);
    cr_assert_not_null(buf, "%s: %s", path, strerror(errno));
    return buf;
}

static void write_file(const char *path, const void *data, size_t len)
{
    cr_assert(cckey_test_write_file(path, data, len), "%s", path);
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

Test(store, round_trip_and_format)
{
    cckey_store *s = open_store();
    uint64_t seed = 7;
    size_t sizes[] = {0, 1, 100, (1u << 20) + 17, 3u << 20};
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
        char key[CCKEY_KEY_LEN + 1], path[512];
        cckey_test_store_key(key, (int)t);
        uint8_t *data = malloc(sizes[t] + 1);
        cckey_test_fill(&seed, data, sizes[t]);
        cr_assert_eq(cckey_store_put(s, key, data, sizes[t]), CCKEY_OK, "%s", cckey_last_error());

        /* The file, read by hand against the documented header. */
        cckey_test_entry_path(path, sizeof path, dir, key);
        size_t flen;
        uint8_t *file = read_file(path, &flen);
        cr_assert_eq(flen, 192 + sizes[t]);
        cr_assert_eq(memcmp(file, "CCKEYBIN", 8), 0);
        cr_assert_eq(le(file + 8, 4), 4);
        cr_assert_eq(le(file + 12, 4), 192);
        cr_assert_eq(le(file + 16, 8), sizes[t]);
        cr_assert_eq(memcmp(file + 40, key, CCKEY_KEY_LEN), 0);
        for (int i = 171; i < 192; i++) cr_assert_eq(file[i], 0);
        cr_assert_eq(memcmp(file + 192, data, sizes[t]), 0);
        uint8_t sum[16];
        memcpy(sum, file + 24, 16);
        cckey_test_entry_seal(file, flen);
        cr_assert_eq(memcmp(sum, file + 24, 16), 0, "checksum of a %zu-byte payload", sizes[t]);
        free(file);

        void *buf;
        size_t len;
        cr_assert_eq(cckey_store_get(s, key, &buf, &len), CCKEY_OK, "%s", cckey_last_error());
        cr_assert_not_null(buf);
        cr_assert_eq(len, sizes[t]);
        cr_assert_eq(memcmp(buf, data, len), 0);
        cckey_store_free_buffer(buf);
        free(data);
    }
    /* Replacing an entry serves the new payload. */
    char key[CCKEY_KEY_LEN + 1];
    cckey_test_store_key(key, 2);
    cr_assert_eq(cckey_store_put(s, key, "new", 3), CCKEY_OK);
    void *buf;
    size_t len;
    cr_assert_eq(cckey_store_get(s, key, &buf, &len), CCKEY_OK);
    cr_assert_eq(len, 3);
    cr_assert_eq(memcmp(buf, "new", 3), 0);
    cckey_store_free_buffer(buf);

    cckey_store_usage u;
    cr_assert_eq(cckey_store_stats(s, &u), CCKEY_OK);
    cr_assert_eq(u.entries, 5);
    cr_assert_eq(u.bytes, 5 * 192 + 0 + 1 + 3 + ((1u << 20) + 17) + (3u << 20));
    cr_assert_eq(u.temp_files, 0);
    close_and_remove(s);
}

Test(store, misses_and_bad_arguments)
{
    cckey_store *s = open_store();
    char key[CCKEY_KEY_LEN + 1];
    cckey_test_store_key(key, 1);
    void *buf = (void *)1;
    size_t len;
    cr_assert_eq(cckey_store_get(s, key, &buf, &len), CCKEY_ERR_NOT_FOUND);
    cr_assert_null(buf);

    const char *bad[] = {"", "abc", "../../../../etc/passwd"};
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(cckey_store_get(s, bad[i], &buf, &len), CCKEY_ERR_INVALID_ARG);
        cr_assert_eq(cckey_store_put(s, bad[i], "x", 1), CCKEY_ERR_INVALID_ARG);
    }
    char upper[CCKEY_KEY_LEN + 1], colon[CCKEY_KEY_LEN + 2];
    strcpy(upper, key);
    upper[0] = 'A';
    cr_assert_eq(cckey_store_put(s, upper, "x", 1), CCKEY_ERR_INVALID_ARG);
    strcpy(colon, key);
    colon[32] = 'a';
    cr_assert_eq(cckey_store_put(s, colon, "x", 1), CCKEY_ERR_INVALID_ARG);
    strcpy(colon, key);
    strcat(colon, "0");   /* one character too many */
    cr_assert_eq(cckey_store_put(s, colon, "x", 1), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_store_put(s, key, NULL, 1), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_store_put(NULL, key, "x", 1), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_store_get(s, key, NULL, &len), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_store_open(NULL, dir, 0), CCKEY_ERR_INVALID_ARG);
    cckey_store *t;
    cr_assert_eq(cckey_store_open(&t, "", 0), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_store_open(&t, "/proc/version/x", 0), CCKEY_ERR_IO);
    cckey_store_close(NULL);
    cckey_store_free_buffer(NULL);
    cckey_store_close(s);

    /* A store nested in a folder that does not exist yet is created. */
    char deep[128];
    snprintf(deep, sizeof deep, "%s/a/b/c", dir);
    cr_assert_eq(cckey_store_open(&t, deep, 0), CCKEY_OK);
    cr_assert_eq(cckey_store_put(t, key, "x", 1), CCKEY_OK);
    cckey_store_close(t);
    remove_tree(dir);
}

/* Damage an entry with fn, then check that it is a miss, is removed, and
 * that the next look-up says "not found". */
static void expect_damage_caught(cckey_store *s, const char *key, const char *what)
{
    char path[512];
    cckey_test_entry_path(path, sizeof path, dir, key);
    void *buf = (void *)1;
    size_t len = 99;
    cckey_status st = cckey_store_get(s, key, &buf, &len);
    cr_assert_eq(st, CCKEY_ERR_CORRUPT, "%s: got %s", what, cckey_strerror(st));
    cr_assert_null(buf, "%s", what);
    cr_assert(!exists(path), "%s: the damaged entry was not removed", what);
    cr_assert_eq(cckey_store_get(s, key, &buf, &len), CCKEY_ERR_NOT_FOUND, "%s", what);
}

Test(store, flipped_bytes_are_never_served)
{
    cckey_store *s = open_store();
    char key[CCKEY_KEY_LEN + 1], path[512];
    cckey_test_store_key(key, 3);
    cckey_test_entry_path(path, sizeof path, dir, key);
    uint8_t payload[300];
    uint64_t seed = 1;
    cckey_test_fill(&seed, payload, sizeof payload);
    /* Every header byte, and payload bytes at the start, middle and end. */
    for (size_t pos = 0; pos < 192 + sizeof payload; pos++) {
        if (pos >= 192 && pos != 192 && pos != 192 + 150 && pos != 192 + 299) continue;
        for (int bit = 0; bit < 8; bit += 7) {
            cr_assert_eq(cckey_store_put(s, key, payload, sizeof payload), CCKEY_OK);
            size_t flen;
            uint8_t *file = read_file(path, &flen);
            file[pos] ^= (uint8_t)(1u << bit);
            write_file(path, file, flen);
            free(file);
            char what[64];
            snprintf(what, sizeof what, "byte %zu bit %d", pos, bit);
            expect_damage_caught(s, key, what);
        }
    }
    close_and_remove(s);
}

Test(store, truncated_and_extended_entries_are_never_served)
{
    cckey_store *s = open_store();
    char key[CCKEY_KEY_LEN + 1], path[512];
    cckey_test_store_key(key, 4);
    cckey_test_entry_path(path, sizeof path, dir, key);
    size_t cuts[] = {0, 1, 8, 100, 191, 192, 193, 192 + 999};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        uint8_t payload[1000];
        memset(payload, 0xab, sizeof payload);
        cr_assert_eq(cckey_store_put(s, key, payload, sizeof payload), CCKEY_OK);
        cr_assert_eq(truncate(path, (off_t)cuts[i]), 0);
        char what[64];
        snprintf(what, sizeof what, "cut at %zu", cuts[i]);
        expect_damage_caught(s, key, what);
    }
    /* A byte appended. */
    cr_assert_eq(cckey_store_put(s, key, "abc", 3), CCKEY_OK);
    FILE *f = fopen(path, "ab");
    fputc(0, f);
    fclose(f);
    expect_damage_caught(s, key, "appended byte");
    close_and_remove(s);
}

Test(store, an_entry_under_another_keys_name_is_never_served)
{
    cckey_store *s = open_store();
    char a[CCKEY_KEY_LEN + 1], b[CCKEY_KEY_LEN + 1], pa[512], pb[512];
    cckey_test_store_key(a, 10), cckey_test_store_key(b, 11);
    cckey_test_entry_path(pa, sizeof pa, dir, a), cckey_test_entry_path(pb, sizeof pb, dir, b);
    cr_assert_eq(cckey_store_put(s, a, "payload-a", 9), CCKEY_OK);
    cr_assert_eq(cckey_store_put(s, b, "payload-b", 9), CCKEY_OK);
    cr_assert_eq(rename(pa, pb), 0);
    expect_damage_caught(s, b, "entry of key a named as key b");
    close_and_remove(s);
}

Test(store, verify_removes_bad_entries_and_dead_writers_files)
{
    cckey_store *s = open_store();
    char key[CCKEY_KEY_LEN + 1], path[512];
    for (int i = 0; i < 6; i++) {
        cckey_test_store_key(key, i);
        cr_assert_eq(cckey_store_put(s, key, "0123456789", 10), CCKEY_OK);
    }
    cckey_test_store_key(key, 0);
    cckey_test_entry_path(path, sizeof path, dir, key);
    cr_assert_eq(truncate(path, 50), 0);
    cckey_test_store_key(key, 1);
    cckey_test_entry_path(path, sizeof path, dir, key);
    size_t flen;
    uint8_t *file = read_file(path, &flen);
    file[flen - 1] ^= 1;
    write_file(path, file, flen);
    free(file);

    /* Temporary files: one of a process that is gone, one of ours (live). */
    char shard[512], dead[600], live[600];
    snprintf(shard, sizeof shard, "%.*s", (int)(strrchr(path, '/') - path), path);
    pid_t child = fork();
    if (child == 0) _exit(0);
    waitpid(child, NULL, 0);
    snprintf(dead, sizeof dead, "%s/.tmp-%s-%ld-000000000000", shard, cckey_store_host_tag(), (long)child);
    snprintf(live, sizeof live, "%s/.tmp-%s-%ld-111111111111", shard, cckey_store_host_tag(), (long)getpid());
    write_file(dead, "x", 1);
    write_file(live, "y", 1);
    cckey_store_usage u;
    cr_assert_eq(cckey_store_stats(s, &u), CCKEY_OK);
    cr_assert_eq(u.entries, 6);
    cr_assert_eq(u.temp_files, 2);

    cckey_store_report r;
    cr_assert_eq(cckey_store_verify(s, &r), CCKEY_OK);
    cr_assert_eq(r.ok, 4);
    cr_assert_eq(r.removed, 2);
    cr_assert_eq(r.temps_removed, 1);
    cr_assert(!exists(dead));
    cr_assert(exists(live));
    cr_assert_eq(cckey_store_stats(s, &u), CCKEY_OK);
    cr_assert_eq(u.entries, 4);
    cr_assert_eq(cckey_store_verify(s, &r), CCKEY_OK);
    cr_assert_eq(r.ok, 4);
    cr_assert_eq(r.removed, 0);
    close_and_remove(s);
}

Test(store, clear_removes_only_what_the_store_wrote)
{
    cckey_store *s = open_store();
    char key[CCKEY_KEY_LEN + 1], path[512], mine[600], foreign[600];
    for (int i = 0; i < 20; i++) {
        cckey_test_store_key(key, i);
        cr_assert_eq(cckey_store_put(s, key, "abc", 3), CCKEY_OK);
    }
    snprintf(mine, sizeof mine, "%s/notes.txt", dir);
    write_file(mine, "keep me", 7);
    cckey_test_store_key(key, 0);
    cckey_test_entry_path(path, sizeof path, dir, key);
    snprintf(foreign, sizeof foreign, "%.*s/other-file", (int)(strrchr(path, '/') - path), path);
    write_file(foreign, "keep me too", 11);
    uint64_t removed = 0;
    cr_assert_eq(cckey_store_clear(s, &removed), CCKEY_OK);
    cr_assert_eq(removed, 20);
    cr_assert(exists(mine));
    cr_assert(exists(foreign));
    cckey_store_usage u;
    cr_assert_eq(cckey_store_stats(s, &u), CCKEY_OK);
    cr_assert_eq(u.entries, 0);
    /* Empty shard folders are gone; the one with a foreign file stays. */
    int shards = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while ((e = readdir(d)))
        if (strlen(e->d_name) == 2 && e->d_name[0] != '.') shards++;
    closedir(d);
    cr_assert_eq(shards, 1);
    /* And it still works afterwards. */
    cr_assert_eq(cckey_store_put(s, key, "abc", 3), CCKEY_OK);
    close_and_remove(s);
}

static void set_age(const char *key, time_t seconds_ago)
{
    char path[512];
    cckey_test_entry_path(path, sizeof path, dir, key);
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= seconds_ago;
    t[1] = t[0];
    cr_assert_eq(utimensat(AT_FDCWD, path, t, 0), 0);
}

static bool has(const char *key)
{
    char path[512];
    cckey_test_entry_path(path, sizeof path, dir, key);
    return exists(path);
}

Test(store, size_limit_evicts_least_recently_used)
{
    /* Each entry is 192 + 808 = 1000 bytes; the limit holds ten. */
    enum { ENTRY = 1000, PAYLOAD = ENTRY - 192 };
    cckey_store *s;
    cr_assert_eq(cckey_store_open(&s, dir, 10 * ENTRY), CCKEY_OK);
    char keys[16][CCKEY_KEY_LEN + 1];
    uint8_t payload[PAYLOAD] = {0};
    for (int i = 0; i < 10; i++) {
        cckey_test_store_key(keys[i], i);
        cr_assert_eq(cckey_store_put(s, keys[i], payload, PAYLOAD), CCKEY_OK);
        set_age(keys[i], 1000 - i);   /* entry 0 the oldest */
    }
    for (int i = 0; i < 10; i++) cr_assert(has(keys[i]));
    /* Use entry 0: it becomes the most recent. */
    void *buf;
    size_t len;
    cr_assert_eq(cckey_store_get(s, keys[0], &buf, &len), CCKEY_OK);
    cckey_store_free_buffer(buf);
    /* One more entry: 11000 > 10000, evict down to 9000 = the 2 oldest. */
    cckey_test_store_key(keys[10], 10);
    cr_assert_eq(cckey_store_put(s, keys[10], payload, PAYLOAD), CCKEY_OK);
    cr_assert(has(keys[0]), "a just-used entry was evicted");
    cr_assert(!has(keys[1]));
    cr_assert(!has(keys[2]));
    for (int i = 3; i <= 10; i++) cr_assert(has(keys[i]), "entry %d", i);
    cckey_store_usage u;
    cr_assert_eq(cckey_store_stats(s, &u), CCKEY_OK);
    cr_assert_eq(u.bytes, 9 * ENTRY);
    cr_assert_eq(u.max_bytes, 10 * ENTRY);
    /* An entry larger than the limit is refused, and nothing is written. */
    uint8_t *big = calloc(1, 20 * ENTRY);
    cckey_test_store_key(keys[11], 11);
    cr_assert_eq(cckey_store_put(s, keys[11], big, 20 * ENTRY), CCKEY_ERR_INVALID_ARG);
    cr_assert(!has(keys[11]));
    free(big);
    cckey_store_close(s);

    /* A second handle sees the folder as it is, without its own puts. */
    cr_assert_eq(cckey_store_open(&s, dir, 5 * ENTRY), CCKEY_OK);
    cckey_test_store_key(keys[12], 12);
    cr_assert_eq(cckey_store_put(s, keys[12], payload, PAYLOAD), CCKEY_OK);
    cr_assert_eq(cckey_store_stats(s, &u), CCKEY_OK);
    cr_assert_leq(u.bytes, 5 * ENTRY * 9 / 10);
    cr_assert(has(keys[12]));
    close_and_remove(s);
}
