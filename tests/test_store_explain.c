/* Why a look-up missed (cckey_store_get_explained) and read-only handles
 * (cckey_store_open_read_only), through the public API only: each reason
 * made by a real change (a header edited, another compiler version, flags,
 * a damaged byte), and a read-only handle proven to write nothing by the
 * folder's own files (names, sizes, modification times). */
#include "support.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];
static char store_dir[200], src_dir[200];

static void put_text(const char *rel, const char *text)
{
    cr_assert(cckey_test_write_text(src_dir, rel, text), "%s/%s", src_dir, rel);
}

static void setup(void)
{
    cr_assert(cckey_test_make_dir(dir, "explain"));
    snprintf(store_dir, sizeof store_dir, "%s/store", dir);
    cr_assert(cckey_test_sub_dir(src_dir, sizeof src_dir, dir, "src"));
    put_text("hdr.h", "#define V 1\n");
}
static void teardown(void) { cckey_test_remove_tree(dir); }
TestSuite(explain, .init = setup, .fini = teardown);

static const char SRC[] = "#include \"hdr.h\"\n__kernel void k(void) {}\n";
static const char *const FLAGS[] = {"-DN=4"};

static void put(cckey_store *s)
{
    const char *roots[] = {src_dir};
    cckey_dep *d;
    size_t n;
    cr_assert_eq(cckey_deps_scan(SRC, strlen(SRC), roots, 1, NULL, &d, &n), CCKEY_OK);
    cckey_entry_meta meta = {.compiler = "OpenCL", .version = "PoCL 3.1", .options = FLAGS, .n_options = 1,
                             .deps = d, .n_deps = n};
    char key[CCKEY_KEY_LEN + 1];
    cckey_test_src_key(key, SRC);
    cr_assert_eq(cckey_store_put_meta(s, key, SRC, strlen(SRC), &meta), CCKEY_OK);
    cckey_deps_free(d, n);
}

/* A look-up as a build with this compiler, version and flag would make it. */
static cckey_miss why(cckey_store *s, const char *compiler, const char *version, const char *flag)
{
    const char *roots[] = {src_dir};
    const char *flags[] = {flag};
    cckey_lookup lk = {.compiler = compiler, .version = version, .options = flags, .n_options = 1, .roots = roots,
                       .n_roots = 1};
    char key[CCKEY_KEY_LEN + 1];
    cckey_test_src_key(key, SRC);
    void *buf;
    size_t len;
    cckey_miss m = (cckey_miss)-1;
    cckey_status st = cckey_store_get_explained(s, key, &lk, &buf, &len, &m);
    cr_assert_eq(st == CCKEY_OK, m == CCKEY_MISS_NONE, "status %d, reason %d", st, m);
    if (st == CCKEY_OK) cr_assert_eq(memcmp(buf, SRC, len), 0);
    else cr_assert_null(buf);
    cckey_store_free_buffer(buf);
    if (m == CCKEY_MISS_ABSENT) cr_assert_eq(st, CCKEY_ERR_NOT_FOUND);
    if (m == CCKEY_MISS_HEADERS || m == CCKEY_MISS_TOOLCHAIN) cr_assert_eq(st, CCKEY_ERR_STALE);
    if (m == CCKEY_MISS_CORRUPT) cr_assert_eq(st, CCKEY_ERR_CORRUPT);
    return m;
}

static char *entry_path(void) { return cckey_test_src_entry(store_dir, SRC); }

static void flip_last_byte(const char *path)
{
    int fd = open(path, O_RDWR);
    cr_assert(fd >= 0, "%s", path);
    off_t end = lseek(fd, -1, SEEK_END);
    uint8_t b;
    cr_assert_eq(pread(fd, &b, 1, end), 1);
    b ^= 0xFF;
    cr_assert_eq(pwrite(fd, &b, 1, end), 1);
    close(fd);
}

Test(explain, each_reason_from_a_real_change)
{
    cckey_store *s;
    cr_assert_eq(cckey_store_open(&s, store_dir, 0), CCKEY_OK);
    cr_assert_eq(why(s, "OpenCL", "PoCL 3.1", "-DN=4"), CCKEY_MISS_ABSENT);
    put(s);
    cr_assert_eq(why(s, "OpenCL", "PoCL 3.1", "-DN=4"), CCKEY_MISS_NONE);
    cr_assert_eq(why(s, "OpenCL", "PoCL 6.0", "-DN=4"), CCKEY_MISS_TOOLCHAIN, "another version");
    cr_assert_eq(why(s, "NVRTC", "PoCL 3.1", "-DN=4"), CCKEY_MISS_TOOLCHAIN, "another compiler");
    cr_assert_eq(why(s, "OpenCL", "PoCL 3.1", "-DN=8"), CCKEY_MISS_TOOLCHAIN, "other flags");
    put_text("hdr.h", "#define V 2\n");
    cr_assert_eq(why(s, "OpenCL", "PoCL 3.1", "-DN=4"), CCKEY_MISS_HEADERS);
    cr_assert(strstr(cckey_last_error(), "hdr.h"), "%s", cckey_last_error());
    put(s);
    cr_assert_eq(why(s, "OpenCL", "PoCL 3.1", "-DN=4"), CCKEY_MISS_NONE);
    flip_last_byte(entry_path());
    cr_assert_eq(why(s, "OpenCL", "PoCL 3.1", "-DN=4"), CCKEY_MISS_CORRUPT);
    cr_assert_eq(access(entry_path(), F_OK), -1, "a writable handle removes the damaged entry");
    cr_assert_eq(why(s, "OpenCL", "PoCL 3.1", "-DN=4"), CCKEY_MISS_ABSENT);
    cckey_store_close(s);
}

/* Every file under a folder: path, size and modification time. */
static void listing(const char *folder, char *out, size_t cap)
{
    out[0] = '\0';
    DIR *d = opendir(folder);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2]))) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", folder, e->d_name);
        struct stat st;
        cr_assert_eq(lstat(path, &st), 0);
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s %lld %lld.%09ld\n", path, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                 st.st_mtim.tv_nsec);
        if (S_ISDIR(st.st_mode)) listing(path, out + strlen(out), cap - strlen(out));
    }
    closedir(d);
}

Test(explain, a_read_only_handle_writes_nothing)
{
    cckey_store *ro;
    /* A missing folder: an empty store, not created. */
    cr_assert_eq(cckey_store_open_read_only(&ro, store_dir), CCKEY_OK);
    cr_assert_eq(why(ro, "OpenCL", "PoCL 3.1", "-DN=4"), CCKEY_MISS_ABSENT);
    cckey_store_close(ro);
    cr_assert_eq(access(store_dir, F_OK), -1, "the folder was made");

    cckey_store *s;
    cr_assert_eq(cckey_store_open(&s, store_dir, 0), CCKEY_OK);
    put(s);
    cckey_store_close(s);
    char before[8192], after[8192];
    listing(store_dir, before, sizeof before);
    cr_assert_eq(cckey_store_open_read_only(&ro, store_dir), CCKEY_OK);
    usleep(20 * 1000);   /* a use mark written now would differ from the put's time */
    cr_assert_eq(why(ro, "OpenCL", "PoCL 3.1", "-DN=4"), CCKEY_MISS_NONE);
    cr_assert_eq(why(ro, "OpenCL", "PoCL 6.0", "-DN=4"), CCKEY_MISS_TOOLCHAIN);
    char key[CCKEY_KEY_LEN + 1];
    cckey_test_src_key(key, SRC);
    uint64_t n;
    cckey_store_report rep;
    cr_assert_eq(cckey_store_put(ro, key, "x", 1), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_store_put_meta(ro, key, "x", 1, NULL), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_store_verify(ro, &rep), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_store_clear(ro, &n), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_store_trim(ro, &n), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_store_import(ro, 0, 0, NULL), CCKEY_ERR_INVALID_ARG);
    cckey_store_close(ro);   /* no hit or miss counters written either */
    listing(store_dir, after, sizeof after);
    cr_assert_str_eq(after, before);

    /* A damaged entry is reported and left where it is. */
    flip_last_byte(entry_path());
    listing(store_dir, before, sizeof before);
    cr_assert_eq(cckey_store_open_read_only(&ro, store_dir), CCKEY_OK);
    cr_assert_eq(why(ro, "OpenCL", "PoCL 3.1", "-DN=4"), CCKEY_MISS_CORRUPT);
    cckey_store_close(ro);
    listing(store_dir, after, sizeof after);
    cr_assert_str_eq(after, before);

    /* Not a folder: an error, as for cckey_store_open. */
    cr_assert_eq(cckey_store_open_read_only(&ro, entry_path()), CCKEY_ERR_IO);
    cr_assert_null(ro);
}
