/* The CUDA backend. The device cases run only where a CUDA driver and a
 * usable GPU exist (they skip with the reason elsewhere, as in CI); the
 * no-driver behaviour and the embedded fatbin are checked everywhere. */
#include "backends/cuda_backend.h"
#include "backends/gpu_devices.h"
#include "backends/gpu_pipeline.h"
#include "support.h"
#include "test_gpu_common.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define K CCKEY_BACKEND_CUDA

GPU_COMMON_TESTS(cuda, "cuda")

/* The build says whether nvcc was found (CCKEY_TEST_HAVE_NVCC); the
 * library must agree, and the embedded image must be a fatbin. */
Test(cuda, fatbin_embedded_when_nvcc_was_found)
{
    gpu_compiled(K);
#if CCKEY_TEST_HAVE_NVCC
    cr_assert(cckey_cuda_has_kernel());
    cr_assert_gt(cckey_md5_fatbin_len, 16);
    uint32_t magic;
    memcpy(&magic, cckey_md5_fatbin, sizeof magic);
    cr_assert_eq(magic, 0xba55ed50u, "fatbin magic %08x", magic);
    /* Device code for both targets and the kernel's name are in there. */
    const char *want[] = {"sm_80", "sm_90", CCKEY_GPU_KERNEL_NAME};
    for (size_t w = 0; w < 3; w++) {
        size_t n = strlen(want[w]);
        bool found = false;
        for (size_t i = 0; !found && i + n <= cckey_md5_fatbin_len; i++)
            found = memcmp(cckey_md5_fatbin + i, want[w], n) == 0;
        cr_assert(found, "'%s' not in the embedded fatbin", want[w]);
    }
#else
    cr_assert(!cckey_cuda_has_kernel());
    cr_assert_eq(cckey_md5_fatbin_len, 0);
    cr_assert(strstr(cckey_backend_kernel(K), "without a compiled kernel"));
#endif
}

/* Each Criterion test runs in its own process: the loader sees this path. */
Test(cuda, no_driver_means_unavailable_and_cpu_still_works)
{
    gpu_expect_unloadable(K, "/nonexistent/libcuda.so.1", "no CUDA driver");
}

/* The toolkit's stub libcuda loads but cuInit refuses: the driver's own
 * status must come through. */
Test(cuda, stub_driver_reports_cuinit_failure)
{
    gpu_compiled(K);
    const char *stubs[] = {"/usr/local/cuda/lib64/stubs/libcuda.so", "/usr/local/cuda/lib/stubs/libcuda.so"};
    const char *stub = NULL;
    for (size_t i = 0; i < 2 && !stub; i++)
        if (access(stubs[i], R_OK) == 0) stub = stubs[i];
    if (!stub) cr_skip_test("no CUDA toolkit stub library at /usr/local/cuda");
    cr_assert_eq(cckey_set_driver_library(K, stub), CCKEY_OK);
    gpu_expect_unavailable(K, "cuInit failed: CUDA_ERROR_STUB_LIBRARY");
}

Test(cuda, device_selector_out_of_range)
{
    const cckey_backend_ops *b = gpu_compiled(K);
    const char *why0 = NULL;
    if (!cckey_cu_load(&why0)) cr_skip_test("no CUDA driver here: %s", why0);
    cckey_device_settings s = CCKEY_DEVICE_SETTINGS_INIT;
    snprintf(s.cuda_device, sizeof s.cuda_device, "4096");
    char why[512] = "";
    cr_assert_eq(cckey_backend_available(b, &s, why, sizeof why), CCKEY_ERR_UNAVAILABLE);
    cr_assert(strstr(why, "'4096'"), "%s", why);
}

Test(cuda, device_listing_and_identifier)
{
    gpu_need("cuda");
    cckey_device_info info[16];
    size_t n = 0;
    char why[512] = "";
    cr_assert_eq(cckey_backend_devices(K, NULL, info, 16, &n, why, sizeof why), CCKEY_OK, "%s", why);
    cr_assert_gt(n, 0);
    size_t chosen = 0;
    for (size_t i = 0; i < n && i < 16; i++) {
        chosen += info[i].chosen;
        cr_assert_str_eq(info[i].type, "gpu");
        /* The NVIDIA driver version looks like 580.159.04. */
        cr_assert(info[i].driver[0] >= '0' && info[i].driver[0] <= '9' && strchr(info[i].driver, '.'), "driver '%s'",
                  info[i].driver);
    }
    cr_assert_eq(chosen, 1);
}
