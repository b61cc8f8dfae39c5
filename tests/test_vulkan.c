/* warm's Vulkan compilers on a real driver (Mesa's lavapipe here and in
 * CI) and shaderc: devices against vulkaninfo, GLSL and HLSL to SPIR-V that
 * spirv-val accepts, compiler messages with FILE:LINE, pipelines made and
 * refused on the device, and modules run on it with results checked against
 * the CPU (tests/vk_run.c, its own Vulkan code). A plain program, so that it
 * runs under ThreadSanitizer too; exit 77 (skipped) with one line where
 * shaderc or lavapipe is absent. */
#include "check.h"
#include "cli/warm/spv_info.h"
#include "cli/warm/vk_device.h"
#include "cli/warm/warm_vulkan.h"
#include "cli/scan/shaders.h"
#include "vk_run.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DATA CCKEY_TEST_DATA "/vulkan"
#define N 4096

static warm_compiler glsl, hlsl;
static warm_vk *vk;
static const warm_vk_device_info *lvp;   /* lavapipe, or NULL */
static int lvp_dev = -1;

/* Options as a manifest gives them (key, value pairs), made into flags as
 * warm makes them, the source's folder first. */
static warm_flags flags_of(const char *const *kv, size_t n)
{
    cckey_option opts[8];
    for (size_t i = 0; i < n; i++)
        opts[i] = (cckey_option){{kv[2 * i], strlen(kv[2 * i])}, {kv[2 * i + 1], strlen(kv[2 * i + 1])}};
    warm_flags f, g;
    char why[256];
    CHECK(warm_flags_make(opts, n, false, &f, why, sizeof why) == 0, "%s", why);
    const char *dir = DATA;
    CHECK(warm_flags_include(&f, &dir, 1, false, &g, why, sizeof why) == 0, "%s", why);
    warm_flags_free(&f);
    return g;
}

/* file under DATA built for dev with options kv, entry points names. */
static int build(const warm_compiler *c, int dev, const char *file, const char *const *kv, size_t n_kv,
                 const char *const *names, size_t n_names, bool *present, warm_build *out)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", DATA, file);
    size_t len = 0;
    char *src = warm_read_file(path, &len);
    CHECK(src, "cannot read %s", path);
    warm_flags f = flags_of(kv, n_kv);
    int rc = warm_vulkan_build(c, dev, path, src, len, &f, names, n_names, present, out);
    warm_flags_free(&f);
    free(src);
    return rc;
}

/* The module passes spirv-val for Vulkan 1.minor (when spirv-val is here). */
static void expect_valid(const warm_build *b, unsigned minor)
{
    CHECK(b->binary_len >= 20 && b->binary_len % 4 == 0, "%zu bytes", b->binary_len);
    CHECK(((const uint32_t *)b->binary)[0] == 0x07230203u, "magic %08x", ((const uint32_t *)b->binary)[0]);
    if (system("command -v spirv-val >/dev/null 2>&1") != 0) {
        printf("  (spirv-val not installed: magic number checked only)\n");
        return;
    }
    char path[] = "/tmp/cckey-vk-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 && write(fd, b->binary, b->binary_len) == (ssize_t)b->binary_len, "temp file");
    close(fd);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "spirv-val --target-env vulkan1.%u %s", minor, path);
    int st = system(cmd);
    unlink(path);
    CHECK(st == 0, "spirv-val rejected the module (%s)", cmd);
}

static uint32_t mix32(uint32_t x, uint32_t scale) { return x * scale + ((x >> 3) ^ 0x9e3779b9u); }

/* Runs entry of b on lavapipe over N inputs and compares with want(). */
static void expect_runs(const warm_build *b, const char *entry, uint32_t in_b, uint32_t out_b, uint32_t group,
                        uint32_t (*want)(uint32_t))
{
    static uint32_t in[N], out[N];
    for (uint32_t i = 0; i < N; i++) in[i] = i * 2654435761u + 12345u;
    char why[256];
    int rc = vk_run("llvmpipe", b->binary, b->binary_len / 4, entry, in_b, out_b, in, out, N, N / group, why,
                    sizeof why);
    CHECK(rc == 0, "running %s: %s", entry, why);
    for (uint32_t i = 0; i < N; i++) CHECK(out[i] == want(in[i]), "%s: out[%u] = %u, want %u", entry, i, out[i], want(in[i]));
}

static uint32_t want_mix(uint32_t x) { return mix32(x, 3); }
static uint32_t want_scale(uint32_t x) { return x * 5u + 7u; }
static uint32_t want_flip(uint32_t x) { return ~x; }

static void test_devices(void)
{
    char id[CCKEY_VK_ID_MAX], uuid[33];
    for (int k = 0; k < 16; k++) snprintf(uuid + 2 * k, 3, "%02x", lvp->cache_uuid[k]);
    snprintf(id, sizeof id, "%s|%u|%s", lvp->name, lvp->driver_version, uuid);
    CHECK(strcmp(lvp->id, id) == 0, "id %s", lvp->id);
    CHECK(strcmp(lvp->type, "cpu") == 0 && lvp->compute, "type %s", lvp->type);
    /* vulkaninfo (vulkan-tools) as the oracle for the three fields. */
    FILE *p = popen("vulkaninfo 2>/dev/null", "r");
    char line[512], name[256] = "", drv[64] = "", last_drv[64] = "", cache[64] = "";
    bool mine = false;
    while (p && fgets(line, sizeof line, p)) {
        char *eq = strstr(line, "= ");
        if (!eq) continue;
        char *v = eq + 2;
        v[strcspn(v, "\n")] = '\0';
        if (strstr(line, "driverVersion")) snprintf(last_drv, sizeof last_drv, "%s", v);
        if (strstr(line, "deviceName") && !*name && strcmp(v, lvp->name) == 0)
            mine = true, snprintf(name, sizeof name, "%s", v), snprintf(drv, sizeof drv, "%s", last_drv);
        if (mine && strstr(line, "pipelineCacheUUID") && !*cache) {
            for (char *s = v, *d = cache; *s && d < cache + 32; s++)
                if (*s != '-') *d++ = *s;
        }
    }
    if (p) pclose(p);
    if (!*name) {
        printf("  (vulkaninfo not installed or silent: identity checked against the driver's fields only)\n");
        return;
    }
    char raw[32];
    snprintf(raw, sizeof raw, "(%u)", lvp->driver_version);
    CHECK(strstr(drv, raw), "vulkaninfo says driverVersion %s, cckey %u", drv, lvp->driver_version);
    CHECK(strcmp(cache, uuid) == 0, "vulkaninfo says pipelineCacheUUID %s, cckey %s", cache, uuid);
}

static void test_no_loader_no_driver(void)
{
    warm_vk *none = NULL;
    char why[512];
    CHECK(warm_vk_open("/nonexistent/libvulkan.so.1", &none, why, sizeof why) == -1 && !none, "opened");
    CHECK(strncmp(why, "no Vulkan loader (/nonexistent/libvulkan.so.1): ", 48) == 0, "%s", why);
    /* A loader with no driver to load: the loader's own variables point it
     * at none. */
    setenv("VK_DRIVER_FILES", "/nonexistent/icd.json", 1);
    setenv("VK_ICD_FILENAMES", "/nonexistent/icd.json", 1);
    int rc = warm_vk_open(NULL, &none, why, sizeof why);
    unsetenv("VK_DRIVER_FILES");
    unsetenv("VK_ICD_FILENAMES");
    CHECK(rc == -1 && !none, "opened without a driver");
    CHECK(strstr(why, "no Vulkan driver") || strstr(why, "no Vulkan device"), "%s", why);
}

static void test_glsl(void)
{
    static const char *const kv[] = {"-D", "SCALE=3", "-I", DATA "/inc", "-O", ""};
    const char *main_name = "main";
    bool present = false;
    warm_build b;
    CHECK(build(&glsl, lvp_dev, "mix.comp", kv, 3, &main_name, 1, &present, &b) == 0, "%s\n%s", b.error,
          b.log ? b.log : "");
    CHECK(present, "no main");
    expect_valid(&b, 3);
    warm_spv_info info;
    char why[256];
    CHECK(warm_spv_read(b.binary, b.binary_len / 4, &info, why, sizeof why) == 0, "%s", why);
    CHECK(info.version == 0x00010600u, "SPIR-V %08x for a Vulkan 1.3 device", info.version);
    CHECK(info.n_entries == 1 && info.entries[0].size[0] == 64 && info.n_bindings == 2, "reflection");
    CHECK(info.bindings[0].type == 7 && info.bindings[1].type == 7, "two storage buffers");
    expect_runs(&b, "main", 0, 1, 64, want_mix);
    warm_build_clear(&b);
}

static void test_hlsl(void)
{
    static const char *const kv[] = {"-D", "SCALE=5"};
    const char *const names[] = {"scale", "flip"};
    for (int k = 0; k < 2; k++) {
        bool present = false;
        warm_build b;
        CHECK(build(&hlsl, lvp_dev, "ops.hlsl", kv, 1, &names[k], 1, &present, &b) == 0, "%s: %s\n%s", names[k],
              b.error, b.log ? b.log : "");
        CHECK(present, "no %s", names[k]);
        expect_valid(&b, 3);
        CHECK(((const uint32_t *)b.binary)[1] == 0x00010300u, "HLSL at SPIR-V 1.3");
        expect_runs(&b, names[k], 0, 1, k ? 32 : 64, k ? want_flip : want_scale);
        warm_build_clear(&b);
    }
}

static void expect_error(const warm_compiler *c, int dev, const char *file, const char *const *kv, size_t n_kv,
                         const char *want1, const char *want2)
{
    const char *main_name = "main";
    bool present = false;
    warm_build b;
    CHECK(build(c, dev, file, kv, n_kv, &main_name, 1, &present, &b) == -1, "%s built", file);
    CHECK(strstr(b.error, want1) && (!want2 || strstr(b.error, want2)), "%s: error \"%s\"", file, b.error);
    CHECK(!b.binary, "a failed build holds a binary");
    warm_build_clear(&b);
}

static void test_errors(void)
{
    expect_error(&glsl, lvp_dev, "bad.comp", NULL, 0, DATA "/bad.comp:4: error", NULL);
    expect_error(&glsl, lvp_dev, "missing_include.comp", NULL, 0, "missing_include.comp:3: error", "nowhere.glsl");
    static const char *const bad_flag[] = {"-fno-such-thing", ""};
    expect_error(&glsl, lvp_dev, "mix.comp", bad_flag, 1, "unknown shader compiler flag \"-fno-such-thing\"", NULL);
    /* Compiles, but the device refuses it: the message names the device. */
    expect_error(&glsl, lvp_dev, "wide.comp", NULL, 0, lvp->id, "maxComputeWorkGroupInvocations (1024)");
}

/* Another machine's device: compiled for the Vulkan version the options
 * give, without a pipeline. */
static void test_foreign_device(void)
{
    const char *ident = "Some GPU|42|00112233445566778899aabbccddeeff";
    int dev = glsl.find(glsl.impl, ident, strlen(ident));
    CHECK(dev == CCKEY_WARM_REMOTE_DEV, "dev %d", dev);
    CHECK(glsl.find(glsl.impl, "Some GPU", 8) == -1, "a name alone is no identity");
    static const char *const kv[] = {"-D", "SCALE=3", "-I", DATA "/inc"};
    expect_error(&glsl, dev, "mix.comp", kv, 2, "--target-env=vulkan1.N", NULL);
    static const char *const kv11[] = {"-D", "SCALE=3", "-I", DATA "/inc", "--target-env", "vulkan1.1"};
    const char *main_name = "main";
    bool present = false;
    warm_build b;
    CHECK(build(&glsl, dev, "mix.comp", kv11, 3, &main_name, 1, &present, &b) == 0, "%s", b.error);
    CHECK(present && ((const uint32_t *)b.binary)[1] == 0x00010300u, "SPIR-V 1.3 for Vulkan 1.1");
    expect_valid(&b, 1);
    warm_build_clear(&b);
}

/* scan --exact: the preprocessor decides the conditional the text scan
 * must take both ways. */
static void test_exact(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/hidden.hlsl", DATA);
    size_t len;
    char *src = warm_read_file(path, &len);
    CHECK(src, "read");
    scan_result text;
    CHECK(scan_hlsl(src, len, &text) == 0 && text.n == 2, "text scan: %zu", text.n);
    scan_result_free(&text);
    warm_flags f = flags_of(NULL, 0);
    warm_build b;
    CHECK(hlsl.entries(hlsl.impl, lvp_dev, src, len, path, &f, &b) == 0, "%s", b.error);
    CHECK(strcmp(b.binary, "shown\n") == 0, "entries \"%s\"", (char *)b.binary);
    warm_build_clear(&b);
    free(src);
    static const char *const kv[] = {"-D", "SCALE=2"};
    warm_flags g = flags_of(kv, 1);
    snprintf(path, sizeof path, "%s/ops.hlsl", DATA);
    src = warm_read_file(path, &len);
    CHECK(hlsl.entries(hlsl.impl, lvp_dev, src, len, path, &g, &b) == 0, "%s", b.error);
    CHECK(strcmp(b.binary, "scale\nflip\n") == 0, "entries \"%s\"", (char *)b.binary);
    warm_build_clear(&b);
    warm_flags_free(&f);
    warm_flags_free(&g);
    free(src);
}

/* warm's workers build on one device at once. */
static void *worker(void *arg)
{
    (void)arg;
    static const char *const kv[] = {"-D", "SCALE=3", "-I", DATA "/inc"};
    static const char *const kvh[] = {"-D", "SCALE=5"};
    const char *main_name = "main", *scale = "scale";
    for (int round = 0; round < 3; round++) {
        bool present = false;
        warm_build b;
        CHECK(build(&glsl, lvp_dev, "mix.comp", kv, 2, &main_name, 1, &present, &b) == 0 && present, "%s", b.error);
        warm_build_clear(&b);
        CHECK(build(&hlsl, lvp_dev, "ops.hlsl", kvh, 1, &scale, 1, &present, &b) == 0 && present, "%s", b.error);
        warm_build_clear(&b);
    }
    return NULL;
}

static void test_threads(void)
{
    pthread_t t[4];
    for (int i = 0; i < 4; i++) CHECK(pthread_create(&t[i], NULL, worker, NULL) == 0, "thread");
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
}

int main(void)
{
    char why[512];
    if (warm_compiler_glsl(&glsl, why, sizeof why) != 0 || warm_compiler_hlsl(&hlsl, why, sizeof why) != 0) {
        printf("skipped: %s\n", why);
        return 77;
    }
    test_no_loader_no_driver();
    if (warm_vk_open(NULL, &vk, why, sizeof why) == 0)
        for (size_t i = 0; i < warm_vk_count(vk) && !lvp; i++)
            if (strncmp(warm_vk_info(vk, i)->name, "llvmpipe", 8) == 0) lvp = warm_vk_info(vk, i);
    if (lvp) lvp_dev = glsl.find(glsl.impl, lvp->id, strlen(lvp->id));
    test_foreign_device();
    if (!lvp || lvp_dev < 0) {
        printf("skipped: compiled without a device only; no lavapipe here (%s)\n", lvp ? "not found by warm" : why);
        return 77;
    }
    test_devices();
    test_glsl();
    test_hlsl();
    test_errors();
    test_exact();
    test_threads();
    printf("test_vulkan: every check passed on %s\n", lvp->id);
    warm_vk_close(vk);
    warm_vulkan_release();
    return 0;
}
