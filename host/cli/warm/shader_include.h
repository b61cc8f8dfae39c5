/* shaderc's #include callbacks, resolving names by the store's rule (see
 * shader_compile.h). Only compiled with shaderc. */
#ifndef CCKEY_SHADER_INCLUDE_H
#define CCKEY_SHADER_INCLUDE_H

#include <shaderc/shaderc.h>
#include <stddef.h>

typedef struct warm_includer {
    const char *const *dirs;   /* the -I folders, in order */
    size_t n_dirs;
    /* The top-level source's name in messages, which need not be a path
     * from here: its own folder is warm's first -I folder, so a "..."
     * include of it searches the folders alone. */
    const char *top;
} warm_includer;

/* Sets opts' include callbacks to search inc's folders; inc must outlive
 * the compilation. */
void warm_includer_attach(shaderc_compile_options_t opts, warm_includer *inc);

#endif
