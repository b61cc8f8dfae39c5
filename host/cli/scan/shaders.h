/* Entry points of Vulkan compute shaders, found in the text with the
 * scanner's lexer (lexer.h: comments, strings and dead conditionals are
 * skipped the same way as for kernels):
 *   GLSL: `main`, when the source defines it at file scope and is a compute
 *         shader: a .comp file, or one that declares its workgroup size,
 *         layout(local_size_x = ...) in; (any local_size_* qualifier); a
 *         main without it is warned about (another stage's shader);
 *   HLSL: each function marked [numthreads(...)] and defined (a prototype
 *         names no code), by name, once per name.
 * Results fill a scan_result (scan.h) as the kernel scanner's do. */
#ifndef CCKEY_SCAN_SHADERS_H
#define CCKEY_SCAN_SHADERS_H

#include "scan.h"

#include <stdbool.h>
#include <stddef.h>

/* 0, -1 when out of memory, or CCKEY_SCAN_TOO_DEEP (out->deep_line set).
 * compute_file: the file is a compute shader by its name (.comp), so no
 * layout declaration is needed. */
int scan_glsl(const char *src, size_t len, bool compute_file, scan_result *out);
int scan_hlsl(const char *src, size_t len, scan_result *out);

/* By language: GLSL or HLSL as above (for any other language, -1). */
int scan_shader(const char *src, size_t len, scan_lang lang, bool compute_file, scan_result *out);
/* Why a shader file has no entry points, for scan's warning; NULL when
 * that is no news (a .glsl without main is a header). */
const char *scan_shader_none(scan_lang lang, bool compute_file);

/* Whether path names a GLSL compute shader by extension (.comp), a GLSL
 * file that may hold one (.glsl), or an HLSL file (.hlsl). */
bool scan_shader_path_is_comp(const char *path);
bool scan_shader_path_is_glsl(const char *path);
bool scan_shader_path_is_hlsl(const char *path);

#endif
