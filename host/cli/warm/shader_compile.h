/* GLSL and HLSL compute shaders to SPIR-V with shaderc (glslang inside),
 * for `cckey warm`. Flags are glslc's, as warm makes them from a tuple's
 * options (warm.h, warm_flags):
 *   -DNAME, -DNAME=VALUE     a macro
 *   -IDIR                    an include folder (warm puts the source's first)
 *   -O0 | -Os | -O | -O1..3  no optimization (the default, as glslc) | size |
 *                            performance
 *   -g  -w  -Werror          debug info; no warnings; warnings are errors
 *   --target-env=vulkan1.N   the Vulkan version (default: the device's)
 *   --target-spv=spv1.N      the SPIR-V version (default: the Vulkan
 *                            version's, for HLSL 1.3 at most: glslang 12's
 *                            HLSL front end emits BufferBlock, which SPIR-V
 *                            1.4 removed)
 *   -std=VERSIONPROFILE      GLSL: force #version (e.g. -std=450core)
 *   -fhlsl-16bit-types -fhlsl-functionality1 -fhlsl-iomap -fhlsl-offsets
 *   -fauto-bind-uniforms -fauto-map-locations -fauto-combined-image-sampler
 *   -finvert-y -fnan-clamp   as glslc
 * Anything else is refused by name: a flag the compiler would not see must
 * not change the key silently.
 *
 * `#include "f"` searches the including file's folder, then the -I folders
 * in order; `#include <f>` the -I folders only: the rule the store records
 * dependencies by (cckey_deps_scan), so that what is recorded is what was
 * read. GLSL needs no #extension line for it (shaderc enables
 * GL_GOOGLE_include_directive). */
#ifndef CCKEY_SHADER_COMPILE_H
#define CCKEY_SHADER_COMPILE_H

#include "warm.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum warm_shader_lang { CCKEY_SHADER_GLSL = 1, CCKEY_SHADER_HLSL } warm_shader_lang;

typedef struct warm_shader_job {
    warm_shader_lang lang;
    const char *src;
    size_t len;
    const char *file;            /* names the source in messages ("FILE:LINE: error: ..."); its
                                    folder must be the first -I folder (warm puts it there) */
    const char *entry;           /* GLSL: "main"; HLSL: the function */
    const char *const *argv;     /* flags as above */
    size_t argc;
    uint32_t vulkan;             /* the device's Vulkan version (VK_MAKE_API_VERSION); 0: none
                                    here, so --target-env must say */
    bool preprocess;             /* only the preprocessor: text in out->binary */
} warm_shader_job;

typedef struct warm_shader_compiler warm_shader_compiler;

/* 0, or -1 with why (a build without shaderc, no memory). Thread-safe to
 * use from many threads at once; free after the last use. */
int warm_shader_compiler_new(warm_shader_compiler **out, char *why, size_t why_len);
void warm_shader_compiler_free(warm_shader_compiler *c);

/* What entries record as the toolchain's version, e.g.
 * "shaderc 2023.2.1, SPIRV-Tools 2023.1.1, glslang 12.0.0". */
const char *warm_shader_compiler_version(void);

/* The module (SPIR-V words, binary_len a multiple of 4) or, with
 * job->preprocess, the preprocessed text (NUL-terminated) in out->binary;
 * warnings in out->log. -1 with out->error (the compiler's first message,
 * FILE:LINE first, or the refused flag) and out->log (all of them). */
int warm_shader_compile(warm_shader_compiler *c, const warm_shader_job *job, warm_build *out);

#endif
