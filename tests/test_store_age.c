/* Age-based eviction (issue 27): cckey_store_trim_older and the folder's
 * max_age, honoured by every writer as max_size is. The oracle is the
 * last-used times the test itself gives the entry files (utimensat). */
#include "support.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void write_conf(const char *dir, const char *text) { cr_assert(cckey_test_write_text(dir, "cckey.conf", text)); }

/* Set key's entry file's last-used time to days_ago days before now. */
static void age_entry(const char *dir, const char *key, int days_ago)
{
    char name[CCKEY_KEY_LEN + 1];
    for (int i = 0; key[i]; i++) name[i] = key[i] == ':' ? '-' : key[i];
    name[CCKEY_KEY_LEN] = '\0';
    DIR *d = opendir(dir);
    cr_assert(d);
    bool done = false;
    for (struct dirent *e; !done && (e = readdir(d));) {
        if (strlen(e->d_name) != 2 || e->d_name[0] == '.') continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s/%s", dir, e->d_name, name);
        struct timespec t[2] = {{time(NULL) - (time_t)days_ago * 86400, 0}, {time(NULL) - (time_t)days_ago * 86400, 0}};
        done = utimensat(AT_FDCWD, path, t, 0) == 0;
    }
    closedir(d);
    cr_assert(done, "no entry file for %s", key);
}

static bool has(cckey_store *s, const char *key)
{
    void *buf;
    size_t len;
    cckey_status st = cckey_store_get(s, key, &buf, &len);
    if (st == CCKEY_OK) cckey_store_free_buffer(buf);
    return st == CCKEY_OK;
}

/* A store in a fresh folder dir with the stock entries 0..n-1 (their keys in
 * keys), entry i last used days_ago[i] days before now. */
static cckey_store *aged_store(char dir[64], const char *tag, char (*keys)[CCKEY_KEY_LEN + 1], const int *days_ago,
                               int n)
{
    cr_assert(cckey_test_make_dir(dir, tag));
    cckey_store *s;
    cr_assert_eq(cckey_store_open(&s, dir, 0), CCKEY_OK);
    for (int i = 0; i < n; i++) {
        cckey_test_store_key(keys[i], i);
        cr_assert_eq(cckey_store_put(s, keys[i], "payload", 7), CCKEY_OK);
        age_entry(dir, keys[i], days_ago[i]);
    }
    return s;
}

Test(age, parse)
{
    struct {
        const char *text;
        int64_t want;
    } ok[] = {{"30d", 30 * 86400}, {"12h", 12 * 3600}, {"90m", 5400}, {"45s", 45}, {"2w", 14 * 86400}, {"1s", 1}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        int64_t v = -1;
        cr_assert_eq(cckey_age_parse(ok[i].text, &v), CCKEY_OK, "%s", ok[i].text);
        cr_assert_eq(v, ok[i].want, "%s", ok[i].text);
    }
    const char *bad[] = {"", "30", "d", "0d", "-1d", "1.5d", "30 d", "30dd", "30y", "99999999999999999999d",
                         "9999999999999999w"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int64_t v = 77;
        cr_assert_eq(cckey_age_parse(bad[i], &v), CCKEY_ERR_INVALID_ARG, "%s", bad[i]);
        cr_assert_eq(v, 77);
    }
}

Test(age, trim_older_removes_exactly_the_old)
{
    char dir[64], keys[10][CCKEY_KEY_LEN + 1];
    static const int days[10] = {0, 10, 20, 30, 40, 50, 60, 70, 80, 90};
    cckey_store *s = aged_store(dir, "age", keys, days, 10);
    uint64_t removed = 99;
    cr_assert_eq(cckey_store_trim_older(s, 35 * 86400, &removed), CCKEY_OK);
    cr_assert_eq(removed, 6, "40..90 days: %llu removed", (unsigned long long)removed);
    for (int i = 0; i < 10; i++) cr_assert_eq(has(s, keys[i]), i * 10 < 35, "entry %d", i);
    /* A look-up marks an entry used: it is young again. */
    age_entry(dir, keys[3], 50);
    cr_assert(has(s, keys[3]));
    cr_assert_eq(cckey_store_trim_older(s, 35 * 86400, &removed), CCKEY_OK);
    cr_assert_eq(removed, 0);
    /* Without any limit, plain trim says so. */
    cr_assert_eq(cckey_store_trim(s, &removed), CCKEY_ERR_INVALID_ARG);
    cckey_store_close(s);
    cr_assert_eq(cckey_store_open_read_only(&s, dir), CCKEY_OK);
    cr_assert_eq(cckey_store_trim_older(s, 60, &removed), CCKEY_ERR_INVALID_ARG);
    cckey_store_close(s);
    cr_assert(cckey_test_remove_tree(dir));
}

Test(age, every_writer_honours_max_age)
{
    char dir[64], keys[6][CCKEY_KEY_LEN + 1];
    static const int days[5] = {1, 1, 40, 40, 40};
    cckey_store *s = aged_store(dir, "maxage", keys, days, 5);
    cckey_store_close(s);
    /* Damaged lines around it are ignored; the last max_age wins. */
    write_conf(dir, "# limits\nmax_age = lots\n\x01\x02 garbage\nmax_age = 30d\nmax_size = 1G\nmax_age");
    cr_assert_eq(cckey_store_open(&s, dir, 0), CCKEY_OK);
    cckey_test_store_key(keys[5], 5);
    cr_assert_eq(cckey_store_put(s, keys[5], "payload", 7), CCKEY_OK);   /* the first put recounts */
    cckey_store_usage u;
    cr_assert_eq(cckey_store_stats(s, &u), CCKEY_OK);
    cr_assert_eq(u.entries, 3, "%llu entries", (unsigned long long)u.entries);
    cr_assert(has(s, keys[0]) && has(s, keys[1]) && has(s, keys[5]));
    uint64_t removed;
    age_entry(dir, keys[0], 31);
    cr_assert_eq(cckey_store_trim(s, &removed), CCKEY_OK);   /* trim applies max_age too */
    cr_assert_eq(removed, 1);
    cckey_store_close(s);
    /* An unreadable max_age is no limit, and never fails a writer. */
    write_conf(dir, "max_age = 30\n");
    cr_assert_eq(cckey_store_open(&s, dir, 0), CCKEY_OK);
    age_entry(dir, keys[1], 400);
    cr_assert_eq(cckey_store_put(s, keys[0], "again", 5), CCKEY_OK);
    cr_assert(has(s, keys[1]));
    cckey_store_close(s);
    cr_assert(cckey_test_remove_tree(dir));
}
