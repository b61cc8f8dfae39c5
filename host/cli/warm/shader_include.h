/* shaderc's #include callbacks, resolving names by the store's rule (see
 * shader_compile.h). Only compiled with shaderc. */
#ifndef CCKEY_SHADER_INCLUDE_H
#define CCKEY_SHADER_INCLUDE_H

#include <shaderc/shaderc.h>
#include <stddef.h>

typedef struct cckey_includer {
    const char *const *dirs;   /* the -I folders, in order */
    size_t n_dirs;
} cckey_includer;

/* Sets opts' include callbacks to search inc's folders; inc must outlive
 * the compilation. */
void cckey_includer_attach(shaderc_compile_options_t opts, cckey_includer *inc);

#endif
