/* The OpenCL backend, for real on whatever OpenCL runtime is installed
 * (PoCL on a CPU in CI). Every digest is checked against OpenSSL's MD5;
 * without an OpenCL runtime the device tests skip with the reason. */
#include "backends/gpu_devices.h"
#include "backends/gpu_pipeline.h"
#include "backends/opencl.h"
#include "cckey_advanced.h"
#include "support.h"
#include "testing/testing.h"
#include "test_gpu_common.h"

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define K CCKEY_BACKEND_OPENCL

GPU_COMMON_TESTS(opencl, "opencl")

/* Each Criterion test runs in its own process, so the runtime is loaded
 * afresh and this library path is what the loader sees first. */
Test(opencl, no_runtime_means_unavailable_and_cpu_still_works)
{
    gpu_expect_unloadable(K, "/nonexistent/libOpenCL.so.1", "no OpenCL runtime: /nonexistent/libOpenCL.so.1");
}

/* The driver loads once per process: its path can be set before, and only
 * confirmed after. */
Test(opencl, driver_library_is_fixed_by_the_first_load)
{
    gpu_compiled(K);
    cr_assert_eq(cckey_set_driver_library(CCKEY_BACKEND_CPU, "x"), CCKEY_ERR_INVALID_ARG);
    cr_assert_eq(cckey_set_driver_library(K, "/nonexistent/first.so"), CCKEY_OK);
    cr_assert_eq(cckey_set_driver_library(K, "/nonexistent/second.so"), CCKEY_OK, "not loaded yet: may change");
    size_t n = 1;
    cckey_device d;
    cr_assert_eq(cckey_devices(NULL, K, &d, 1, &n), CCKEY_ERR_UNAVAILABLE);
    cr_assert(strstr(cckey_last_error(), "/nonexistent/second.so"), "%s", cckey_last_error());
    cr_assert_eq(cckey_set_driver_library(K, "/nonexistent/second.so"), CCKEY_OK);
    cr_assert_eq(cckey_set_driver_library(K, NULL), CCKEY_ERR_INVALID_ARG);
    cr_assert(strstr(cckey_last_error(), "already loaded from /nonexistent/second.so"), "%s", cckey_last_error());
}

/* cckey_driver_symbol hands out the library's own runtime (warm builds
 * through it): the very function a separate dlopen of the same runtime
 * finds, loaded from the path set before; unknown names and kinds fail. */
Test(opencl, driver_symbol_is_the_runtime_the_library_loads)
{
    gpu_compiled(K);
    cr_assert_null(cckey_driver_symbol(CCKEY_BACKEND_CPU, "clBuildProgram"));
    cr_assert(strstr(cckey_last_error(), "has no driver"), "%s", cckey_last_error());
    cr_assert_null(cckey_driver_symbol(K, NULL));
    void *lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) cr_skip_test("no OpenCL runtime: %s", dlerror());
    void *f = cckey_driver_symbol(K, "clBuildProgram");
    cr_assert_not_null(f, "%s", cckey_last_error());
    cr_assert_eq(f, dlsym(lib, "clBuildProgram"));
    cr_assert_null(cckey_driver_symbol(K, "clNoSuchFunction"));
    cr_assert(strstr(cckey_last_error(), "clNoSuchFunction: the OpenCL runtime has no such function"), "%s",
              cckey_last_error());
    dlclose(lib);
    cr_assert_str_eq(cckey_opencl_status_name(-11), "CL_BUILD_PROGRAM_FAILURE");
    cr_assert_str_eq(cckey_opencl_status_name(12345), "CL_<unknown>");
}

Test(opencl, driver_symbol_fails_where_the_runtime_does_not_load)
{
    gpu_compiled(K);
    cr_assert_eq(cckey_set_driver_library(K, "/nonexistent/libOpenCL.so.1"), CCKEY_OK);
    cr_assert_null(cckey_driver_symbol(K, "clBuildProgram"));
    cr_assert(strstr(cckey_last_error(), "clBuildProgram: no OpenCL runtime: /nonexistent/libOpenCL.so.1"), "%s",
              cckey_last_error());
}

/* The devices, straight from the runtime. */
static size_t devices_or_skip(cckey_device_info *info, size_t max)
{
    const char *lwhy = NULL;
    const cckey_cl_api *cl = cckey_cl_load(&lwhy);
    if (!cl) cr_skip_test("no OpenCL runtime: %s", lwhy);
    cckey_cl_device devs[16];
    size_t n = 0;
    char why[512] = "";
    if (cckey_cl_enumerate(cl, devs, 16, &n, why, sizeof why) != CCKEY_OK) cr_skip_test("no OpenCL device: %s", why);
    if (n > max) n = max;
    if (n > 16) n = 16;
    for (size_t i = 0; i < n; i++) info[i] = devs[i].info;
    return n;
}

Test(opencl, device_listing_and_identifier)
{
    cckey_device_info info[16];
    devices_or_skip(info, 16);
    size_t n = 0;
    char why[512] = "";
    cr_assert_eq(cckey_backend_devices(K, NULL, info, 16, &n, why, sizeof why), CCKEY_OK, "%s", why);
    if (n > 16) n = 16;
    size_t chosen = 0;
    /* The public listing says the same. */
    cckey_device pub[16];
    size_t pn = 0;
    cr_assert_eq(cckey_devices(NULL, K, pub, 16, &pn), CCKEY_OK, "%s", cckey_last_error());
    cr_assert_eq(pn, n);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(info[i].index, i);
        cr_assert_neq(info[i].name[0], '\0');
        char ident[512], want[512];
        cckey_device_ident(&info[i], ident, sizeof ident);
        snprintf(want, sizeof want, "%s|%s", info[i].name, info[i].driver);
        cr_assert_str_eq(ident, want);
        cr_assert_str_eq(pub[i].id, want);
        cr_assert_eq(pub[i].index, i);
        cr_assert_eq(pub[i].selected, info[i].chosen);
        cr_assert_eq(pub[i].backend, K);
        /* auto never takes a CPU device: it would only be slower than ours. */
        if (strcmp(info[i].type, "cpu") == 0) cr_assert(!info[i].auto_ok);
        chosen += info[i].chosen;
    }
    cr_assert_eq(chosen, 1);
}

/* A config that selects a device, and the same config's batch on it. */
static cckey_batch_config *selecting(const char *selector)
{
    cckey_batch_config *cfg;
    cr_assert_eq(cckey_batch_config_new(&cfg), CCKEY_OK);
    cr_assert_eq(cckey_batch_config_set_backend(cfg, K), CCKEY_OK);
    cr_assert_eq(cckey_batch_config_set_device(cfg, K, selector), CCKEY_OK);
    return cfg;
}

static void keys_on(cckey_batch_config *cfg)
{
    cckey_tuple t[3] = {{.device = {"d", 1}, .name = {"k", 1}, .source = {"s0", 2}},
                        {.device = {"d", 1}, .name = {"k", 1}, .source = {"s1", 2}},
                        {.device = {"e", 1}, .name = {"kk", 2}, .source = {"", 0}}};
    char key[3][CCKEY_KEY_LEN + 1];
    cr_assert_eq(cckey_make_keys(key, t, 3, cfg), CCKEY_OK, "%s", cckey_last_error());
    for (int i = 0; i < 3; i++) {
        char want[CCKEY_KEY_LEN + 1];
        cckey_test_ref_key(want, t[i].device, t[i].name, t[i].source, NULL, 0);
        cr_assert_str_eq(key[i], want);
    }
    cr_assert_str_eq(cckey_batch_config_used(cfg), "opencl");
}

Test(opencl, device_chosen_by_index_and_by_name)
{
    cckey_device_info info[16];
    size_t n = devices_or_skip(info, 16);
    size_t last = n - 1;
    char idx[16];
    snprintf(idx, sizeof idx, "%zu", last);
    cckey_batch_config *cfg = selecting(idx);
    cckey_device again[16];
    size_t m = 0;
    cr_assert_eq(cckey_devices(cfg, K, again, 16, &m), CCKEY_OK, "%s", cckey_last_error());
    for (size_t i = 0; i < m && i < 16; i++) cr_assert_eq(again[i].selected, i == last, "device %zu", i);
    keys_on(cfg);
    /* Another config in the same process keeps the default choice. */
    cr_assert_eq(cckey_devices(NULL, K, again, 16, &m), CCKEY_OK, "%s", cckey_last_error());
    cckey_batch_config_free(cfg);
}

Test(opencl, device_chosen_by_name_substring)
{
    cckey_device_info info[16];
    devices_or_skip(info, 1);
    /* A case-changed piece of the first device's name. */
    char piece[8];
    snprintf(piece, sizeof piece, "%.4s", info[0].name);
    for (char *c = piece; *c; c++) *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
    cckey_batch_config *cfg = selecting(piece);
    keys_on(cfg);
    cckey_batch_config_free(cfg);
}

Test(opencl, device_selector_that_matches_nothing)
{
    const cckey_backend_ops *b = gpu_compiled(K);
    cckey_device_info info[1];
    devices_or_skip(info, 1);
    cckey_batch_config *cfg = selecting("no-such-device-name-xyz");
    char key[1][CCKEY_KEY_LEN + 1];
    cckey_tuple t = {.device = {"d", 1}};
    cr_assert_eq(cckey_make_keys(key, &t, 1, cfg), CCKEY_ERR_UNAVAILABLE);
    cr_assert(strstr(cckey_last_error(), "no-such-device-name-xyz"), "%s", cckey_last_error());
    cckey_device d[4];
    size_t n = 0;
    cr_assert_eq(cckey_devices(cfg, K, d, 4, &n), CCKEY_ERR_UNAVAILABLE);
    cr_assert_gt(n, 0, "the devices that exist are still listed");
    for (size_t i = 0; i < n && i < 4; i++) cr_assert(!d[i].selected);
    /* auto falls back to the CPU, with the right key. */
    cr_assert_eq(cckey_batch_config_set_backend(cfg, CCKEY_BACKEND_AUTO), CCKEY_OK);
    cr_assert_eq(cckey_make_keys(key, &t, 1, cfg), CCKEY_OK, "%s", cckey_last_error());
    cckey_batch_config_free(cfg);
    /* Only that config: the default still has a device. */
    char why[512] = "";
    cr_assert_eq(cckey_backend_available(b, NULL, why, sizeof why), CCKEY_OK, "%s", why);
}

Test(opencl, auto_rule)
{
    /* Small batches never reach a device, whatever it is. */
    cr_assert(!cckey_gpu_worth_it(1000, 1 << 20, 1, 100.0, 0.0, true));
    /* A huge batch against one host thread, a fast device: worth it. */
    cr_assert(cckey_gpu_worth_it(1u << 20, (uint64_t)8 << 30, 1, 20.0, 0.5, true));
    /* The same batch against 64 host threads and a slow link: not. */
    cr_assert(!cckey_gpu_worth_it(1u << 20, (uint64_t)8 << 30, 64, 2.0, 0.5, true));

    const cckey_backend_ops *b = gpu_compiled(K);
    cckey_device_info info[16];
    size_t n = devices_or_skip(info, 16);
    bool gpu = false;
    for (size_t i = 0; i < n; i++) gpu |= info[i].chosen && info[i].auto_ok;
    /* On a CPU-only runtime (PoCL) auto must never pick OpenCL. */
    if (!gpu) cr_assert(!cckey_backend_worth_it(b, NULL, 1u << 24, (uint64_t)64 << 30, 1));
}

/* A device that returns a wrong digest without reporting an error: --verify
 * (all, and a sample that here covers every string) must catch it, put the
 * CPU's digest in its place and say so, naming the device and the count;
 * without verification the hook really does change a key. */
static void expect_right_keys(const cckey_tuple *t, size_t n, char (*out)[CCKEY_KEY_LEN + 1], const char *what)
{
    for (size_t i = 0; i < n; i++) {
        char want[CCKEY_KEY_LEN + 1];
        cr_assert_eq(cckey_make_key(want, t[i].device, t[i].name, t[i].source, NULL, 0), CCKEY_OK);
        cr_assert_str_eq(out[i], want, "%s: tuple %zu", what, i);
    }
}

Test(opencl, verify_repairs_a_silently_wrong_device)
{
    cckey_device_info info[16];
    size_t n_dev = devices_or_skip(info, 16);

    enum { N = 300 };
    static char src[N][32];
    cckey_tuple t[N];
    for (int i = 0; i < N; i++) {
        snprintf(src[i], sizeof src[i], "kernel source %d", i);
        t[i] = (cckey_tuple){.device = {"d", 1}, .name = {"k", 1}, .source = {src[i], strlen(src[i])}};
    }
    static char out[N][CCKEY_KEY_LEN + 1];
    cckey_batch_config *cfg;
    cr_assert_eq(cckey_batch_config_new(&cfg), CCKEY_OK);
    cr_assert_eq(cckey_batch_config_set_backend(cfg, K), CCKEY_OK);
    cr_assert_eq(cckey_testing_set_faults(cfg, -1, true, false), CCKEY_OK);
    cr_assert_eq(cckey_batch_config_set_device_share(cfg, 0), CCKEY_OK);   /* every digest from the device */

    cr_assert_eq(cckey_make_keys(out, t, N, cfg), CCKEY_OK, "%s", cckey_last_error());
    int wrong = 0;
    for (int i = 0; i < N; i++) {
        char want[CCKEY_KEY_LEN + 1];
        cr_assert_eq(cckey_make_key(want, t[i].device, t[i].name, t[i].source, NULL, 0), CCKEY_OK);
        wrong += strcmp(want, out[i]) != 0;
    }
    cr_assert_gt(wrong, 0, "the corruption hook changed no key");

    static const cckey_verify_mode modes[] = {CCKEY_VERIFY_ALL, CCKEY_VERIFY_SAMPLE};
    for (size_t m = 0; m < 2; m++) {
        cr_assert_eq(cckey_batch_config_set_verify(cfg, modes[m]), CCKEY_OK);
        memset(out, 0, sizeof out);
        cr_assert_eq(cckey_make_keys(out, t, N, cfg), CCKEY_OK, "mode %zu: %s", m, cckey_last_error());
        expect_right_keys(t, N, out, "repaired");
        const char *w = cckey_batch_config_warning(cfg);
        char dev[300] = "";
        for (size_t i = 0; i < n_dev && i < 16; i++)
            if (info[i].chosen) snprintf(dev, sizeof dev, "\"%.250s\"", info[i].name);
        cr_assert(strstr(w, "opencl device") && strstr(w, dev), "mode %zu: the device is not named: %s", m, w);
        cr_assert(strstr(w, "wrong digest") && strstr(w, "tuple "), "mode %zu: %s", m, w);
    }
    cckey_batch_config_free(cfg);
}

/* The case --verify=sample used to miss: 4 wrong digests in 40,000 (one
 * per chunk). The default sample covers a batch this size whole; a larger
 * one is sampled with the seed the warning reports, and a hit repairs all. */
Test(opencl, verify_sample_catches_rare_wrong_digests)
{
    cckey_device_info info[16];
    devices_or_skip(info, 16);
    size_t sizes[] = {40000, 120000};
    for (size_t z = 0; z < 2; z++) {
        size_t n = sizes[z];
        char (*src)[32] = malloc(n * sizeof *src);
        cckey_tuple *t = malloc(n * sizeof *t);
        char (*out)[CCKEY_KEY_LEN + 1] = malloc(n * sizeof *out);
        cr_assert(src && t && out);
        for (size_t i = 0; i < n; i++) {
            snprintf(src[i], sizeof src[i], "src %zu", i);
            t[i] = (cckey_tuple){.device = {"d", 1}, .name = {"k", 1}, .source = {src[i], strlen(src[i])}};
        }
        cckey_batch_config *cfg;
        cr_assert_eq(cckey_batch_config_new(&cfg), CCKEY_OK);
        cr_assert_eq(cckey_batch_config_set_backend(cfg, K), CCKEY_OK);
        cr_assert_eq(cckey_testing_set_faults(cfg, -1, true, false), CCKEY_OK);
        cr_assert_eq(cckey_batch_config_set_device_share(cfg, 0), CCKEY_OK);
        /* About 4 chunks for 40,000 strings (and 12 for 120,000): the hook
         * spoils the first digest of each. */
        cr_assert_eq(cckey_batch_config_set_chunk_bytes(cfg, 256 << 10), CCKEY_OK);
        cr_assert_eq(cckey_batch_config_set_verify(cfg, CCKEY_VERIFY_SAMPLE), CCKEY_OK);
        /* Seed 1 draws a spoiled digest among 120,000 (checked: the warning
         * below says so); the 40,000 case is checked whole, whatever the seed. */
        cr_assert_eq(cckey_batch_config_set_verify_seed(cfg, 1), CCKEY_OK);
        cr_assert_eq(cckey_make_keys(out, t, n, cfg), CCKEY_OK, "%s", cckey_last_error());
        expect_right_keys(t, n, out, "sampled");
        const char *w = cckey_batch_config_warning(cfg);
        cr_assert(strstr(w, "wrong digest"), "n = %zu: %s", n, w);
        if (z == 1) cr_assert(strstr(w, "(seed 1)"), "%s", w);
        cckey_batch_config_free(cfg);
        free(src), free(t), free(out);
    }
}
