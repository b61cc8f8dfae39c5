/* Builds per key (entry format 4): header ping-pong hits the earlier build,
 * the oldest builds go first (by count and under a size limit), version 3
 * entries are still read and kept as older builds, unverified builds are
 * never served by a checked look-up, and cckey_deps_find's view of computed
 * includes, pre-includes, __has_include and #include_next. Entries are read
 * back by hand against the documented layout; checksums by OpenSSL. */
#include "support.h"
#include "store/store_internal.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64], store_dir[200], src_dir[200], inc_dir[200];

static void put_text(const char *folder, const char *rel, const char *text)
{
    cr_assert(cckey_test_write_text(folder, rel, text), "%s/%s", folder, rel);
}

static void setup(void)
{
    cr_assert(cckey_test_make_dir(dir, "variants"));
    snprintf(store_dir, sizeof store_dir, "%s/store", dir);
    cr_assert(cckey_test_sub_dir(src_dir, sizeof src_dir, dir, "src"));
    cr_assert(cckey_test_sub_dir(inc_dir, sizeof inc_dir, dir, "inc"));
    put_text(src_dir, "h.h", "#define V 1\n");
}
static void teardown(void) { cckey_test_remove_tree(dir); }
TestSuite(variants, .init = setup, .fini = teardown);

static const char SRC[] = "#include \"h.h\"\n__kernel void k(void) {}\n";

/* A build of SRC with its headers as they are now; its binary is bin. */
static uint32_t put_build(cckey_store *s, const char *bin, size_t len, const char *unverified)
{
    const char *roots[] = {src_dir};
    cckey_dep *d;
    size_t n;
    cr_assert_eq(cckey_deps_scan(SRC, strlen(SRC), roots, 1, NULL, &d, &n), CCKEY_OK);
    cckey_entry_meta meta = {"OpenCL", "1.0", NULL, 0, d, n, NULL};
    cckey_put_options opt = {.unverified = unverified};
    char key[CCKEY_KEY_LEN + 1];
    cckey_test_src_key(key, SRC);
    cr_assert_eq(cckey_store_put_ex(s, key, bin, len, &meta, &opt), CCKEY_OK, "%s", cckey_last_error());
    cckey_deps_free(d, n);
    return opt.variants;
}

/* A checked look-up: the status, and on a hit the payload and which build. */
static cckey_status get(cckey_store *s, char **bin, size_t *len, cckey_lookup_info *info)
{
    const char *roots[] = {src_dir};
    cckey_lookup lk = {.compiler = "OpenCL", .version = "1.0", .roots = roots, .n_roots = 1};
    char key[CCKEY_KEY_LEN + 1];
    cckey_test_src_key(key, SRC);
    void *buf;
    cckey_status st = cckey_store_get_info(s, key, &lk, &buf, len, info);
    *bin = buf;
    if (st != CCKEY_OK) cr_assert_null(buf);
    return st;
}

static void expect_hit(cckey_store *s, const char *bin, uint32_t variant, uint32_t variants)
{
    char *got;
    size_t len;
    cckey_lookup_info info;
    cr_assert_eq(get(s, &got, &len, &info), CCKEY_OK, "%s", cckey_last_error());
    cr_assert_eq(len, strlen(bin));
    cr_assert_eq(memcmp(got, bin, len), 0, "served %.*s, not %s", (int)len, got, bin);
    cr_assert_eq(info.variant, variant);
    cr_assert_eq(info.variants, variants);
    cckey_store_free_buffer(got);
}

static void expect_miss(cckey_store *s, cckey_miss why)
{
    char *got;
    size_t len;
    cckey_lookup_info info;
    cr_assert_eq(get(s, &got, &len, &info), CCKEY_ERR_STALE);
    cr_assert_eq(info.why, why, "%s", cckey_last_error());
}

static char *entry_file(void) { return cckey_test_src_entry(store_dir, SRC); }

Test(variants, header_ping_pong_hits_the_earlier_build)
{
    cckey_store *s;
    cr_assert_eq(cckey_store_open(&s, store_dir, 0), CCKEY_OK);
    cr_assert_eq(put_build(s, "BUILD-ONE", 9, NULL), 1);
    expect_hit(s, "BUILD-ONE", 0, 1);
    put_text(src_dir, "h.h", "#define V 2\n");
    expect_miss(s, CCKEY_MISS_HEADERS);
    cr_assert_eq(put_build(s, "BUILD-TWO!", 10, NULL), 2);
    expect_hit(s, "BUILD-TWO!", 0, 2);
    put_text(src_dir, "h.h", "#define V 1\n");   /* restored */
    expect_hit(s, "BUILD-ONE", 1, 2);
    /* The same build again (--force): replaced, not added. */
    cr_assert_eq(put_build(s, "BUILD-ONE", 9, NULL), 2);
    expect_hit(s, "BUILD-ONE", 0, 2);
    /* The file, by hand: version 4, two builds, binaries back to back. */
    size_t n;
    uint8_t *f = (uint8_t *)cckey_test_read_file(entry_file(), &n);
    cr_assert_eq(f[8], 4);
    cr_assert_eq(f[176], 2);
    uint32_t rlen = (uint32_t)(f[172] | f[173] << 8 | f[174] << 16 | (uint32_t)f[175] << 24);
    cr_assert_eq(memcmp(f + 192 + rlen, "BUILD-ONEBUILD-TWO!", 19), 0);
    cr_assert_eq(n, 192 + rlen + 19);
    free(f);
    /* A plain put has no records: it replaces every build. */
    char key[CCKEY_KEY_LEN + 1];
    cckey_test_src_key(key, SRC);
    cr_assert_eq(cckey_store_put(s, key, "PLAIN", 5), CCKEY_OK);
    void *buf;
    size_t len;
    cckey_lookup_info info;
    cr_assert_eq(cckey_store_get_info(s, key, NULL, &buf, &len, &info), CCKEY_OK);
    cr_assert_eq(info.variants, 1);
    cckey_store_free_buffer(buf);
    cckey_store_close(s);
}

/* Build i: the header says V i, the binary "B<i>" padded to size. */
static void build_number(cckey_store *s, int i, size_t size, char *bin)
{
    char text[64];
    snprintf(text, sizeof text, "#define V %d\n", i);
    put_text(src_dir, "h.h", text);
    memset(bin, '.', size);
    snprintf(bin, size, "B%d", i);
    bin[strlen(bin)] = '.';
    bin[size] = '\0';
    put_build(s, bin, size, NULL);
}

Test(variants, at_most_eight_builds_the_oldest_go_first)
{
    cckey_store *s;
    cr_assert_eq(cckey_store_open(&s, store_dir, 0), CCKEY_OK);
    char bins[10][32];
    for (int i = 1; i <= 9; i++) build_number(s, i, 20, bins[i]);
    for (int i = 2; i <= 9; i++) {
        char text[64];
        snprintf(text, sizeof text, "#define V %d\n", i);
        put_text(src_dir, "h.h", text);
        expect_hit(s, bins[i], (uint32_t)(9 - i), 8);
    }
    put_text(src_dir, "h.h", "#define V 1\n");
    expect_miss(s, CCKEY_MISS_HEADERS);
    cckey_store_close(s);
}

Test(variants, under_a_size_limit_older_builds_fit_in_an_eighth)
{
    cckey_store *s;
    /* 8 KiB for one key: two 3000-byte builds fit, three do not. */
    cr_assert_eq(cckey_store_open(&s, store_dir, 64 << 10), CCKEY_OK);
    char bins[4][3001];
    for (int i = 1; i <= 3; i++) build_number(s, i, 3000, bins[i]);
    put_text(src_dir, "h.h", "#define V 1\n");
    expect_miss(s, CCKEY_MISS_HEADERS);
    put_text(src_dir, "h.h", "#define V 2\n");
    expect_hit(s, bins[2], 1, 2);
    struct stat st;
    cr_assert_eq(stat(entry_file(), &st), 0);
    cr_assert_leq(st.st_size, (64 << 10) / 8);
    /* A build larger than the eighth still goes in, alone. */
    static char big[20001];
    build_number(s, 4, 20000, big);
    expect_hit(s, big, 0, 1);
    cckey_store_close(s);
}

Test(variants, version_3_entries_are_read_and_kept_as_older_builds)
{
    cckey_store *s;
    cr_assert_eq(cckey_store_open(&s, store_dir, 0), CCKEY_OK);
    put_build(s, "OLD-FORMAT", 10, NULL);
    /* The same entry as version 3 wrote it: no build record, no count. */
    size_t n;
    uint8_t *f = (uint8_t *)cckey_test_read_file(entry_file(), &n);
    cr_assert_eq(f[192], CCKEY_REC_VARIANT);
    uint32_t rlen = (uint32_t)(f[172] | f[173] << 8 | f[174] << 16 | (uint32_t)f[175] << 24) - 32;
    memmove(f + 192, f + 192 + 32, n - 192 - 32);
    n -= 32;
    f[8] = 3, f[172] = (uint8_t)rlen, f[173] = (uint8_t)(rlen >> 8), f[176] = 0;
    cckey_test_entry_seal(f, n);
    cr_assert(cckey_test_write_file(entry_file(), f, n));
    free(f);
    expect_hit(s, "OLD-FORMAT", 0, 1);
    /* A header edit and a new build: the version 3 build stays, older. */
    put_text(src_dir, "h.h", "#define V 2\n");
    expect_miss(s, CCKEY_MISS_HEADERS);
    cr_assert_eq(put_build(s, "NEW-FORMAT", 10, NULL), 2);
    put_text(src_dir, "h.h", "#define V 1\n");
    expect_hit(s, "OLD-FORMAT", 1, 2);
    /* A version 3 header with a build count is damaged: a miss, removed. */
    f = (uint8_t *)cckey_test_read_file(entry_file(), &n);
    f[8] = 3;
    cckey_test_entry_seal(f, n);
    cr_assert(cckey_test_write_file(entry_file(), f, n));
    free(f);
    char *got;
    size_t len;
    cckey_lookup_info info;
    cr_assert_eq(get(s, &got, &len, &info), CCKEY_ERR_CORRUPT);
    cr_assert_eq(access(entry_file(), F_OK), -1);
    cckey_store_close(s);
}

/* Two builds of the key: header V 1, then V 2. */
static cckey_store *two_builds(void)
{
    cckey_store *s;
    cr_assert_eq(cckey_store_open(&s, store_dir, 0), CCKEY_OK);
    put_build(s, "ONE", 3, NULL);
    put_text(src_dir, "h.h", "#define V 2\n");
    put_build(s, "TWO", 3, NULL);
    return s;
}

Test(variants, build_counts_that_do_not_add_up_are_corrupt)
{
    cckey_store *s = two_builds();
    size_t n;
    uint8_t *f = (uint8_t *)cckey_test_read_file(entry_file(), &n);
    f[176] = 3;   /* the header claims a third build */
    cckey_test_entry_seal(f, n);
    cr_assert(cckey_test_write_file(entry_file(), f, n));
    cckey_store_report r;
    cr_assert_eq(cckey_store_verify(s, &r), CCKEY_OK);
    cr_assert_eq(r.removed, 1, "cache verify checks the builds' layout");
    free(f);
    cckey_store_close(s);
}

Test(variants, unverified_builds_are_never_served_checked)
{
    cckey_store *s;
    cr_assert_eq(cckey_store_open(&s, store_dir, 0), CCKEY_OK);
    put_build(s, "UNSURE", 6, "k.cl:2: #include HDR");
    expect_miss(s, CCKEY_MISS_UNVERIFIED);
    cr_assert(strstr(cckey_last_error(), "k.cl:2: #include HDR"), "%s", cckey_last_error());
    char key[CCKEY_KEY_LEN + 1];
    cckey_test_src_key(key, SRC);
    void *buf;
    size_t len;
    cr_assert_eq(cckey_store_get(s, key, &buf, &len), CCKEY_OK, "an unchecked get checks nothing");
    cckey_store_free_buffer(buf);
    /* A verified build replaces it rather than keeping it as an older one. */
    cr_assert_eq(put_build(s, "SURE", 4, NULL), 1);
    expect_hit(s, "SURE", 0, 1);
    cckey_store_close(s);
}

static int count_info(void *user, const cckey_store_entry_info *e)
{
    uint32_t *v = user;
    v[0] += e->variants, v[1] = e->version;
    return 0;
}

Test(variants, listing_shows_the_builds)
{
    cckey_store *s = two_builds();
    uint32_t v[2] = {0, 0};
    cr_assert_eq(cckey_store_list_info(s, count_info, v), CCKEY_OK);
    cr_assert_eq(v[0], 2);
    cr_assert_eq(v[1], 4);
    cckey_store_close(s);
}

/* ---- cckey_deps_find ------------------------------------------------------ */

static const cckey_dep *dep(const cckey_deps_result *r, uint32_t root, const char *path)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->deps[i].root == root && strcmp(r->deps[i].path, path) == 0) return &r->deps[i];
    return NULL;
}

Test(variants, computed_includes_need_a_preprocessor)
{
    put_text(src_dir, "m.h", "#define M 1\n");
    static const char src[] = "#define HDR \"m.h\"\n#include HDR\n";
    const char *roots[] = {src_dir, inc_dir};
    cckey_deps_request rq = {.source = src, .len = strlen(src), .roots = roots, .n_roots = 2, .source_name = "k.cl"};
    cckey_deps_result r;
    cr_assert_eq(cckey_deps_find(&rq, &r), CCKEY_OK, "%s", cckey_last_error());
    cr_assert_eq(r.complete, 0);
    cr_assert_str_eq(r.why, "k.cl:2: #include HDR");
    cr_assert_not_null(dep(&r, 0, "m.h"), "the #define'd string is probed besides");
    cckey_deps_result_free(&r);
    /* What a preprocessor says it expanded to: complete. */
    cckey_include in = {NULL, "m.h", 0, 0};
    rq.includes = &in, rq.n_includes = 1, rq.preprocessed = 1;
    cr_assert_eq(cckey_deps_find(&rq, &r), CCKEY_OK);
    cr_assert_eq(r.complete, 1);
    const cckey_dep *d = dep(&r, 0, "m.h");
    cr_assert(d && d->present);
    cckey_deps_result_free(&r);
}

Test(variants, pre_includes_has_include_and_include_next)
{
    put_text(inc_dir, "pre.h", "#include_next <n.h>\n");
    put_text(inc_dir, "n.h", "\n");
    char inc2[300];
    snprintf(inc2, sizeof inc2, "%s/inc2", dir);
    mkdir(inc2, 0777);
    put_text(inc2, "n.h", "\n");
    static const char src[] = "#if __has_include(\"opt.h\") && defined(X)\n#endif\n";
    const char *roots[] = {src_dir, inc_dir, inc2};
    const char *pre[] = {"pre.h"};
    cckey_deps_request rq = {.source = src, .len = strlen(src), .roots = roots, .n_roots = 3, .pre_includes = pre,
                             .n_pre_includes = 1};
    cckey_deps_result r;
    cr_assert_eq(cckey_deps_find(&rq, &r), CCKEY_OK, "%s", cckey_last_error());
    cr_assert_eq(r.complete, 1);
    /* pre.h: searched from the source's folder on, found in inc. */
    cr_assert(dep(&r, 0, "pre.h") && !dep(&r, 0, "pre.h")->present);
    cr_assert(dep(&r, 1, "pre.h") && dep(&r, 1, "pre.h")->present);
    /* #include_next from inc: inc2's n.h, inc's own never probed. */
    cr_assert(dep(&r, 2, "n.h") && dep(&r, 2, "n.h")->present);
    cr_assert_null(dep(&r, 1, "n.h"));
    /* __has_include probes every root. */
    for (uint32_t k = 0; k < 3; k++) cr_assert(dep(&r, k, "opt.h") && !dep(&r, k, "opt.h")->present);
    cckey_deps_result_free(&r);
    /* CCCL's shape: the probe inside a macro, called on a name in an #if. */
    static const char cccl[] = "#define HAS(_X) __has_include(_X)\n#if HAS(<cc.h>)\n#endif\n";
    rq.source = cccl, rq.len = strlen(cccl);
    cr_assert_eq(cckey_deps_find(&rq, &r), CCKEY_OK);
    cr_assert_eq(r.complete, 1, "%s", r.why);
    for (uint32_t k = 0; k < 3; k++) cr_assert(dep(&r, k, "cc.h") && !dep(&r, k, "cc.h")->present);
    cckey_deps_result_free(&r);
    static const char macro[] = "#if __has_include(OPT)\n#endif\n";
    rq.source = macro, rq.len = strlen(macro);
    cr_assert_eq(cckey_deps_find(&rq, &r), CCKEY_OK);
    cr_assert_eq(r.complete, 0, "__has_include of a macro is not resolved");
    cckey_deps_result_free(&r);
    /* An absolute include keeps its folder (it was recorded as an absent
     * relative path). */
    char abs[400];
    snprintf(abs, sizeof abs, "#include \"%s/n.h\"\n", inc_dir);
    rq.source = abs, rq.len = strlen(abs);
    cr_assert_eq(cckey_deps_find(&rq, &r), CCKEY_OK);
    char want[400];
    snprintf(want, sizeof want, "%s/n.h", inc_dir);
    cr_assert(dep(&r, CCKEY_DEP_ABSOLUTE, want) && dep(&r, CCKEY_DEP_ABSOLUTE, want)->present, "%s", want);
    cckey_deps_result_free(&r);
}
