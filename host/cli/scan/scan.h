/* cckey scan: kernel sources and their entry points. */
#ifndef CCKEY_SCAN_H
#define CCKEY_SCAN_H

#include <stdbool.h>
#include <stddef.h>

typedef enum scan_lang {
    CCKEY_LANG_NONE = 0,
    CCKEY_LANG_OPENCL,   /* .cl .ocl .clc .opencl: __kernel / kernel functions */
    CCKEY_LANG_CUDA,     /* .cu .cuh: __global__ functions */
    CCKEY_LANG_HIP,      /* .hip: __global__ functions, named as CUDA's */
    CCKEY_LANG_METAL,    /* .metal: kernel / [[kernel]] functions */
    CCKEY_LANG_GLSL,     /* .comp .glsl: Vulkan compute shaders, entry main (shaders.h) */
    CCKEY_LANG_HLSL,     /* .hlsl: Vulkan compute shaders, [numthreads] functions (shaders.h) */
    /* Host code (.h .hpp .c .cpp ...): only the programs it holds as strings
     * (see strprog.h) are scanned; a folder walk finds these too. Never a
     * manifest's language (scan_lang_from_name does not know it). Last:
     * the languages before it are the manifests'. */
    CCKEY_LANG_HOST
} scan_lang;

/* "opencl", "cuda", "hip", "metal", "glsl", "hlsl", "host"; "" for NONE. */
const char *scan_lang_name(scan_lang lang);
/* By name as above; NONE for anything else. */
scan_lang scan_lang_from_name(const char *name);
/* By file name extension; NONE when it is not a kernel source. */
scan_lang scan_lang_of_path(const char *path);
/* Host code by its extension (.h .hh .hpp .hxx .c .cc .cpp .cxx .inl). */
bool scan_is_host_path(const char *path);

typedef struct scan_entry {
    char *name;          /* what the runtime looks up (CUDA C++: the mangled name) */
    char *source_name;   /* as written */
    unsigned line;       /* in files[file] (the program's text for a stringified program) */
    unsigned file;       /* index into the result's files: 0 the scanned file, else a header it includes */
    int program;         /* -1: the file is the program; else the index of its stringified program */
} scan_entry;

/* A program a host file holds as a string (a C++ raw string, adjacent
 * literals, MSTRINGIFY(...)): the text a runtime gets, decoded as the host
 * compiler decodes it. */
typedef struct scan_program {
    char *text;
    size_t len;
    scan_lang lang;
    unsigned line;       /* where its first literal starts */
} scan_program;

typedef struct scan_result {
    scan_entry *entries;
    size_t n, cap;
    char **warnings;     /* "LINE: text" or "FILE:LINE: text" (a header's) */
    size_t n_warnings, cap_warnings;
    unsigned deep_line;  /* CCKEY_SCAN_TOO_DEEP: where the nesting passed the limit */
    char **files;        /* scan_file: the scanned file, then the headers it includes */
    size_t n_files;
    scan_program *programs;
    size_t n_programs;
} scan_result;

/* Braces nested deeper than this are refused (a scope costs memory, and no
 * kernel source comes near it). */
#define CCKEY_SCAN_MAX_DEPTH 4096
#define CCKEY_SCAN_TOO_DEEP (-2)

/* Find the entry points of one source, in order of appearance, each name
 * once. 0, -1 when out of memory, or CCKEY_SCAN_TOO_DEEP (out->deep_line
 * set) when braces nest deeper than CCKEY_SCAN_MAX_DEPTH. */
int scan_source(const char *src, size_t len, scan_lang lang, scan_result *out);
/* The same, with options: kernel_macros are words that mark a kernel as
 * __kernel / __global__ do (hashcat's KERNEL_FQ), for suites that declare
 * kernels through a macro defined in another file. */
typedef struct scan_options {
    const char *const *kernel_macros;
    size_t n_kernel_macros;
    /* The option set's macros, in order: "NAME" or "NAME=VALUE" for -D,
     * "-NAME" for -U. #if and #ifdef see them (see pp.h). */
    const char *const *defines;
    size_t n_defines;
} scan_options;
int scan_source_opts(const char *src, size_t len, scan_lang lang, const scan_options *opts,
                           scan_result *out);
/* A file (path, its text src[0..len), which the caller reads or maps) as
 * its compiler sees it: the headers it includes with #include "..." (found
 * beside the including file, then beside the file; each once) are
 * part of it, so their typedefs, classes, macros and kernels count; a
 * kernel from a header is listed for this file, with the header in
 * out->files. Host files (.h .hpp .c .cpp ...) and stringified OpenCL
 * files yield their string programs (out->programs). 0, -1 out of memory,
 * CCKEY_SCAN_TOO_DEEP, or CCKEY_SCAN_UNREADABLE (errno set; a header
 * that is there but cannot be read). */
#define CCKEY_SCAN_UNREADABLE (-3)
int scan_file(const char *path, const char *src, size_t len, scan_lang lang, const scan_options *opts,
                    scan_result *out);
void scan_result_free(scan_result *r);

/* Every kernel source under the given paths (files are taken as they are if
 * their extension is known; folders are searched recursively, skipping
 * hidden entries and not following links to folders), sorted by path and
 * without duplicates: one file under several names (a symlink and its
 * target, d/e.cl and ./d/e.cl) is listed once, under its first name. On error returns -1 and says why in err. */
typedef struct scan_source_list {
    char **paths;
    scan_lang *langs;
    bool *named;         /* given as a file (not found in a folder) */
    size_t n, cap;
} scan_source_list;
int scan_find_sources(char *const *paths, size_t n, scan_source_list *out, char *err, size_t err_len);
/* Drops the files another file of the list includes with #include "..."
 * (found beside the includer): a header is compiled as part of the file
 * that includes it, so its kernels are listed there, not twice. Files
 * given by name stay. Returns how many were dropped, or -1 out of memory. */
long scan_drop_included(scan_source_list *l);
void scan_source_list_free(scan_source_list *l);

#endif
