/* #include for shaderc: `"f"` beside the including file, then the -I
 * folders; `<f>` the -I folders only (cckey_deps_scan's rule, so the store
 * records exactly the files the compiler read). Each result names the file
 * by the path it was found at, which glslang uses both in messages
 * ("inc/common.glsl:4: error") and as the including file of its own
 * includes. */
#ifdef CCKEY_WITH_SHADERC
#include "shader_include.h"
#include "warm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct found {
    shaderc_include_result r;
    char *path;
    char *text;   /* the file, or the message of a failed include */
} found;

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* dir "/" name, malloc'ed, when that is a file; else NULL. */
static char *probe(const char *dir, size_t dir_len, const char *name)
{
    size_t n = dir_len + strlen(name) + 2;
    char *p = malloc(n);
    if (!p) return NULL;
    if (dir_len) snprintf(p, n, "%.*s/%s", (int)dir_len, dir, name);
    else snprintf(p, n, "%s", name);
    if (is_file(p)) return p;
    free(p);
    return NULL;
}

static char *locate(const warm_includer *inc, const char *name, int type, const char *includer)
{
    if (name[0] == '/') return is_file(name) ? strdup(name) : NULL;
    if (type == shaderc_include_type_relative && includer && !(inc->top && strcmp(includer, inc->top) == 0)) {
        const char *slash = strrchr(includer, '/');
        char *p = slash ? probe(includer, (size_t)(slash - includer), name) : NULL;
        if (p) return p;
    }
    for (size_t i = 0; i < inc->n_dirs; i++) {
        char *p = probe(inc->dirs[i], strlen(inc->dirs[i]), name);
        if (p) return p;
    }
    return NULL;
}

static shaderc_include_result *resolve(void *ud, const char *name, int type, const char *includer, size_t depth)
{
    (void)depth;   /* glslang limits the nesting itself */
    const warm_includer *inc = ud;
    found *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->path = locate(inc, name, type, includer);
    size_t n = 0;
    if (f->path) f->text = warm_read_file(f->path, &n);
    if (!f->text) {
        char msg[512];
        if (f->path) snprintf(msg, sizeof msg, "cannot read %s: %s", f->path, strerror(errno));
        else snprintf(msg, sizeof msg, "%s not found (searched %s%zu include folder(s))", name,
                      type == shaderc_include_type_relative ? "beside the including file and " : "", inc->n_dirs);
        free(f->path);
        f->path = NULL;
        f->text = strdup(msg);
        n = f->text ? strlen(f->text) : 0;
    }
    f->r = (shaderc_include_result){f->path ? f->path : "", f->path ? strlen(f->path) : 0, f->text ? f->text : "",
                                    n, f};
    return &f->r;
}

static void release(void *ud, shaderc_include_result *r)
{
    (void)ud;
    if (!r) return;
    found *f = r->user_data;
    free(f->path);
    free(f->text);
    free(f);
}

void warm_includer_attach(shaderc_compile_options_t opts, warm_includer *inc)
{
    shaderc_compile_options_set_include_callbacks(opts, resolve, release, inc);
}
#endif
