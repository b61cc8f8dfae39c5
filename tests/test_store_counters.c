/* The folder's counters in a bounded set of files (issue 27): hundreds of
 * processes leave at most 16 counter files (and their locks), and every
 * count adds up; an older version's per-process files are folded in once;
 * damaged and locked counter files never fail a look-up; zeroing records
 * when; clearing the entries keeps the counts, as ccache -C does. The
 * oracle is the number of look-ups each process made, known in advance. */
#include "support.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void write_file(const char *dir, const char *name, const char *text)
{
    cr_assert(cckey_test_write_text(dir, name, text), "%s/%s", dir, name);
}

static bool exists(const char *dir, const char *name)
{
    char path[256];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return lstat(path, &st) == 0;
}

/* Files in DIR/stats, dot-files (temporary) included. */
static int stats_files(const char *dir)
{
    char path[128];
    snprintf(path, sizeof path, "%s/stats", dir);
    DIR *d = opendir(path);
    if (!d) return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

/* One process's look-ups (cckey_test_look: hits of present, misses of
 * absent) in a child, waited for; its status is the wait's, for the caller
 * to judge. */
static int look_in_child(const char *dir, const char *present, const char *absent, int hits, int misses)
{
    pid_t pid = cckey_test_spawn_look(dir, present, absent, hits, misses);
    cr_assert_neq(pid, -1);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    return status;
}

static bool exited_0(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

static void usage_of(const char *dir, cckey_store_usage *u)
{
    cckey_store *s;
    cr_assert_eq(cckey_store_open(&s, dir, 0), CCKEY_OK);
    cr_assert_eq(cckey_store_stats(s, u), CCKEY_OK);
    cckey_store_close(s);
}

static void setup(char dir[64], const char *tag, char present[CCKEY_KEY_LEN + 1], char absent[CCKEY_KEY_LEN + 1])
{
    cr_assert(cckey_test_make_dir(dir, tag));
    cckey_test_store_key(present, 1), cckey_test_store_key(absent, 2);
    cckey_store *s;
    cr_assert_eq(cckey_store_open(&s, dir, 0), CCKEY_OK);
    cr_assert_eq(cckey_store_put(s, present, "x", 1), CCKEY_OK);
    cckey_store_close(s);
}

Test(counters, three_hundred_processes_bounded_and_exact)
{
    char dir[64], present[CCKEY_KEY_LEN + 1], absent[CCKEY_KEY_LEN + 1];
    setup(dir, "ctr300", present, absent);
    enum { KIDS = 300, BATCH = 30 };
    uint64_t want_hits = 0, want_misses = 0;
    /* In batches of 30 at once, so that many hold or wait for locks together. */
    for (int b = 0; b < KIDS; b += BATCH) {
        for (int k = b; k < b + BATCH; k++) {
            int hits = 1 + k % 7, misses = k % 3;
            want_hits += (uint64_t)hits, want_misses += (uint64_t)misses;
            cr_assert_neq(cckey_test_spawn_look(dir, present, absent, hits, misses), -1);
        }
        cr_assert(cckey_test_reap(BATCH), "a child failed");
    }
    cckey_store_usage u;
    usage_of(dir, &u);
    cr_assert_eq(u.hits, want_hits);
    cr_assert_eq(u.misses, want_misses);
    cr_assert_eq(u.damaged, 0);
    int n = stats_files(dir);
    cr_assert_leq(n, 64, "%d files in stats/", n);
    cr_assert_leq(n, 3 * 16, "%d files in stats/", n);
    cr_assert(cckey_test_remove_tree(dir));
}

Test(counters, older_per_process_files_folded_once)
{
    char dir[64], present[CCKEY_KEY_LEN + 1], absent[CCKEY_KEY_LEN + 1];
    setup(dir, "ctrold", present, absent);
    char stats[96];
    cr_assert(cckey_test_sub_dir(stats, sizeof stats, dir, "stats"));
    enum { OLD = 20 };
    for (int i = 0; i < OLD; i++) {
        char name[32];
        snprintf(name, sizeof name, "host%d-%d", i % 3, 1000 + i);
        write_file(stats, name, "hits 5\nmisses 2\n");
    }
    write_file(dir, "remote-stats", "hits 9\nmisses 4\nerrors 1\nputs 3\nbytes_in 900\nbytes_out 300\n");
    cckey_store_usage u;
    usage_of(dir, &u);   /* read before they are folded: already counted */
    cr_assert_eq(u.hits, 5 * OLD);
    cr_assert_eq(u.misses, 2 * OLD);
    /* Writers fold them (8 at a time) and remove them. */
    for (int round = 0; round < 4; round++) {
        cr_assert(exited_0(look_in_child(dir, present, absent, 1, 1)));
    }
    usage_of(dir, &u);
    cr_assert_eq(u.hits, 5 * OLD + 4);
    cr_assert_eq(u.misses, 2 * OLD + 4);
    cr_assert_not(exists(dir, "remote-stats"));
    for (int i = 0; i < OLD; i++) {
        char name[32];
        snprintf(name, sizeof name, "stats/host%d-%d", i % 3, 1000 + i);
        cr_assert_not(exists(dir, name), "%s stayed", name);
    }
    cckey_store *s;
    cckey_remote_counters rc;
    cr_assert_eq(cckey_store_open(&s, dir, 0), CCKEY_OK);
    cr_assert_eq(cckey_store_remote_counters(s, 0, &rc), CCKEY_OK);
    cr_assert_eq(rc.hits, 9);
    cr_assert_eq(rc.misses, 4);
    cr_assert_eq(rc.errors, 1);
    cr_assert_eq(rc.puts, 3);
    cr_assert_eq(rc.bytes_in, 900);
    cr_assert_eq(rc.bytes_out, 300);
    cckey_store_close(s);
    cr_assert(cckey_test_remove_tree(dir));
}

Test(counters, damaged_files_never_fail_a_look_up)
{
    char dir[64], present[CCKEY_KEY_LEN + 1], absent[CCKEY_KEY_LEN + 1];
    setup(dir, "ctrbad", present, absent);
    char stats[96];
    snprintf(stats, sizeof stats, "%s/stats", dir);
    cr_assert(mkdir(stats, 0777) == 0);
    /* Every counter file damaged: garbage, cut short, binary, a folder. */
    for (int i = 0; i < 16; i++) {
        char name[8];
        snprintf(name, sizeof name, "%d", i);
        if (i == 0) write_file(stats, name, "# cckey counters 1\nzeroed_at 0\nhits 7\nmis");   /* truncated */
        else if (i == 1) write_file(stats, name, "\x01\x02garbage \xff\n\n hits x\n");
        else if (i == 2) write_file(stats, name, "# cckey counters 1\nhits 99999999999999999999999\nmisses 3\n");
        else if (i == 3) cr_assert(mkdir(strcat(strcat(strcpy((char[128]){0}, stats), "/"), name), 0777) == 0);
        else write_file(stats, name, "not a counter file at all");
    }
    cckey_store_usage u;
    usage_of(dir, &u);
    cr_assert_eq(u.hits, 7, "the good lines count: %llu", (unsigned long long)u.hits);
    cr_assert_eq(u.misses, 3);
    cr_assert_geq(u.damaged, 14);
    for (int k = 0; k < 32; k++) {   /* enough processes to reach most files */
        cr_assert(exited_0(look_in_child(dir, present, absent, 2, 1)), "a look-up failed over damaged counters");
    }
    usage_of(dir, &u);
    cr_assert_eq(u.hits, 7 + 64);
    cr_assert_eq(u.misses, 3 + 32);
    cr_assert(cckey_test_remove_tree(dir));
}

/* Hold every counter file's lock in a child, which then stops (sig 0: it
 * waits to be killed) or dies at once. */
static pid_t hold_locks(const char *dir, int fds[2])
{
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid) {
        char c;
        cr_assert_eq(read(fds[0], &c, 1), 1);   /* the locks are held */
        return pid;
    }
    char path[160];
    snprintf(path, sizeof path, "%s/stats", dir);
    mkdir(path, 0777);
    for (int i = 0; i < 16; i++) {
        snprintf(path, sizeof path, "%s/stats/%d.lock", dir, i);
        int fd = open(path, O_RDWR | O_CREAT, 0666);
        struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
        if (fd < 0 || fcntl(fd, F_SETLK, &fl) != 0) _exit(1);
    }
    if (write(fds[1], "x", 1) != 1) _exit(1);
    for (;;) pause();
}

Test(counters, locked_files_drop_counts_not_look_ups)
{
    char dir[64], present[CCKEY_KEY_LEN + 1], absent[CCKEY_KEY_LEN + 1];
    setup(dir, "ctrlock", present, absent);
    int fds[2];
    pid_t holder = hold_locks(dir, fds);
    /* A stuck holder: the writer waits its while, then drops its counts. */
    cr_assert(exited_0(look_in_child(dir, present, absent, 3, 2)));
    cckey_store_usage u;
    usage_of(dir, &u);
    cr_assert_eq(u.hits, 0);
    /* A dead holder's locks go with it (fcntl): counting goes on. */
    kill(holder, SIGKILL);
    int status;
    cr_assert_eq(waitpid(holder, &status, 0), holder);
    close(fds[0]), close(fds[1]);
    cr_assert(exited_0(look_in_child(dir, present, absent, 3, 2)));
    usage_of(dir, &u);
    cr_assert_eq(u.hits, 3);
    cr_assert_eq(u.misses, 2);
    cr_assert(cckey_test_remove_tree(dir));
}

Test(counters, zero_records_when_and_clear_keeps_them)
{
    char dir[64], present[CCKEY_KEY_LEN + 1], absent[CCKEY_KEY_LEN + 1];
    setup(dir, "ctrzero", present, absent);
    look_in_child(dir, present, absent, 4, 2);
    cckey_store *s;
    cckey_store_usage u;
    cr_assert_eq(cckey_store_open(&s, dir, 0), CCKEY_OK);
    uint64_t removed;
    cr_assert_eq(cckey_store_clear(s, &removed), CCKEY_OK);
    cr_assert_eq(removed, 1);
    cr_assert_eq(cckey_store_stats(s, &u), CCKEY_OK);
    cr_assert_eq(u.hits, 4, "clear keeps the counters, as ccache -C");
    cr_assert_eq(u.misses, 2);
    cr_assert_eq(u.zeroed, 0);
    time_t before = time(NULL);
    cr_assert_eq(cckey_store_zero_counters(s), CCKEY_OK);
    time_t after = time(NULL);
    cr_assert_eq(cckey_store_stats(s, &u), CCKEY_OK);
    cr_assert_eq(u.hits, 0);
    cr_assert_eq(u.misses, 0);
    cr_assert(u.zeroed >= before && u.zeroed <= after, "zeroed %lld", (long long)u.zeroed);
    void *buf;
    size_t len;
    cr_assert_eq(cckey_store_get(s, present, &buf, &len), CCKEY_ERR_NOT_FOUND);
    cckey_store_close(s);
    usage_of(dir, &u);
    cr_assert_eq(u.misses, 1, "counting goes on after zeroing");
    cr_assert(u.zeroed >= before && u.zeroed <= after);
    /* A read-only handle may not zero. */
    cr_assert_eq(cckey_store_open_read_only(&s, dir), CCKEY_OK);
    cr_assert_eq(cckey_store_zero_counters(s), CCKEY_ERR_INVALID_ARG);
    cckey_store_close(s);
    cr_assert(cckey_test_remove_tree(dir));
}
