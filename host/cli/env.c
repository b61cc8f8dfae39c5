/* The environment, mapped onto a batch config: the library reads none of
 * these variables itself. A bad value is the user's mistake, named with
 * its variable. */
#include "cli.h"
#include "cckey_advanced.h"
#include "warm/warm.h"
#include "warm/warm_vulkan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MIN_CHUNK 64ull
#define MAX_CHUNK (1ull << 30)

static bool parse_size(const char *s, unsigned long long lo, unsigned long long hi, size_t *out)
{
    uint64_t v;
    if (!cli_parse_size(s, lo, hi, &v)) return false;
    *out = (size_t)v;
    return true;
}

bool (*cli_env_hook)(cckey_batch_config *cfg);

static const char *var(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static bool sizes(cckey_batch_config *cfg)
{
    const char *v;
    size_t n;
    if ((v = var("CCKEY_GPU_CHUNK_BYTES"))) {
        if (!parse_size(v, MIN_CHUNK, MAX_CHUNK, &n)) {
            cli_error("CCKEY_GPU_CHUNK_BYTES=%s: expected a size from %llu to %llu bytes (K, M, G allowed)", v,
                      MIN_CHUNK, MAX_CHUNK);
            return false;
        }
        cckey_batch_config_set_chunk_bytes(cfg, n);
    }
    if ((v = var("CCKEY_GPU_LONG_BYTES"))) {
        if (!parse_size(v, 0, MAX_CHUNK / 4, &n)) {
            cli_error("CCKEY_GPU_LONG_BYTES=%s: expected a size from 0 to %llu bytes (K, M, G allowed)", v,
                      MAX_CHUNK / 4);
            return false;
        }
        cckey_batch_config_set_long_bytes(cfg, n);
    }
    if ((v = var("CCKEY_GPU_CPU_SHARE"))) {
        if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
            cli_error("CCKEY_GPU_CPU_SHARE=%s: expected 0 or 1", v);
            return false;
        }
        cckey_batch_config_set_device_share(cfg, v[0] == '1');
    }
    return true;
}

static bool devices(cckey_batch_config *cfg)
{
    static const struct {
        const char *name;
        cckey_backend_kind kind;
    } sel[] = {{"CCKEY_OPENCL_DEVICE", CCKEY_BACKEND_OPENCL}, {"CCKEY_CUDA_DEVICE", CCKEY_BACKEND_CUDA}};
    for (size_t i = 0; i < sizeof sel / sizeof *sel; i++) {
        const char *v = var(sel[i].name);
        if (v && cckey_batch_config_set_device(cfg, sel[i].kind, v) != CCKEY_OK) {
            cli_error("%s=%s: %s", sel[i].name, v, cckey_last_error());
            return false;
        }
    }
    return true;
}

int cli_config_from_env(cckey_batch_config *cfg)
{
    if (!sizes(cfg) || !devices(cfg)) return CLI_USAGE;
    if (cli_env_hook && !cli_env_hook(cfg)) return CLI_USAGE;
    return CLI_OK;
}

int cli_drivers_from_env(void)
{
    static const struct {
        const char *name;
        cckey_backend_kind kind;
    } lib[] = {{"CCKEY_OPENCL_LIBRARY", CCKEY_BACKEND_OPENCL}, {"CCKEY_CUDA_LIBRARY", CCKEY_BACKEND_CUDA}};
    for (size_t i = 0; i < sizeof lib / sizeof *lib; i++) {
        const char *v = var(lib[i].name);
        /* A build without that backend has no use for the path. */
        if (v && cckey_set_driver_library(lib[i].kind, v) == CCKEY_ERR_INVALID_ARG) {
            cli_error("%s=%s: %s", lib[i].name, v, cckey_last_error());
            return CLI_USAGE;
        }
    }
    const char *v = var("CCKEY_NVRTC_LIBRARY");
    if (v && warm_set_nvrtc_library(v) != 0) {
        cli_error("CCKEY_NVRTC_LIBRARY: a path of %zu bytes is too long", strlen(v));
        return CLI_USAGE;
    }
    /* Where NVRTC's toolkit headers are when they are not beside it. */
    const char *home = var("CUDA_HOME") ? var("CUDA_HOME") : var("CUDA_PATH");
    if (home && warm_set_cuda_home(home) != 0) {
        cli_error("CUDA_HOME: a path of %zu bytes is too long", strlen(home));
        return CLI_USAGE;
    }
    v = var("CCKEY_VULKAN_LIBRARY");
    if (v && warm_set_vulkan_library(v) != 0) {
        cli_error("CCKEY_VULKAN_LIBRARY: a path of %zu bytes is too long", strlen(v));
        return CLI_USAGE;
    }
    return CLI_OK;
}

int cli_check_isa_env(void)
{
    static const char *const known[] = {"scalar", "sse2", "avx2", "avx512", "neon"};
    const char *v = cckey_cpu_forced_isa();   /* read by the library, once */
    if (!v || strcmp(v, cckey_cpu_isa()) == 0) return CLI_OK;
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (strcmp(v, known[i]) == 0) {
            cli_error("CCKEY_FORCE_ISA=%s: this CPU cannot run it (the widest it has is %s)", v, cckey_cpu_isa());
            return CLI_USAGE;
        }
    cli_error("CCKEY_FORCE_ISA=%s: expected scalar, sse2, avx2, avx512 or neon", v);
    return CLI_USAGE;
}
