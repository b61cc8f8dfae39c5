/* The store against what can sit in its folder besides its own entries:
 * symlinks, FIFOs, folders, unreadable and unremovable files; which check
 * rejects a damaged entry; where CACHEDIR.TAG goes; and the order of the
 * syncs that make a put durable (fsync, rename and the folder's fsync are
 * intercepted with the linker's --wrap, so no hook is needed). */
#include "support.h"
#include "store/store_internal.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];

static void make_dir(void) { cr_assert(cckey_test_make_dir(dir, "storeh")); }
static void cleanup(void)
{
    chmod(dir, 0755);
    cckey_test_remove_tree(dir);
}

TestSuite(store_hardening, .init = make_dir, .fini = cleanup, .timeout = 60);

static void shard_of_path(char *out, size_t cap, const char *path)
{
    snprintf(out, cap, "%.*s", (int)(strrchr(path, '/') - path), path);
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static cckey_store *open_store(void)
{
    cckey_store *s;
    cr_assert_eq(cckey_store_open(&s, dir, 0), CCKEY_OK, "%s", cckey_last_error());
    return s;
}

/* An entry put for key k, then its path (its shard folder exists). */
static void put_entry(cckey_store *s, int k, char key[CCKEY_KEY_LEN + 1], char *path, size_t cap)
{
    cckey_test_store_key(key, k);
    cr_assert_eq(cckey_store_put(s, key, "payload", 7), CCKEY_OK, "%s", cckey_last_error());
    cckey_test_entry_path(path, cap, dir, key);
}

Test(store_hardening, cachedir_tag_only_in_a_folder_the_store_made)
{
    char tag[128], fresh[128];
    cckey_store *s = open_store();   /* dir existed already (a home folder, say) */
    cckey_store_close(s);
    snprintf(tag, sizeof tag, "%s/CACHEDIR.TAG", dir);
    cr_assert(!exists(tag), "CACHEDIR.TAG written into a folder the store did not create");

    snprintf(fresh, sizeof fresh, "%s/new/cache/", dir);
    cr_assert_eq(cckey_store_open(&s, fresh, 0), CCKEY_OK);
    cckey_store_close(s);
    snprintf(tag, sizeof tag, "%s/new/cache/CACHEDIR.TAG", dir);
    char *text = cckey_test_read_file(tag, NULL);
    cr_assert_not_null(text, "no CACHEDIR.TAG in the folder the store created");
    cr_assert(strncmp(text, "Signature: 8a477f597d28d172789f06886806bc55", 43) == 0);
    free(text);
    snprintf(tag, sizeof tag, "%s/new/CACHEDIR.TAG", dir);
    cr_assert(!exists(tag), "the tag went into a parent folder");
}

/* get on a FIFO would wait for a writer forever without O_NONBLOCK: the
 * alarm turns such a hang into a failure. */
static void expect_miss(cckey_store *s, const char *key, const char *what)
{
    void *buf = NULL;
    size_t len = 0;
    alarm(20);
    cckey_status st = cckey_store_get(s, key, &buf, &len);
    alarm(0);
    cr_assert_eq(st, CCKEY_ERR_NOT_FOUND, "%s: %s (%s)", what, cckey_strerror(st), cckey_last_error());
    cr_assert_null(buf);
}

Test(store_hardening, anything_but_a_regular_file_is_a_miss)
{
    cckey_store *s = open_store();
    char key[CCKEY_KEY_LEN + 1], path[512], good[600];
    /* A symlink to a perfectly good entry of the same key is still a miss:
     * the store serves only files in its folder. */
    put_entry(s, 1, key, path, sizeof path);
    snprintf(good, sizeof good, "%s/elsewhere", dir);
    cr_assert_eq(rename(path, good), 0);
    cr_assert_eq(symlink(good, path), 0);
    expect_miss(s, key, "symlink");
    cr_assert(exists(good), "the symlink's target was touched");

    put_entry(s, 2, key, path, sizeof path);
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(mkfifo(path, 0600), 0);
    expect_miss(s, key, "FIFO");

    put_entry(s, 3, key, path, sizeof path);
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(mkdir(path, 0700), 0);
    expect_miss(s, key, "folder");
    cckey_store_close(s);
}

Test(store_hardening, verify_reports_and_removes_what_is_no_regular_file)
{
    cckey_store *s = open_store();
    char key[CCKEY_KEY_LEN + 1], path[512], target[600], inner[700];
    put_entry(s, 0, key, path, sizeof path);   /* one good entry */
    put_entry(s, 1, key, path, sizeof path);
    snprintf(target, sizeof target, "%s/precious", dir);
    cr_assert_eq(rename(path, target), 0);
    cr_assert_eq(symlink(target, path), 0);
    put_entry(s, 2, key, path, sizeof path);
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(mkfifo(path, 0600), 0);
    put_entry(s, 3, key, path, sizeof path);
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(mkdir(path, 0700), 0);
    char full[512];
    put_entry(s, 4, key, full, sizeof full);
    cr_assert_eq(unlink(full), 0);
    cr_assert_eq(mkdir(full, 0700), 0);
    snprintf(inner, sizeof inner, "%s/someone-elses-file", full);
    FILE *f = fopen(inner, "w");
    cr_assert_not_null(f);
    fclose(f);

    cckey_store_report r;
    alarm(20);
    cr_assert_eq(cckey_store_verify(s, &r), CCKEY_OK);
    alarm(0);
    cr_assert_eq(r.ok, 1);
    cr_assert_eq(r.removed, 3, "symlink, FIFO and empty folder: %llu removed", (unsigned long long)r.removed);
    cr_assert_eq(r.kept, 1, "the folder with a file in it is reported, not emptied");
    cr_assert_eq(r.unreadable, 0);
    cr_assert(exists(target), "verify removed the symlink's target");
    cr_assert(exists(inner));
    for (int k = 1; k < 4; k++) {
        cckey_test_store_key(key, k);
        cckey_test_entry_path(path, sizeof path, dir, key);
        cr_assert(!exists(path), "entry %d still there", k);
    }
    cckey_store_close(s);
}

/* Verify in a child that cannot write the shard folder and cannot read one
 * entry: as root, by becoming nobody; otherwise permissions suffice. */
Test(store_hardening, verify_counts_what_it_could_not_remove_or_read)
{
    cckey_store *s = open_store();
    char key[CCKEY_KEY_LEN + 1], bad[512], locked[512], shard[512];
    put_entry(s, 0, key, bad, sizeof bad);
    /* An entry of another key in the same shard folder, found by trying. */
    int k = 1;
    for (;; k++) {
        put_entry(s, k, key, locked, sizeof locked);
        char a[512], b[512];
        shard_of_path(a, sizeof a, bad), shard_of_path(b, sizeof b, locked);
        if (strcmp(a, b) == 0) break;
    }
    FILE *f = fopen(bad, "r+b");
    cr_assert_not_null(f);
    fseek(f, -1, SEEK_END);
    fputc('!', f);   /* the last payload byte: a checksum mismatch */
    fclose(f);
    cr_assert_eq(chmod(locked, 0), 0);
    shard_of_path(shard, sizeof shard, bad);
    cr_assert_eq(chmod(shard, 0555), 0);
    cr_assert_eq(chmod(dir, 0755), 0);
    cckey_store_close(s);

    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t child = fork();
    if (child == 0) {
        close(fds[0]);
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
        cckey_store *c;
        cckey_store_report r = {0};
        if (cckey_store_open(&c, dir, 0) != CCKEY_OK || cckey_store_verify(c, &r) != CCKEY_OK) _exit(4);
        ssize_t w = write(fds[1], &r, sizeof r);
        _exit(w == sizeof r ? 0 : 5);
    }
    close(fds[1]);
    cckey_store_report r;
    cr_assert_eq(read(fds[0], &r, sizeof r), (ssize_t)sizeof r);
    close(fds[0]);
    int status;
    waitpid(child, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    chmod(shard, 0755);
    cr_assert_eq(r.removed, 0, "reported removed although the folder is read-only");
    cr_assert_eq(r.kept, 1);
    cr_assert_eq(r.unreadable, 1, "the unreadable entry was skipped silently");
    cr_assert(exists(bad));
}

/* ---- which check fired -------------------------------------------------- */

static void put_and_damage(cckey_store *s, const char *key, const char *path, size_t at, uint8_t xor_with)
{
    cr_assert_eq(cckey_store_put(s, key, "0123456789abcdef", 16), CCKEY_OK);
    int fd = open(path, O_RDWR);
    cr_assert(fd >= 0);
    uint8_t b;
    cr_assert_eq(pread(fd, &b, 1, (off_t)at), 1);
    b ^= xor_with;
    cr_assert_eq(pwrite(fd, &b, 1, (off_t)at), 1);
    close(fd);
}

static void expect_corrupt(cckey_store *s, const char *key, const char *why, const char *what)
{
    void *buf = NULL;
    size_t len;
    cckey_status st = cckey_store_get(s, key, &buf, &len);
    cr_assert_eq(st, CCKEY_ERR_CORRUPT, "%s: %s", what, cckey_strerror(st));
    cr_assert(strstr(cckey_last_error(), why), "%s: the message is \"%s\", not about \"%s\"", what,
              cckey_last_error(), why);
}

Test(store_hardening, each_check_names_itself)
{
    cckey_store *s = open_store();
    char key[CCKEY_KEY_LEN + 1], path[512];
    cckey_test_store_key(key, 7);
    cckey_test_entry_path(path, sizeof path, dir, key);
    static const struct {
        size_t at;
        const char *why, *what;
    } cases[] = {
        {0, "bad magic", "magic"},
        {8, "format version", "version"},
        {12, "bad header size", "header size"},
        {16, "header says", "payload length"},
        {CCKEY_ENTRY_SUM_AT, "checksum mismatch", "checksum field"},
        {CCKEY_ENTRY_KEY_AT + 5, "another key", "key field"},
        {CCKEY_ENTRY_HEADER - 1, "padding is not zero", "padding"},
        {CCKEY_ENTRY_HEADER + 3, "checksum mismatch", "payload byte"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        put_and_damage(s, key, path, cases[i].at, 0x40);
        expect_corrupt(s, key, cases[i].why, cases[i].what);
    }
    cr_assert_eq(cckey_store_put(s, key, "0123456789abcdef", 16), CCKEY_OK);
    cr_assert_eq(truncate(path, 100), 0);
    expect_corrupt(s, key, "less than its header", "cut inside the header");
    cr_assert_eq(cckey_store_put(s, key, "0123456789abcdef", 16), CCKEY_OK);
    cr_assert_eq(truncate(path, CCKEY_ENTRY_HEADER + 10), 0);
    expect_corrupt(s, key, "header says", "cut inside the payload");
    cckey_store_close(s);
}

/* ---- durability: the order of the syncs ----------------------------------
 * The test binary links with -Wl,--wrap=fsync,--wrap=rename: the library's
 * calls land here, are logged with what their descriptor names, and go on. */

int __real_fsync(int fd);
int __real_rename(const char *from, const char *to);

static char sync_log[64][512];
static int sync_n;
static bool logging;

static void log_op(const char *fmt, const char *a, const char *b)
{
    if (logging && sync_n < 64) snprintf(sync_log[sync_n++], sizeof sync_log[0], fmt, a, b);
}

int __wrap_fsync(int fd)
{
    char link[64], target[400] = "?";
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n >= 0) target[n] = '\0';
    log_op("fsync %s%s", target, "");
    return __real_fsync(fd);
}

int __wrap_rename(const char *from, const char *to)
{
    log_op("rename %s -> %s", from, to);
    return __real_rename(from, to);
}

Test(store_hardening, put_syncs_the_file_then_renames_then_syncs_the_folder)
{
    cckey_store *s = open_store();
    char key[CCKEY_KEY_LEN + 1], path[512], shard[512], real_dir[256];
    cr_assert_not_null(realpath(dir, real_dir));
    cckey_test_store_key(key, 9);
    cckey_test_entry_path(path, sizeof path, dir, key);
    shard_of_path(shard, sizeof shard, path);
    cr_assert_eq(mkdir(shard, 0777), 0);   /* so that only the put's own syncs are logged */
    logging = true;
    cr_assert_eq(cckey_store_put(s, key, "data", 4), CCKEY_OK);
    logging = false;
    cckey_store_close(s);
    const char *name = strrchr(path, '/') + 1;
    char want_rename_to[600], want_dir[600];
    snprintf(want_rename_to, sizeof want_rename_to, "-> %s", path);
    snprintf(want_dir, sizeof want_dir, "fsync %s/%.2s", real_dir, name - 3);
    cr_assert_eq(sync_n, 3, "expected fsync, rename, folder fsync; got %d calls (first: %s)", sync_n, sync_log[0]);
    cr_assert(strncmp(sync_log[0], "fsync ", 6) == 0 && strstr(sync_log[0], "/" CCKEY_TEMP_PREFIX),
              "first: %s", sync_log[0]);
    cr_assert(strncmp(sync_log[1], "rename ", 7) == 0 && strstr(sync_log[1], want_rename_to), "second: %s",
              sync_log[1]);
    /* The file synced is the one renamed. */
    const char *tmp_name = strstr(sync_log[0], "/" CCKEY_TEMP_PREFIX);
    cr_assert(strstr(sync_log[1], tmp_name), "synced %s, renamed %s", sync_log[0], sync_log[1]);
    cr_assert_str_eq(sync_log[2], want_dir, "third: %s", sync_log[2]);
}
