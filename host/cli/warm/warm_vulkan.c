/* The GLSL and HLSL compilers of `cckey warm`; see warm_vulkan.h. One
 * state for both, made on first use: the shader compiler (required) and the
 * Vulkan devices (optional: without them only identities of other machines
 * with --target-env compile). */
#include "warm_vulkan.h"
#include "../scan/shaders.h"
#include "spv_info.h"
#include "vk_device.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct vk_state {
    pthread_mutex_t lock;
    bool tried, ready;
    char why[512];              /* no shader compiler */
    warm_shader_compiler *sc;
    warm_vk *vk;               /* NULL: no device here, vk_why says why */
    char vk_why[512];
    warm_devices devices;
    char library[4096];
} vk_state;

typedef struct vk_lang {
    warm_shader_lang lang;
    vk_state *s;
} vk_lang;

static vk_state state = {.lock = PTHREAD_MUTEX_INITIALIZER};
static vk_lang glsl = {CCKEY_SHADER_GLSL, &state}, hlsl = {CCKEY_SHADER_HLSL, &state};

int warm_set_vulkan_library(const char *path)
{
    if (path && strlen(path) >= sizeof state.library) return -1;
    pthread_mutex_lock(&state.lock);
    snprintf(state.library, sizeof state.library, "%s", path ? path : "");
    pthread_mutex_unlock(&state.lock);
    return 0;
}

int warm_vulkan_open(warm_vk **out, char *why, size_t why_len)
{
    char library[sizeof state.library];
    pthread_mutex_lock(&state.lock);
    snprintf(library, sizeof library, "%s", state.library);
    pthread_mutex_unlock(&state.lock);
    return warm_vk_open(library, out, why, why_len);
}

/* Lock held. */
static void load(vk_state *s)
{
    s->tried = true;
    if (warm_shader_compiler_new(&s->sc, s->why, sizeof s->why) != 0) return;
    if (warm_vk_open(s->library, &s->vk, s->vk_why, sizeof s->vk_why) == 0) {
        size_t n = warm_vk_count(s->vk);
        s->devices.n = n < CCKEY_WARM_MAX_DEVS ? n : CCKEY_WARM_MAX_DEVS;
        for (size_t i = 0; i < s->devices.n; i++)
            snprintf(s->devices.ident[i], sizeof s->devices.ident[i], "%s", warm_vk_info(s->vk, i)->id);
    }
    s->ready = true;
}

void warm_vulkan_release(void)
{
    vk_state *s = &state;
    pthread_mutex_lock(&s->lock);
    warm_vk_close(s->vk);
    warm_shader_compiler_free(s->sc);
    s->vk = NULL;
    s->sc = NULL;
    s->devices.n = 0;
    s->tried = s->ready = false;
    pthread_mutex_unlock(&s->lock);
}

/* Another machine's device: NAME|DRIVER|UUID, three parts, none empty. */
static bool foreign_ident(const char *ident, size_t len)
{
    const char *a = memchr(ident, '|', len);
    const char *b = a ? memchr(a + 1, '|', len - (size_t)(a + 1 - ident)) : NULL;
    return a && b && a > ident && b > a + 1 && b + 1 < ident + len && !memchr(b + 1, '|', len - (size_t)(b + 1 - ident));
}

static int find(void *impl, const char *ident, size_t len)
{
    const vk_state *s = ((const vk_lang *)impl)->s;
    int dev = warm_find(&s->devices, ident, len);
    return dev < 0 && foreign_ident(ident, len) ? CCKEY_WARM_REMOTE_DEV : dev;
}

static void names(void *impl, char *buf, size_t len)
{
    const vk_state *s = ((const vk_lang *)impl)->s;
    warm_names(&s->devices, buf, len);
    if (s->devices.n == 0 && snprintf(buf, len, "none (%s)", s->vk_why) >= (int)len) buf[len - 1] = '\0';
}

static void version(void *impl, int dev, char *buf, size_t len)
{
    (void)impl, (void)dev;
    snprintf(buf, len, "%s", warm_shader_compiler_version());
}

static bool local(const vk_state *s, int dev) { return dev >= 0 && (size_t)dev < s->devices.n; }

static warm_shader_job job_for(const vk_lang *l, int dev, const char *file, const char *src, size_t len,
                                const warm_flags *flags, const char *entry)
{
    const vk_state *s = l->s;
    return (warm_shader_job){l->lang, src, len, file, entry, (const char *const *)flags->argv, flags->argc,
                              local(s, dev) ? warm_vk_info(s->vk, (size_t)dev)->vulkan : 0, false};
}

/* The module's compute entry points answer present[]; on a local device
 * the pipeline for entry must be made. 0, or -1 with out->error. */
static int check(const vk_lang *l, int dev, const char *entry, const char *const *entry_names, size_t n_names,
                 bool *present, warm_build *out)
{
    warm_spv_info *info = malloc(sizeof *info);
    if (!info) {
        snprintf(out->error, sizeof out->error, "out of memory");
        return -1;
    }
    int rc = warm_spv_read(out->binary, out->binary_len / 4, info, out->error, sizeof out->error);
    for (size_t i = 0; rc == 0 && i < n_names; i++) present[i] = warm_spv_entry_named(info, entry_names[i]) != NULL;
    free(info);
    if (rc == 0 && local(l->s, dev))
        rc = warm_vk_check_pipeline(l->s->vk, (size_t)dev, out->binary, out->binary_len / 4, entry, out->error,
                                     sizeof out->error);
    return rc;
}

int warm_vulkan_build(const warm_compiler *c, int dev, const char *file, const char *src, size_t len,
                       const warm_flags *flags, const char *const *entry_names, size_t n_names, bool *present,
                       warm_build *out)
{
    const vk_lang *l = c->impl;
    /* GLSL's entry is main by the language; an HLSL module holds the one
     * function it was compiled for. */
    const char *entry = l->lang == CCKEY_SHADER_GLSL ? "main" : n_names ? entry_names[0] : "";
    warm_shader_job job = job_for(l, dev, file, src, len, flags, entry);
    if (warm_shader_compile(l->s->sc, &job, out) != 0) {
        if (!job.vulkan && !out->log) {   /* no device and no --target-env: say which devices there are */
            char here[256], msg[sizeof out->error];
            names(c->impl, here, sizeof here);
            if (snprintf(msg, sizeof msg, "%s; the Vulkan devices here: %s", out->error, here) >= (int)sizeof msg)
                msg[sizeof msg - 1] = '\0';   /* cut short: the device list is last */
            memcpy(out->error, msg, sizeof msg);
        }
        return -1;
    }
    if (check(l, dev, entry, entry_names, n_names, present, out) == 0) return 0;
    free(out->binary);
    out->binary = NULL;
    out->binary_len = 0;
    return -1;
}

static int build(void *impl, int dev, const char *src, size_t len, const warm_flags *flags,
                 const char *const *entry_names, size_t n_names, bool *present, warm_build *out)
{
    const vk_lang *l = impl;
    warm_compiler c = {.impl = impl};
    return warm_vulkan_build(&c, dev, l->lang == CCKEY_SHADER_GLSL ? "shader.comp" : "shader.hlsl", src, len,
                              flags, entry_names, n_names, present, out);
}

/* Appends name and '\n' to the list; false when out of memory. */
static bool append(char **list, size_t *n, const char *name)
{
    size_t k = strlen(name);
    char *p = realloc(*list, *n + k + 2);
    if (!p) return false;
    memcpy(p + *n, name, k);
    p[*n + k] = '\n';
    p[*n + k + 1] = '\0';
    *list = p;
    *n += k + 1;
    return true;
}

/* Each candidate of the text scan, kept when it compiles to a module with
 * that compute entry point; the names each ended by '\n' in out->binary. */
static int confirm(const vk_lang *l, int dev, const scan_result *found, const char *file, const char *src,
                   size_t len, const warm_flags *flags, warm_build *out)
{
    char *list = strdup("");
    size_t n = 0;
    for (size_t i = 0; list && i < found->n; i++) {
        const char *name = found->entries[i].name;
        warm_shader_job job = job_for(l, dev, file, src, len, flags, name);
        if (!job.vulkan) job.vulkan = 1u << 22 | 3u << 12;
        warm_build b;
        bool here = false;
        int rc = warm_shader_compile(l->s->sc, &job, &b);
        if (rc == 0) rc = check(l, -1, name, &name, 1, &here, &b);
        if (rc != 0) {
            free(list);
            *out = b;
            return -1;
        }
        warm_build_clear(&b);
        if (here && !append(&list, &n, name)) {
            free(list);
            list = NULL;
        }
    }
    if (!list) {
        snprintf(out->error, sizeof out->error, "out of memory");
        return -1;
    }
    out->binary = list;
    out->binary_len = n;
    return 0;
}

/* For scan --exact: the compiler's preprocessor decides macros and
 * conditionals, the text scan then finds the candidates in its output
 * (GLSL: main in a compute shader; HLSL: [numthreads] functions), and each
 * is confirmed by compiling it. */
static int entries(void *impl, int dev, const char *src, size_t len, const char *file, const warm_flags *flags,
                   warm_build *out)
{
    const vk_lang *l = impl;
    /* The text scan takes every conditional both ways, so what it does not
     * find the preprocessor cannot make (but for a name a macro builds):
     * a file without candidates, such as a header, is not compiled. */
    scan_result found;
    memset(out, 0, sizeof *out);
    if (scan_shader(src, len, l->lang == CCKEY_SHADER_GLSL ? CCKEY_LANG_GLSL : CCKEY_LANG_HLSL,
                          scan_shader_path_is_comp(file), &found) == 0 && found.n == 0) {
        scan_result_free(&found);
        out->binary = strdup("");
        if (out->binary) return 0;
        snprintf(out->error, sizeof out->error, "out of memory");
        return -1;
    }
    scan_result_free(&found);
    warm_shader_job job = job_for(l, dev, file, src, len, flags, "main");
    job.preprocess = true;
    if (!job.vulkan) job.vulkan = 1u << 22 | 3u << 12;   /* no device: the names do not hang on the version */
    warm_build pre;
    if (warm_shader_compile(l->s->sc, &job, &pre) != 0) {
        *out = pre;
        return -1;
    }
    memset(out, 0, sizeof *out);
    int rc = l->lang == CCKEY_SHADER_GLSL
                 ? scan_glsl(pre.binary, pre.binary_len, scan_shader_path_is_comp(file), &found)
                 : scan_hlsl(pre.binary, pre.binary_len, &found);
    warm_build_clear(&pre);
    if (rc != 0) {
        snprintf(out->error, sizeof out->error, rc == CCKEY_SCAN_TOO_DEEP ? "braces nest too deep" : "out of memory");
        return -1;
    }
    rc = confirm(l, dev, &found, file, src, len, flags, out);
    scan_result_free(&found);
    return rc;
}

static int make(vk_lang *l, const char *what, warm_compiler *out, char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    vk_state *s = l->s;
    pthread_mutex_lock(&s->lock);
    if (!s->tried) load(s);
    bool ready = s->ready;
    if (!ready) snprintf(why, why_len, "%s", s->why);
    pthread_mutex_unlock(&s->lock);
    if (!ready) return -1;
    *out = (warm_compiler){what, "shaderc", l, find, names, version, build, entries};
    return 0;
}

int warm_compiler_glsl(warm_compiler *out, char *why, size_t why_len) { return make(&glsl, "Vulkan", out, why, why_len); }
int warm_compiler_hlsl(warm_compiler *out, char *why, size_t why_len) { return make(&hlsl, "Vulkan", out, why, why_len); }
