/* Cache ergonomics in the library: the folder's own size limit
 * (cckey.conf max_size) honoured by every writer, hit and miss counters
 * summed across processes, listing, trimming, sizes. */
#include "support.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void write_conf(const char *dir, const char *text) { cr_assert(cckey_test_write_text(dir, "cckey.conf", text)); }

Test(sizes, parse)
{
    struct {
        const char *text;
        uint64_t want;
    } ok[] = {{"0", 0}, {"4096", 4096}, {"1K", 1024}, {"1k", 1024}, {"500M", 500ull << 20}, {"10G", 10ull << 30},
              {"2T", 2ull << 40}, {"3KiB", 3072}, {"7MB", 7ull << 20}, {"12B", 12}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        uint64_t v = 1;
        cr_assert_eq(cckey_size_parse(ok[i].text, &v), CCKEY_OK, "%s", ok[i].text);
        cr_assert_eq(v, ok[i].want, "%s", ok[i].text);
    }
    const char *bad[] = {"", "G", "-1", "1X", "1.5G", "10 G", "1KK", "99999999999T", "1iB"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        uint64_t v = 77;
        cr_assert_eq(cckey_size_parse(bad[i], &v), CCKEY_ERR_INVALID_ARG, "%s", bad[i]);
        cr_assert_eq(v, 77);
    }
}

Test(folder_limit, every_writer_honours_it)
{
    char dir[64];
    cr_assert(cckey_test_make_dir(dir, "conf"));
    write_conf(dir, "# a comment\nremote_only_read = false\nmax_size = 8K\n");
    cckey_store *s;
    cr_assert_eq(cckey_store_open(&s, dir, 0), CCKEY_OK);
    cckey_store_usage u;
    cr_assert_eq(cckey_store_stats(s, &u), CCKEY_OK);
    cr_assert_eq(u.max_bytes, 8192);
    static char payload[1000];
    for (int i = 0; i < 40; i++) {
        char key[CCKEY_KEY_LEN + 1];
        cckey_test_store_key(key, i);
        cr_assert_eq(cckey_store_put(s, key, payload, sizeof payload), CCKEY_OK);
    }
    cr_assert_eq(cckey_store_stats(s, &u), CCKEY_OK);
    cr_assert_leq(u.bytes, 8192, "%llu bytes", (unsigned long long)u.bytes);
    cr_assert_gt(u.entries, 0);
    cckey_store_close(s);
    /* An explicit limit wins over the folder's. */
    cr_assert_eq(cckey_store_open(&s, dir, 1 << 20), CCKEY_OK);
    cr_assert_eq(cckey_store_stats(s, &u), CCKEY_OK);
    cr_assert_eq(u.max_bytes, 1 << 20);
    cckey_store_close(s);
    cr_assert(cckey_test_remove_tree(dir));
}

Test(counters, summed_across_processes)
{
    char dir[64];
    cr_assert(cckey_test_make_dir(dir, "counters"));
    char present[CCKEY_KEY_LEN + 1], absent[CCKEY_KEY_LEN + 1];
    cckey_test_store_key(present, 1), cckey_test_store_key(absent, 2);
    cckey_store *s;
    cr_assert_eq(cckey_store_open(&s, dir, 0), CCKEY_OK);
    cr_assert_eq(cckey_store_put(s, present, "x", 1), CCKEY_OK);
    enum { KIDS = 4, HITS = 10, MISSES = 5 };
    for (int k = 0; k < KIDS; k++) cr_assert_neq(cckey_test_spawn_look(dir, present, absent, HITS, MISSES), -1);
    cr_assert(cckey_test_reap(KIDS));
    void *buf;
    size_t len;
    cr_assert_eq(cckey_store_get(s, present, &buf, &len), CCKEY_OK);   /* this handle's own, not yet written */
    cckey_store_free_buffer(buf);
    cckey_store_usage u;
    cr_assert_eq(cckey_store_stats(s, &u), CCKEY_OK);
    cr_assert_eq(u.hits, KIDS * HITS + 1);
    cr_assert_eq(u.misses, KIDS * MISSES);
    cr_assert_eq(u.entries, 1, "the counter files are not entries");
    /* A bounded set of files (a counter file and its lock per process at
     * most here); closing adds this one's. test_store_counters has more. */
    char stats[96];
    snprintf(stats, sizeof stats, "%s/stats", dir);
    DIR *d = opendir(stats);
    cr_assert(d);
    int files = 0;
    for (struct dirent *e; (e = readdir(d));) files += e->d_name[0] != '.';
    closedir(d);
    cr_assert_leq(files, 2 * KIDS);
    cr_assert_geq(files, 2);
    cckey_store_close(s);
    cr_assert_eq(cckey_store_open(&s, dir, 0), CCKEY_OK);
    cr_assert_eq(cckey_store_stats(s, &u), CCKEY_OK);
    cr_assert_eq(u.hits, KIDS * HITS + 1);
    /* A damaged entry is a miss. */
    uint64_t removed;
    cr_assert_eq(cckey_store_clear(s, &removed), CCKEY_OK);
    cr_assert_eq(cckey_store_get(s, present, &buf, &len), CCKEY_ERR_NOT_FOUND);
    cr_assert_eq(cckey_store_stats(s, &u), CCKEY_OK);
    cr_assert_eq(u.misses, KIDS * MISSES + 1);
    cckey_store_close(s);
    cr_assert(cckey_test_remove_tree(dir));
}

typedef struct seen {
    char keys[64][CCKEY_KEY_LEN + 1];
    uint64_t bytes[64];
    int n, stop_after;
} seen;

static int collect(void *user, const char *key, uint64_t bytes, int64_t used)
{
    seen *s = user;
    cr_assert_gt(used, 0);
    memcpy(s->keys[s->n], key, CCKEY_KEY_LEN + 1);
    s->bytes[s->n++] = bytes;
    return s->stop_after && s->n >= s->stop_after;
}

Test(list_and_trim, list_every_entry_then_trim_the_oldest)
{
    char dir[64];
    cr_assert(cckey_test_make_dir(dir, "list"));
    cckey_store *s;
    cr_assert_eq(cckey_store_open(&s, dir, 0), CCKEY_OK);
    static char payload[1000];
    enum { N = 20 };
    for (int i = 0; i < N; i++) {
        char key[CCKEY_KEY_LEN + 1];
        cckey_test_store_key(key, i);
        cr_assert_eq(cckey_store_put(s, key, payload, (size_t)i * 10), CCKEY_OK);
    }
    seen got = {0};
    cr_assert_eq(cckey_store_list(s, collect, &got), CCKEY_OK);
    cr_assert_eq(got.n, N);
    for (int i = 0; i < N; i++) {
        char key[CCKEY_KEY_LEN + 1];
        cckey_test_store_key(key, i);
        int found = -1;
        for (int j = 0; j < got.n; j++)
            if (strcmp(got.keys[j], key) == 0) found = j;
        cr_assert_neq(found, -1, "entry %d not listed", i);
        cr_assert_eq(got.bytes[found], 192 + (uint64_t)i * 10, "header and payload");
    }
    seen first = {.stop_after = 3};
    cr_assert_eq(cckey_store_list(s, collect, &first), CCKEY_OK);
    cr_assert_eq(first.n, 3, "a non-zero return stops the walk");

    uint64_t removed = 99;
    cr_assert_eq(cckey_store_trim(s, &removed), CCKEY_ERR_INVALID_ARG, "no limit");
    cr_assert_eq(removed, 0);
    cckey_store_close(s);
    /* Entry i last used at time 1000 + i: trimming keeps the newest. */
    for (int i = 0; i < N; i++) {
        char key[CCKEY_KEY_LEN + 1], path[512], name[CCKEY_KEY_LEN + 1];
        cckey_test_store_key(key, i);
        memcpy(name, key, sizeof name);
        for (char *p = name; *p; p++)
            if (*p == ':') *p = '-';
        unsigned char d[16];
        cckey_digest g;
        cckey_digest_init(&g);
        cckey_digest_update(&g, key, CCKEY_KEY_LEN);
        cckey_digest_final(&g, NULL, d);
        snprintf(path, sizeof path, "%s/%02x/%s", dir, d[0], name);
        struct timespec t[2] = {{1000 + i, 0}, {1000 + i, 0}};
        cr_assert_eq(utimensat(AT_FDCWD, path, t, 0), 0, "%s", path);
    }
    write_conf(dir, "max_size = 2K\n");
    cr_assert_eq(cckey_store_open(&s, dir, 0), CCKEY_OK);
    cr_assert_eq(cckey_store_trim(s, &removed), CCKEY_OK);
    cckey_store_usage u;
    cr_assert_eq(cckey_store_stats(s, &u), CCKEY_OK);
    cr_assert_leq(u.bytes, 2048 / 10 * 9);
    cr_assert_eq(u.entries + removed, N);
    seen left = {0};
    cr_assert_eq(cckey_store_list(s, collect, &left), CCKEY_OK);
    for (int j = 0; j < left.n; j++) {
        int i = -1;
        for (int k = 0; k < N; k++) {
            char key[CCKEY_KEY_LEN + 1];
            cckey_test_store_key(key, k);
            if (strcmp(key, left.keys[j]) == 0) i = k;
        }
        cr_assert_geq(i, N - (int)u.entries, "entry %d kept, but it is among the oldest", i);
    }
    cckey_store_close(s);
    cr_assert(cckey_test_remove_tree(dir));
}
