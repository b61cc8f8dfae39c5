/* GLSL and HLSL to SPIR-V with shaderc; see shader_compile.h. */
#include "shader_compile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CCKEY_WITH_SHADERC
int warm_shader_compiler_new(warm_shader_compiler **out, char *why, size_t why_len)
{
    *out = NULL;
    snprintf(why, why_len, "this cckey was built without a shader compiler (libshaderc-dev, glslang-dev)");
    return -1;
}
void warm_shader_compiler_free(warm_shader_compiler *c) { (void)c; }
const char *warm_shader_compiler_version(void) { return "no shader compiler in this build (libshaderc-dev)"; }
int warm_shader_compile(warm_shader_compiler *c, const warm_shader_job *job, warm_build *out)
{
    (void)c, (void)job;
    memset(out, 0, sizeof *out);
    snprintf(out->error, sizeof out->error, "this cckey was built without a shader compiler");
    return -1;
}
#else
#include "shader_include.h"

#include <shaderc/shaderc.h>
#if __has_include(<glslang/build_info.h>)
#include <glslang/build_info.h>
#endif

#define MAX_DIRS 64
#define VK_VERSION(minor) ((1u << 22) | ((unsigned)(minor) << 12))   /* VK_MAKE_API_VERSION(0, 1, minor, 0) */

struct warm_shader_compiler {
    shaderc_compiler_t sc;   /* shaderc: compiling on one compiler from many threads needs no lock */
};

const char *warm_shader_compiler_version(void)
{
#ifdef GLSLANG_VERSION_MAJOR
#define CCKEY_STR2(x) #x
#define CCKEY_STR(x) CCKEY_STR2(x)
    return CCKEY_SHADERC_VERSION ", glslang " CCKEY_STR(GLSLANG_VERSION_MAJOR) "." CCKEY_STR(
        GLSLANG_VERSION_MINOR) "." CCKEY_STR(GLSLANG_VERSION_PATCH) GLSLANG_VERSION_FLAVOR;
#else
    return CCKEY_SHADERC_VERSION;
#endif
}

/* glslang's preprocess-only path builds function-local static strings on
 * first use, and the glslang that shaderc links does not guard them: two
 * threads preprocessing at once for the first time race on them
 * (ThreadSanitizer saw it in scan --exact). One preprocess on this thread,
 * before the compiler is handed to any other, builds them; callers create
 * the compiler before they share it (warm_vulkan.c: under its lock). */
static void first_preprocess(shaderc_compiler_t sc)
{
    static const char text[] = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n";
    shaderc_compilation_result_t r = shaderc_compile_into_preprocessed_text(
        sc, text, sizeof text - 1, shaderc_compute_shader, "cckey-first-preprocess.comp", "main", NULL);
    if (r) shaderc_result_release(r);
}

int warm_shader_compiler_new(warm_shader_compiler **out, char *why, size_t why_len)
{
    *out = calloc(1, sizeof **out);
    if (*out && ((*out)->sc = shaderc_compiler_initialize())) {
        first_preprocess((*out)->sc);
        return 0;
    }
    free(*out);
    *out = NULL;
    snprintf(why, why_len, "shaderc could not start a compiler (out of memory?)");
    return -1;
}

void warm_shader_compiler_free(warm_shader_compiler *c)
{
    if (!c) return;
    shaderc_compiler_release(c->sc);
    free(c);
}

/* What the flags ask for. */
typedef struct settings {
    shaderc_compile_options_t opts;
    const char *dirs[MAX_DIRS];
    size_t n_dirs;
    int env_minor;   /* --target-env=vulkan1.N; -1: the device's */
    int spv_minor;   /* --target-spv=spv1.N; -1: the default */
} settings;

/* The flags that take no value, and what each sets. */
typedef void (*set_fn)(shaderc_compile_options_t, bool);
static void o_debug(shaderc_compile_options_t o, bool v) { (void)v; shaderc_compile_options_set_generate_debug_info(o); }
static void o_quiet(shaderc_compile_options_t o, bool v) { (void)v; shaderc_compile_options_set_suppress_warnings(o); }
static void o_werror(shaderc_compile_options_t o, bool v) { (void)v; shaderc_compile_options_set_warnings_as_errors(o); }
static const struct {
    const char *flag;
    set_fn set;
} switches[] = {
    {"-g", o_debug},
    {"-w", o_quiet},
    {"-Werror", o_werror},
    {"-fhlsl-16bit-types", shaderc_compile_options_set_hlsl_16bit_types},
    {"-fhlsl-functionality1", shaderc_compile_options_set_hlsl_functionality1},
    {"-fhlsl-iomap", shaderc_compile_options_set_hlsl_io_mapping},
    {"-fhlsl-offsets", shaderc_compile_options_set_hlsl_offsets},
    {"-fauto-bind-uniforms", shaderc_compile_options_set_auto_bind_uniforms},
    {"-fauto-map-locations", shaderc_compile_options_set_auto_map_locations},
    {"-fauto-combined-image-sampler", shaderc_compile_options_set_auto_combined_image_sampler},
    {"-finvert-y", shaderc_compile_options_set_invert_y},
    {"-fnan-clamp", shaderc_compile_options_set_nan_clamp},
};

static bool switch_flag(settings *s, const char *f)
{
    for (size_t i = 0; i < sizeof switches / sizeof *switches; i++)
        if (strcmp(f, switches[i].flag) == 0) {
            switches[i].set(s->opts, true);
            return true;
        }
    return false;
}

static bool opt_level(settings *s, const char *f)
{
    shaderc_optimization_level level;
    if (strcmp(f, "-O0") == 0) level = shaderc_optimization_level_zero;
    else if (strcmp(f, "-Os") == 0) level = shaderc_optimization_level_size;
    else if (strcmp(f, "-O") == 0 || (f[0] == '-' && f[1] == 'O' && f[2] >= '1' && f[2] <= '3' && !f[3]))
        level = shaderc_optimization_level_performance;
    else return false;
    shaderc_compile_options_set_optimization_level(s->opts, level);
    return true;
}

/* "PREFIX1.N" with N in 0..max: N, else -1. */
static int minor_of(const char *v, const char *prefix, int max)
{
    size_t n = strlen(prefix);
    if (strncmp(v, prefix, n) != 0 || v[n] != '1' || v[n + 1] != '.' || v[n + 2] < '0' || v[n + 2] > '0' + max ||
        v[n + 3])
        return -1;
    return v[n + 2] - '0';
}

/* One flag; false with why. */
static bool parse_flag(settings *s, const char *f, char *why, size_t why_len)
{
    if (f[0] == '-' && f[1] == 'D' && f[2]) {
        const char *eq = strchr(f + 2, '=');
        size_t name_len = eq ? (size_t)(eq - f - 2) : strlen(f + 2);
        shaderc_compile_options_add_macro_definition(s->opts, f + 2, name_len, eq ? eq + 1 : NULL,
                                                     eq ? strlen(eq + 1) : 0);
        return true;
    }
    if (f[0] == '-' && f[1] == 'I' && f[2]) {
        if (s->n_dirs == MAX_DIRS) {
            snprintf(why, why_len, "more than %d include folders", MAX_DIRS);
            return false;
        }
        s->dirs[s->n_dirs++] = f + 2;
        return true;
    }
    if (strncmp(f, "--target-env=", 13) == 0) {
        if ((s->env_minor = minor_of(f + 13, "vulkan", 3)) >= 0) return true;
        snprintf(why, why_len, "%s: the target must be vulkan1.0 to vulkan1.3", f);
        return false;
    }
    if (strncmp(f, "--target-spv=", 13) == 0) {
        if ((s->spv_minor = minor_of(f + 13, "spv", 6)) >= 0) return true;
        snprintf(why, why_len, "%s: the SPIR-V version must be spv1.0 to spv1.6", f);
        return false;
    }
    if (strncmp(f, "-std=", 5) == 0) {
        int version;
        shaderc_profile profile;
        if (shaderc_parse_version_profile(f + 5, &version, &profile)) {
            shaderc_compile_options_set_forced_version_profile(s->opts, version, profile);
            return true;
        }
        snprintf(why, why_len, "%s: not a GLSL version and profile (e.g. -std=450core)", f);
        return false;
    }
    if (switch_flag(s, f) || opt_level(s, f)) return true;
    snprintf(why, why_len, "unknown shader compiler flag \"%s\" (cckey warm takes -D, -I, -O0/-Os/-O, -g, -w, "
             "-Werror, --target-env=vulkan1.N, --target-spv=spv1.N, -std=, and glslc's -fhlsl-*/-fauto-* switches)", f);
    return false;
}

/* The Vulkan and SPIR-V versions: the flags', else the device's (HLSL at
 * SPIR-V 1.3 at most, see shader_compile.h). */
static bool target(settings *s, const warm_shader_job *job, char *why, size_t why_len)
{
    int env = s->env_minor;
    if (env < 0 && job->vulkan) {
        unsigned major = job->vulkan >> 22, minor = job->vulkan >> 12 & 0x3ff;
        env = major > 1 || minor > 3 ? 3 : (int)minor;
    }
    if (env < 0) {
        snprintf(why, why_len, "no Vulkan device here has this identity; give its Vulkan version (option "
                 "--target-env=vulkan1.N) to compile without it");
        return false;
    }
    static const int default_spv[] = {0, 3, 5, 6};   /* per Vulkan 1.0 .. 1.3 */
    int spv = s->spv_minor >= 0 ? s->spv_minor : default_spv[env];
    if (s->spv_minor < 0 && job->lang == CCKEY_SHADER_HLSL && spv > 3) spv = 3;
    shaderc_compile_options_set_target_env(s->opts, shaderc_target_env_vulkan, VK_VERSION(env));
    shaderc_compile_options_set_target_spirv(s->opts, (shaderc_spirv_version)(0x010000u | (unsigned)spv << 8));
    return true;
}

static bool configure(settings *s, const warm_shader_job *job, char *why, size_t why_len)
{
    s->env_minor = s->spv_minor = -1;
    if (job->lang == CCKEY_SHADER_HLSL)
        shaderc_compile_options_set_source_language(s->opts, shaderc_source_language_hlsl);
    for (size_t i = 0; i < job->argc; i++)
        if (!parse_flag(s, job->argv[i], why, why_len)) return false;
    return target(s, job, why, why_len);
}

/* The compiler's messages: all of them into the log, the first error line
 * (glslang writes "FILE:LINE: error: ...") into error. */
static void messages(shaderc_compilation_result_t r, warm_build *out)
{
    const char *msg = shaderc_result_get_error_message(r);
    if (!msg || !*msg) return;
    out->log = strdup(msg);
    const char *e = strstr(msg, ": error:");
    const char *line = msg;
    if (e)
        for (line = e; line > msg && line[-1] != '\n'; line--) {}
    size_t n = strcspn(line, "\n");
    snprintf(out->error, sizeof out->error, "%.*s", (int)n, line);
}

static int result(shaderc_compilation_result_t r, const warm_shader_job *job, warm_build *out)
{
    shaderc_compilation_status st = r ? shaderc_result_get_compilation_status(r) : shaderc_compilation_status_null_result_object;
    if (r) messages(r, out);
    if (st != shaderc_compilation_status_success) {
        if (!out->error[0]) snprintf(out->error, sizeof out->error, "shaderc failed (status %d)", (int)st);
        return -1;
    }
    out->error[0] = '\0';   /* warnings stay in the log */
    size_t n = shaderc_result_get_length(r);
    out->binary = malloc(n + 1);
    if (!out->binary) {
        snprintf(out->error, sizeof out->error, "out of memory");
        return -1;
    }
    memcpy(out->binary, shaderc_result_get_bytes(r), n);
    ((char *)out->binary)[n] = '\0';
    out->binary_len = n;
    if (!job->preprocess && (n % 4 || n < 20)) {
        snprintf(out->error, sizeof out->error, "shaderc returned %zu bytes, not a SPIR-V module", n);
        free(out->binary), out->binary = NULL;
        return -1;
    }
    return 0;
}

int warm_shader_compile(warm_shader_compiler *c, const warm_shader_job *job, warm_build *out)
{
    memset(out, 0, sizeof *out);
    settings s = {.opts = shaderc_compile_options_initialize()};
    if (!s.opts) {
        snprintf(out->error, sizeof out->error, "out of memory");
        return -1;
    }
    int rc = -1;
    if (configure(&s, job, out->error, sizeof out->error)) {
        warm_includer inc = {s.dirs, s.n_dirs, job->file};
        warm_includer_attach(s.opts, &inc);
        shaderc_compilation_result_t r =
            job->preprocess ? shaderc_compile_into_preprocessed_text(c->sc, job->src, job->len, shaderc_compute_shader,
                                                                     job->file, job->entry, s.opts)
                            : shaderc_compile_into_spv(c->sc, job->src, job->len, shaderc_compute_shader, job->file,
                                                       job->entry, s.opts);
        rc = result(r, job, out);
        if (r) shaderc_result_release(r);
    }
    shaderc_compile_options_release(s.opts);
    return rc;
}
#endif
