/* cckey --version: what a bug report needs, as `ccache -V` gives it: the
 * version and key format, the backends compiled in, the CPU path in use and
 * whether each device runtime loads on this machine. */
#include "cli.h"
#include "warm/warm.h"
#include "warm/warm_vulkan.h"

static void runtime_line(const char *what, cckey_backend_kind kind)
{
    if (cckey_backend_runtime(kind) == CCKEY_OK) printf("%-8s loads\n", what);
    else printf("%-8s does not load: %s\n", what, cckey_last_error());
}

int cli_print_version(void)
{
    printf("cckey %s (key format %d)\n", cckey_version(), CCKEY_KEY_FORMAT);
    printf("backends compiled in: %s\n", cckey_build_backends());
    printf("CPU MD5: %s\n", cckey_cpu_isa());
    runtime_line("OpenCL:", CCKEY_BACKEND_OPENCL);
    runtime_line("CUDA:", CCKEY_BACKEND_CUDA);
    char why[512];
    if (warm_nvrtc_probe(why, sizeof why) == 0) printf("%-8s loads\n", "NVRTC:");
    else printf("%-8s does not load: %s\n", "NVRTC:", why);
    /* Vulkan "loads" where warm can compile for a device here: the loader
     * opens, a device is listed, and a shader compiler is built in. */
    warm_vk *vk = NULL;
    warm_shader_compiler *sc = NULL;
    if (warm_vulkan_open(&vk, why, sizeof why) == 0 && warm_shader_compiler_new(&sc, why, sizeof why) == 0)
        printf("%-8s loads\n", "Vulkan:");
    else
        printf("%-8s does not load: %s\n", "Vulkan:", why);
    warm_shader_compiler_free(sc);
    warm_vk_close(vk);
    printf("shaders: %s\n", warm_shader_compiler_version());
    puts("\nCopyright (c) 2026 the cckey authors. MIT License: see LICENSE.");
    return CLI_OK;
}
