/* `cckey warm` for Vulkan: GLSL and HLSL compute shaders compiled to SPIR-V
 * by shaderc (shader_compile.h), each module then made into a compute
 * pipeline on the Vulkan device the tuple names (vk_device.h), so that only
 * modules the device takes are stored. Two compilers of warm.h's kind, one
 * per language, sharing the devices and the shader compiler.
 *
 * Devices: find() takes the identities vk_device.h describes. An identity
 * that is not here ("NAME|DRIVER|UUID" of another machine's GPU) is
 * compiled without a device when the options give the Vulkan version
 * (--target-env=vulkan1.N): the same module a machine with that device
 * compiles for the key, not checked on a pipeline. */
#ifndef CCKEY_WARM_VULKAN_H
#define CCKEY_WARM_VULKAN_H

#include "shader_compile.h"
#include "vk_device.h"
#include "warm.h"

#include <stdbool.h>
#include <stddef.h>

/* The Vulkan loader the compilers open (NULL or "": libvulkan.so.1); call
 * before the first compiler is made. 0, or -1 for a path of 4096 bytes or
 * more. */
int warm_set_vulkan_library(const char *path);

/* The devices on the loader warm_set_vulkan_library named (for
 * `cckey devices`): warm_vk_open's result, the caller's to close. */
int warm_vulkan_open(warm_vk **out, char *why, size_t why_len);

/* 0, or -1 with why when no shader compiler is built in. Without a loader
 * or device they still compile for identities given --target-env; names()
 * then says why there is no device. */
int warm_compiler_glsl(warm_compiler *out, char *why, size_t why_len);
int warm_compiler_hlsl(warm_compiler *out, char *why, size_t why_len);

/* Closes the devices and the shader compiler, when no build runs any more
 * (the CLI: before it exits; the next compiler made loads them again).
 * Lavapipe keeps memory per pipeline that only destroying its device frees,
 * so a process that made pipelines and exits without this leaks it. */
void warm_vulkan_release(void);

/* What build() does, with file naming the source in the compiler's
 * messages (FILE:LINE). */
int warm_vulkan_build(const warm_compiler *c, int dev, const char *file, const char *src, size_t len,
                       const warm_flags *flags, const char *const *names, size_t n_names, bool *present,
                       warm_build *out);

#endif
