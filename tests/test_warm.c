/* cckey scan + warm + cache, end to end on a real OpenCL runtime (PoCL here
 * and in CI): binaries land under the keys an independent recipe (OpenSSL)
 * gives, load back into the runtime with their entry points, a second warm
 * compiles nothing, two warms at once leave a valid store, and failures are
 * reported per tuple. Skips where no OpenCL device exists. */
#include "support.h"
#include "backends/gpu_devices.h"
#include "backends/opencl.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64], device[512];
static const cckey_cl_api *cl;
static cckey_cl_device dev;

static void setup(void) { cr_assert(cckey_test_make_dir(dir, "warm")); }

static void teardown(void)
{
    if (!cckey_test_remove_tree(dir)) cr_log_warn("could not remove %s", dir);
}

TestSuite(warm, .init = setup, .fini = teardown, .timeout = 300);

/* The first usable OpenCL device, or skip. */
static void need_opencl(void)
{
    const char *why = NULL;
    cl = cckey_cl_load(&why);
    if (!cl) cr_skip_test("no OpenCL runtime: %s", why);
    cckey_cl_device devs[16];
    size_t n = 0;
    char buf[256];
    if (cckey_cl_enumerate(cl, devs, 16, &n, buf, sizeof buf) != CCKEY_OK) cr_skip_test("%s", buf);
    for (size_t i = 0; i < n && i < 16; i++)
        if (devs[i].info.usable) {
            dev = devs[i];
            cckey_device_ident(&dev.info, device, sizeof device);
            return;
        }
    cr_skip_test("no usable OpenCL device");
}

/* Run the CLI through the shell; stdout and stderr land in DIR/out, DIR/err. */
static int cli(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int cli(const char *fmt, ...)
{
    char args[4096], cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s >out 2>err", dir, CCKEY_BIN, args);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *output(const char *which)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, which);
    char *s = cckey_test_read_file(path, NULL);
    cr_assert_not_null(s);
    return s;
}

static void expect_summary(const char *want)
{
    char *out = output("out"), *err = output("err");
    cr_assert(strstr(out, want), "summary \"%s\" not in:\n%s\nstderr:\n%s", want, out, err);
    free(out), free(err);
}

#define SUITE CCKEY_EXAMPLES "/kernels/opencl/vector_ops.cl"
static const char *const entries[] = {"vec_add", "vec_scale", "saxpy"};

/* The six keys of the scan below, by the definition (OpenSSL). */
static void expected_keys(char keys[6][CCKEY_KEY_LEN + 1])
{
    size_t len;
    char *src = cckey_test_read_file(SUITE, &len);
    cr_assert_not_null(src);
    cckey_option set[] = {{{"-cl-fast-relaxed-math", 21}, {"", 0}}, {{"-D", 2}, {"UNROLL=4", 8}}};
    for (int e = 0; e < 3; e++)
        for (int o = 0; o < 2; o++)
            cckey_test_ref_key(keys[e * 2 + o], (cckey_bytes){device, strlen(device)},
                               (cckey_bytes){entries[e], strlen(entries[e])}, (cckey_bytes){src, len}, set,
                               o ? 2 : 0);
    free(src);
}

static void scan_suite(void)
{
    cr_assert_eq(cli("scan '%s' --device '%s' -O '' -O '-cl-fast-relaxed-math,-DUNROLL=4' -o m.jsonl", SUITE, device),
                 0);
    char *m = output("m.jsonl");
    size_t lines = 0;
    for (char *p = m; *p; p++) lines += *p == '\n';
    cr_assert_eq(lines, 6, "%s", m);
    free(m);
}

/* The stored binary of key loads into the runtime and holds name. */
static void expect_loadable(cckey_store *s, const char *key, const char *name)
{
    void *bin;
    size_t len;
    cr_assert_eq(cckey_store_get(s, key, &bin, &len), CCKEY_OK, "%s: %s", name, cckey_last_error());
    cl_int err;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)dev.platform, 0};
    cl_context ctx = cl->CreateContext(props, 1, &dev.device, NULL, NULL, &err);
    cr_assert_not_null(ctx);
    const unsigned char *b = bin;
    cl_int status;
    cl_program p = cl->CreateProgramWithBinary(ctx, 1, &dev.device, &len, &b, &status, &err);
    cr_assert_not_null(p, "binary of %s rejected: %s", name, cckey_cl_status_name(err));
    cr_assert_eq(cl->BuildProgram(p, 1, &dev.device, "", NULL, NULL), CL_SUCCESS);
    cl_kernel k = cl->CreateKernel(p, name, &err);
    cr_assert_not_null(k, "no kernel %s in the stored binary", name);
    cl->ReleaseKernel(k);
    cl->ReleaseProgram(p);
    cl->ReleaseContext(ctx);
    cckey_store_free_buffer(bin);
}

Test(warm, compiles_once_and_stores_real_binaries_under_the_right_keys)
{
    need_opencl();
    scan_suite();
    cr_assert_eq(cli("warm m.jsonl --cache-dir c -j 2 -q"), 0);
    expect_summary("6 compiled in 2 builds, 0 already cached, 0 failed");

    char keys[6][CCKEY_KEY_LEN + 1], path[128];
    expected_keys(keys);
    snprintf(path, sizeof path, "%s/c", dir);
    cckey_store *s;
    cr_assert_eq(cckey_store_open(&s, path, 0), CCKEY_OK);
    for (int i = 0; i < 6; i++) expect_loadable(s, keys[i], entries[i / 2]);

    /* Again: everything is cached, nothing is compiled. */
    cr_assert_eq(cli("warm m.jsonl --cache-dir c"), 0);
    expect_summary("0 compiled in 0 builds, 6 already cached, 0 failed");

    /* A damaged entry is recompiled. */
    void *bin;
    size_t len;
    cr_assert_eq(cckey_store_get(s, keys[3], &bin, &len), CCKEY_OK);
    cckey_store_free_buffer(bin);
    char name[CCKEY_KEY_LEN + 1], cmd[512];
    for (int i = 0; i <= CCKEY_KEY_LEN; i++) name[i] = keys[3][i] == ':' ? '-' : keys[3][i];
    snprintf(cmd, sizeof cmd, "truncate -s 100 '%s'/c/*/%s", dir, name);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(cli("warm m.jsonl --cache-dir c"), 0);
    expect_summary("1 compiled in 1 build, 5 already cached, 0 failed");
    expect_loadable(s, keys[3], entries[1]);

    /* The cache command sees the same store. */
    cr_assert_eq(cli("cache verify --cache-dir c"), 0);
    expect_summary("ok: 6");
    cr_assert_eq(cli("cache get %s --cache-dir c -o got.bin", keys[0]), 0);
    char got[128];
    snprintf(got, sizeof got, "%s/got.bin", dir);
    size_t got_len;
    char *g = cckey_test_read_file(got, &got_len);
    cr_assert_eq(cckey_store_get(s, keys[0], &bin, &len), CCKEY_OK);
    cr_assert_eq(got_len, len);
    cr_assert_eq(memcmp(g, bin, len), 0);
    free(g);
    cckey_store_free_buffer(bin);
    cr_assert_eq(cli("cache clear --cache-dir c"), 0);
    expect_summary("removed: 6");
    cr_assert_eq(cli("cache stats --cache-dir c"), 0);
    expect_summary("entries:           0 (0 builds)");
    cckey_store_close(s);
}

Test(warm, two_warms_at_once_leave_a_valid_store)
{
    need_opencl();
    scan_suite();
    pid_t kids[2];
    for (int i = 0; i < 2; i++) {
        kids[i] = fork();
        cr_assert_neq(kids[i], -1);
        if (kids[i] == 0) {
            char cmd[4096];
            snprintf(cmd, sizeof cmd, "cd '%s' && '%s' warm m.jsonl --cache-dir c -j 1 -q >out%d 2>err%d", dir,
                     CCKEY_BIN, i, i);
            int st = system(cmd);
            _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 99);
        }
    }
    for (int i = 0; i < 2; i++) {
        int st;
        waitpid(kids[i], &st, 0);
        char which[8];
        snprintf(which, sizeof which, "err%d", i);
        char *err = output(which);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "warm %d failed:\n%s", i, err);
        free(err);
    }
    char keys[6][CCKEY_KEY_LEN + 1], path[128];
    expected_keys(keys);
    snprintf(path, sizeof path, "%s/c", dir);
    uint64_t ok;
    cckey_store *s = cckey_test_open_sound(path, &ok);
    cr_assert(s, "the concurrent warms left damage or temporary files");
    cr_assert_eq(ok, 6);
    for (int i = 0; i < 6; i++) expect_loadable(s, keys[i], entries[i / 2]);
    cckey_store_close(s);
}

/* Whether the manifest line's device is the ident of one of the devices
 * kind enumerates. */
static bool device_of(cckey_backend_kind kind, const char *line)
{
    const char *d = strstr(line, "\"device\":\"");
    cr_assert_not_null(d, "%s", line);
    d += strlen("\"device\":\"");
    size_t len = strcspn(d, "\"");
    cckey_device_info devs[16];
    size_t n = 0;
    char why[256], id[512];
    if (cckey_backend_devices(kind, NULL, devs, 16, &n, why, sizeof why) != CCKEY_OK) return false;
    for (size_t i = 0; i < n && i < 16; i++) {
        cckey_device_ident(&devs[i], id, sizeof id);
        if (strlen(id) == len && memcmp(id, d, len) == 0) return true;
    }
    return false;
}

/* Without --device, scan pairs each source only with the devices whose
 * runtime compiles it, so the manifest it writes warms without failures. */
Test(warm, default_devices_take_only_the_sources_they_compile)
{
    need_opencl();
    cr_assert_eq(cli("scan '%s/kernels' -o m.jsonl", CCKEY_EXAMPLES), 0);
    char *m = output("m.jsonl"), *err = output("err");
    size_t n_opencl = 0, n_cuda = 0;
    for (char *line = strtok(m, "\n"); line; line = strtok(NULL, "\n")) {
        if (strstr(line, "\"language\":\"opencl\"")) {
            n_opencl++;
            cr_assert(device_of(CCKEY_BACKEND_OPENCL, line), "not an OpenCL device: %s", line);
        } else {
            cr_assert(strstr(line, "\"language\":\"cuda\""), "%s", line);
            n_cuda++;
            cr_assert(device_of(CCKEY_BACKEND_CUDA, line), "not a CUDA device: %s", line);
        }
    }
    cr_assert_geq(n_opencl, 7);
    if (n_cuda == 0)
        cr_assert(strstr(err, "CUDA entry points skipped: no CUDA device here"), "no warning:\n%s", err);
    free(m), free(err);

    cr_assert_eq(cli("warm m.jsonl --cache-dir c -q"), 0, "%s", output("err"));
    expect_summary(", 0 already cached, 0 failed");
    cr_assert_eq(cli("warm m.jsonl --cache-dir c -q"), 0);
    expect_summary("0 compiled in 0 builds");

    /* Devices the user names take every source. */
    cr_assert_eq(cli("scan '%s/kernels' -d a -d b -o m2.jsonl", CCKEY_EXAMPLES), 0);
    m = output("m2.jsonl");
    size_t lines = 0;
    for (char *p = m; *p; p++) lines += *p == '\n';
    cr_assert_eq(lines, 2 * 12, "%s", m);
    free(m);
}

Test(warm, failures_are_per_tuple_and_reported)
{
    need_opencl();
    char path[128];
    snprintf(path, sizeof path, "%s/f.jsonl", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "{\"device\": \"%s\", \"name\": \"ok\", \"source\": \"__kernel void ok(__global int *p) { p[0] = 1; }\"}\n",
            device);
    fprintf(f, "{\"device\": \"%s\", \"name\": \"broken\", \"source\": \"__kernel void broken(__global int *p) "
               "{ p[0] = no_such_thing; }\"}\n", device);
    fprintf(f, "{\"device\": \"%s\", \"name\": \"absent\", \"source\": \"__kernel void ok(__global int *p) { p[0] = 1; }\"}\n",
            device);
    fprintf(f, "{\"device\": \"No Such GPU|0.0\", \"name\": \"ok\", \"source\": \"__kernel void ok(__global int *p) "
               "{ p[0] = 1; }\"}\n");
    fprintf(f, "{\"device\": \"%s\", \"name\": \"k\", \"source\": \"kernel void k() {}\", \"language\": \"metal\"}\n",
            device);
    fclose(f);
    cr_assert_eq(cli("warm f.jsonl --cache-dir c -q"), 1);
    expect_summary("1 compiled in 2 builds, 0 already cached, 4 failed");
    char *err = output("err");
    cr_assert(strstr(err, "f.jsonl:2: broken") && strstr(err, "build failed"), "%s", err);
    cr_assert(strstr(err, "compiler log"), "the compiler's log is missing:\n%s", err);
    cr_assert(strstr(err, "no_such_thing"), "%s", err);
    cr_assert(strstr(err, "f.jsonl:3: absent") && strstr(err, "no entry point \"absent\""), "%s", err);
    cr_assert(strstr(err, "f.jsonl:4: ok") && strstr(err, "no OpenCL device here is \"No Such GPU|0.0\""), "%s", err);
    cr_assert(strstr(err, "f.jsonl:5: k") && strstr(err, "cannot compile metal"), "%s", err);
    free(err);

    /* A bad manifest line is bad input: nothing is compiled. */
    f = fopen(path, "a");
    fputs("{\"device\": 1}\n", f);
    fclose(f);
    cr_assert_eq(cli("warm f.jsonl --cache-dir c2 -q"), 2);
    cr_assert_eq(cli("warm --cache-dir c2"), 2);
    cr_assert_eq(cli("warm f.jsonl"), 2, "no cache folder given");
}
