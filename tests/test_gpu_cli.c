/* `cckey devices` and `cckey selftest`, run as the user runs them. The
 * binary's path comes from the build (CCKEY_CLI_PATH). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

typedef struct result {
    int status;
    char *out;
} result;

/* Run "env... CLI args" through the shell; capture stdout, drop stderr
 * into stdout too so messages can be checked. */
static result run(const char *env, const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s '%s' %s 2>&1", env, CCKEY_CLI_PATH, args);
    FILE *p = popen(cmd, "r");
    cr_assert(p, "popen %s", cmd);
    result r = {0};
    size_t len = 0, cap = 0;
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, p)) > 0) {
        if (len + got + 1 > cap) {
            cap = (len + got + 1) * 2;
            r.out = realloc(r.out, cap);
            cr_assert(r.out);
        }
        memcpy(r.out + len, buf, got);
        len += got;
    }
    if (!r.out) r.out = calloc(1, 1);
    r.out[len] = '\0';
    int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

/* Run "env... CLI args", which must exit with status and print each string
 * of has and none of lacks (both NULL-terminated). */
static void expect_run(const char *env, const char *args, int status, const char *const *has, const char *const *lacks)
{
    result r = run(env, args);
    cr_assert_eq(r.status, status, "%s: %s", args, r.out);
    for (; has && *has; has++) cr_assert(strstr(r.out, *has), "%s: no \"%s\" in: %s", args, *has, r.out);
    for (; lacks && *lacks; lacks++) cr_assert(!strstr(r.out, *lacks), "%s: \"%s\" in: %s", args, *lacks, r.out);
    free(r.out);
}
#define STRINGS(...) ((const char *const[]){__VA_ARGS__, NULL})

Test(gpu_cli, devices_json_lists_every_backend)
{
    result r = run("CCKEY_CUDA_LIBRARY=/nonexistent/libcuda.so.1", "devices --json");
    cr_assert_eq(r.status, 0, "%s", r.out);
    json_error_t err;
    json_t *root = json_loads(r.out, 0, &err);
    cr_assert(root, "not JSON (%s): %s", err.text, r.out);
    json_t *backends = json_object_get(root, "backends");
    cr_assert(json_is_array(backends));
    const char *want[] = {"cpu", "opencl", "cuda", "vulkan"};
    cr_assert_eq(json_array_size(backends), 4);
    for (size_t i = 0; i < 4; i++) {
        json_t *b = json_array_get(backends, i);
        cr_assert_str_eq(json_string_value(json_object_get(b, "backend")), want[i]);
        cr_assert(json_is_boolean(json_object_get(b, "available")));
    }
    json_t *cuda = json_array_get(backends, 2);
    cr_assert(json_is_false(json_object_get(cuda, "available")));
    cr_assert(strstr(json_string_value(json_object_get(cuda, "reason")), "/nonexistent/libcuda.so.1"));
    /* Every listed OpenCL device carries "name|driver" as its id. */
    json_t *devs = json_object_get(json_array_get(backends, 1), "devices");
    for (size_t i = 0; devs && i < json_array_size(devs); i++) {
        json_t *d = json_array_get(devs, i);
        char want_id[1024];
        snprintf(want_id, sizeof want_id, "%s|%s", json_string_value(json_object_get(d, "name")),
                 json_string_value(json_object_get(d, "driver")));
        cr_assert_str_eq(json_string_value(json_object_get(d, "id")), want_id);
    }
    /* Every Vulkan device: "name|driverVersion|pipelineCacheUUID". */
    devs = json_object_get(json_array_get(backends, 3), "devices");
    for (size_t i = 0; devs && i < json_array_size(devs); i++) {
        json_t *d = json_array_get(devs, i);
        char want_id[1024];
        snprintf(want_id, sizeof want_id, "%s|%lld|%s", json_string_value(json_object_get(d, "name")),
                 (long long)json_integer_value(json_object_get(d, "driver_version")),
                 json_string_value(json_object_get(d, "pipeline_cache_uuid")));
        cr_assert_str_eq(json_string_value(json_object_get(d, "id")), want_id);
        cr_assert_eq(strlen(json_string_value(json_object_get(d, "pipeline_cache_uuid"))), 32);
    }
    json_decref(root);
    free(r.out);
}

/* No Vulkan loader: one line that says so, and the rest still listed. */
Test(gpu_cli, devices_without_vulkan_loader)
{
    expect_run("CCKEY_VULKAN_LIBRARY=/nonexistent/libvulkan.so.1", "devices", 0,
               STRINGS("vulkan   unavailable: no Vulkan loader (/nonexistent/libvulkan.so.1)", "cpu      available"),
               NULL);
}

Test(gpu_cli, devices_text_says_why_unavailable)
{
    expect_run("CCKEY_CUDA_LIBRARY=/nonexistent/libcuda.so.1 CCKEY_OPENCL_LIBRARY=/nonexistent/libOpenCL.so.1",
               "devices", 0,
               STRINGS("cpu      available", "cuda     unavailable: no CUDA driver", "opencl   unavailable"), NULL);
    expect_run("", "devices --bogus", 2, NULL, NULL);
}

Test(gpu_cli, selftest_cpu_passes)
{
    expect_run("", "selftest --backend cpu --seed 5 -j 2", 0, STRINGS("every length 0..300", "throughput:"),
               STRINGS("FAIL"));
}

Test(gpu_cli, selftest_named_backend_unavailable_fails)
{
    expect_run("CCKEY_CUDA_LIBRARY=/nonexistent/libcuda.so.1", "selftest --backend cuda", 1,
               STRINGS("cuda: UNAVAILABLE: no CUDA driver"), NULL);
    /* Not named: skipped, and the rest still decides. */
    expect_run("CCKEY_CUDA_LIBRARY=/nonexistent/libcuda.so.1 CCKEY_OPENCL_LIBRARY=/nonexistent/libOpenCL.so.1",
               "selftest --seed 9 -j 2", 0, STRINGS("cuda: skipped: no CUDA driver", "opencl: skipped:"), NULL);
}

Test(gpu_cli, selftest_bad_usage)
{
    const char *bad[] = {"selftest --backend auto", "selftest --backend gpu", "selftest --seed x", "selftest -j 0",
                         "selftest extra"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) expect_run("", bad[i], 2, NULL, NULL);
}

/* As `cckey devices --json` reports it, which is what a user would check. */
static void skip_without_opencl(void)
{
    result probe = run("", "devices --json");
    bool opencl = strstr(probe.out, "\"backend\": \"opencl\",\n      \"available\": true") != NULL;
    free(probe.out);
    if (!opencl) cr_skip_test("no usable OpenCL device here");
}

/* In the AddressSanitizer build, GCC 12's LeakSanitizer crashes in its
 * tracer ("Tracer caught signal 11") when it reads the thread-local storage
 * of PoCL's worker threads at the exit of this selftest run (seen with
 * glibc 2.36-9+deb12u14 on kernel 6.18; the selftest of a build before this
 * change crashes the same way). That child skips the TLS scan: cckey keeps
 * no heap pointer in thread-local storage. Other builds ignore the variable. */
#define SELFTEST_LSAN "LSAN_OPTIONS=\"${LSAN_OPTIONS:+$LSAN_OPTIONS:}use_tls=0\""

/* What a user runs on a new machine: every check on the real OpenCL
 * runtime (PoCL in CI) matches the CPU reference. */
Test(gpu_cli, selftest_opencl_passes)
{
    skip_without_opencl();
    expect_run(SELFTEST_LSAN, "selftest --backend opencl --seed 3 -j 2", 0,
               STRINGS("every length 0..300", "many chunks"), STRINGS("FAIL"));
}

/* A device that fails in every batch is caught by the selftest. */
Test(gpu_cli, selftest_reports_a_failing_device)
{
    skip_without_opencl();
    expect_run("CCKEY_FAULT_CHUNK=0", "selftest --backend opencl --seed 1 -j 2", 1,
               STRINGS("FAIL", "CCKEY_FAULT_CHUNK"), NULL);
}

#ifdef CCKEY_FAKE_CUDA
/* The CLI on the stand-in CUDA driver (tests/fake_cuda), named through
 * CCKEY_CUDA_LIBRARY as a user names a driver elsewhere. */
Test(gpu_cli, fake_cuda_devices_and_selftest)
{
    result r = run("CCKEY_CUDA_LIBRARY='" CCKEY_FAKE_CUDA "'", "devices");
    cr_assert_eq(r.status, 0, "%s", r.out);
    if (strstr(r.out, "without a compiled kernel")) cr_skip_test("built without a compiled CUDA kernel (no nvcc)");
    cr_assert(strstr(r.out, "cckey fake CUDA device"), "%s", r.out);
    free(r.out);
    r = run("CCKEY_CUDA_LIBRARY='" CCKEY_FAKE_CUDA "'", "selftest --backend cuda --seed 3 -j 2");
    cr_assert_eq(r.status, 0, "%s", r.out);
    cr_assert(!strstr(r.out, "FAIL"), "%s", r.out);
    free(r.out);
}

/* The driver's own refusal, named: cuInit fails. */
Test(gpu_cli, fake_cuda_cuinit_failure_is_named)
{
    expect_run("CCKEY_FAKE_CUDA_FAIL=cuInit:1 CCKEY_CUDA_LIBRARY='" CCKEY_FAKE_CUDA "'", "devices", 0,
               STRINGS("cuda     unavailable: cuInit failed: CUDA_ERROR_UNKNOWN: unknown error (999)"), NULL);
}
#endif

#ifdef CCKEY_FAKE_CUDA
/* selftest checks the engine itself: a driver error is a failed check, not
 * hidden by the CPU fallback a batch would take. */
Test(gpu_cli, fake_cuda_selftest_reports_a_driver_error)
{
    result r = run("CCKEY_FAKE_CUDA_FAIL=cuLaunchKernel:1 CCKEY_CUDA_LIBRARY='" CCKEY_FAKE_CUDA "'",
                   "selftest --backend cuda --seed 3 -j 2");
    if (strstr(r.out, "without a compiled kernel")) cr_skip_test("built without a compiled CUDA kernel (no nvcc)");
    cr_assert_eq(r.status, 1, "%s", r.out);
    cr_assert(strstr(r.out, "FAIL  every length 0..300") && strstr(r.out, "CUDA_ERROR_LAUNCH_FAILED"), "%s", r.out);
    cr_assert(strstr(r.out, "selftest: 1 of 9 checks FAILED"), "%s", r.out);
    free(r.out);
}
#endif
