/* What `cckey warm` needs to compile a kernel for real: option pairs turned
 * into compiler flags, and the OpenCL and NVRTC compilers, loaded at run
 * time. CLI-only; not part of the library (hence host/cli/warm/, a
 * component of the CLI's own tree). */
#ifndef CCKEY_WARM_H
#define CCKEY_WARM_H

#include "cckey.h"

#include <stdbool.h>
#include <stddef.h>

/* ---- flags as people write them, and the option pairs they become ----
 * A flag that takes an argument becomes the pair [FLAG, ARGUMENT], however
 * it is written: -Idir, -I dir and (NVRTC's spelling) -I=dir are all
 * ["-I", "dir"]; -DN=4 and -D N=4 are ["-D", "N=4"]; -include h.h and
 * --pre-include=h.h are ["-include", "h.h"] and ["--pre-include", "h.h"];
 * -O3 is ["-O", "3"]. Equal keys keep their order in the key's stable sort,
 * so the order of -I folders (and of -D/-U) is part of the key, and the
 * build gets them in that order. The flags (warm_args.c): -D -U -I (joined
 * or spaced), -O (joined or alone), clang's -include -imacros -isystem
 * -idirafter -iquote -isysroot -iprefix -iwithprefix -iwithprefixbefore -x
 * -Xclang, and NVRTC's options that take a value (--define-macro,
 * --include-path, --pre-include, --gpu-architecture/-arch, ...), spaced or
 * with '='. Other words: [text before the first '=', text after it], or
 * [word, ""] when there is no '=' or nothing after it. */
enum { CCKEY_FLAGS_BAD = -1, CCKEY_FLAGS_OOM = -2 };
/* fn gets each pair; non-zero: out of memory. */
typedef int (*warm_pair_fn)(void *user, const char *k, size_t klen, const char *v, size_t vlen);
/* words[0..n) (split as a shell would) to pairs: 0, or CCKEY_FLAGS_BAD with
 * why (a flag missing its argument, named), or CCKEY_FLAGS_OOM. */
int warm_flags_tokenize(const char *const *words, const size_t *lens, size_t n, warm_pair_fn fn, void *user,
                         char *why, size_t why_len);
/* Whether flag is one that takes an argument (optional: the argument may be
 * left out, as -O's), and whether it is a single-dash flag of more than one
 * letter, written spaced (-isystem DIR), which a build string gets as two
 * words. */
bool warm_flag_takes_arg(const char *flag, size_t len, bool *optional);
bool warm_flag_spaced(const char *flag, size_t len);
/* An option set that no build can honour: a flag that needs an argument
 * with none (["-I", ""]), or two options whose order matters but whose
 * keys differ so that the canonical order would swap them (["-U", "X"]
 * before ["-D", "X"]; ["-Izz", ""] before ["-Iaa", ""], as older scans
 * wrote them). 0, or CCKEY_FLAGS_BAD with why. */
int warm_options_check(const cckey_option *opts, size_t n, char *why, size_t why_len);

/* Option pairs as compiler flags, in canonical order (the order of the key:
 * stable by option key, unsigned bytes). One pair gives one flag:
 *   value ""                      -> key                 (-cl-fast-relaxed-math)
 *   key ending in '='             -> key value           (-DN= + 4 -> -DN=4)
 *   key of a dash and one letter  -> key value           (-D + N=4 -> -DN=4, -I + /a -> -I/a, -O + 3 -> -O3)
 *   CUDA: key "arch"              -> --gpu-architecture=value
 *   OpenCL: a spaced flag of more than one letter (-isystem, -include, -x,
 *           -Xclang, ...)         -> key, value          (two words: -isystem /a)
 *   anything else                 -> key "=" value       (-DBLOCK + 64 -> -DBLOCK=64,
 *                                                          -cl-std + CL2.0 -> -cl-std=CL2.0,
 *                                                          CUDA: -include + h.h -> -include=h.h)
 * The set is checked first (warm_options_check): a flag missing its
 * argument, or options the canonical order would swap, fail the build.
 * OpenCL takes one string, the flags joined by spaces, so a flag holding
 * white space or a quote is refused there; NVRTC takes the flags one by
 * one. A NUL byte is refused everywhere. */
typedef struct warm_flags {
    char **argv;
    size_t argc;
    char *joined;     /* the flags joined by single spaces */
    bool has_arch;    /* an explicit architecture (arch, -arch, --gpu-architecture) */
} warm_flags;
int warm_flags_make(const cckey_option *opts, size_t n, bool cuda, warm_flags *out, char *why, size_t why_len);
void warm_flags_free(warm_flags *f);
/* f with an include flag for each of dirs put first (-IDIR for OpenCL,
 * --include-path=DIR for NVRTC): the source's own folder, so that its
 * headers are found wherever warm runs. 0, or -1 with why. */
int warm_flags_include(const warm_flags *f, const char *const *dirs, size_t n, bool cuda, warm_flags *out,
                        char *why, size_t why_len);
/* The folders named by f's own include flags, in the compiler's search
 * order: -iquote, then -I (-IDIR; NVRTC's --include-path=DIR), -isystem,
 * -idirafter, each in the order given; as pointers into f; at most max.
 * Their count. */
size_t warm_flags_include_dirs(const warm_flags *f, const char **dirs, size_t max);

/* One build's outcome. */
typedef struct warm_build {
    void *binary;     /* malloc'ed; NULL on failure */
    size_t binary_len;
    char *log;        /* the compiler's log, malloc'ed, may be NULL */
    char error[512];  /* why it failed; "" on success */
} warm_build;
void warm_build_clear(warm_build *b);

/* Compilers and their devices. find() gives a device's index by identity
 * ("NAME|DRIVER", as cckey devices prints it) or -1; names() lists them all
 * for messages. build() compiles source for device dev and tells for each
 * of names[] whether the binary holds that entry point. Thread-safe. */
typedef struct warm_compiler {
    const char *what;   /* "OpenCL", "CUDA" */
    const char *tool;   /* the compiler recorded in entries: "OpenCL", "NVRTC" */
    void *impl;
    int (*find)(void *impl, const char *ident, size_t len);
    void (*names)(void *impl, char *buf, size_t len);
    /* The compiler's version for device dev, as it reports it, recorded in
     * each entry so that an upgrade is a miss. */
    void (*version)(void *impl, int dev, char *buf, size_t len);
    int (*build)(void *impl, int dev, const char *src, size_t len, const warm_flags *flags,
                 const char *const *names, size_t n_names, bool *present, warm_build *out);
    /* For `cckey scan --exact`: the entry points the compiler itself finds
     * in src built with flags (OpenCL: CL_PROGRAM_KERNEL_NAMES, on device
     * dev; NVRTC: the .entry names of its PTX, dev ignored, the options'
     * architecture or NVRTC's default). file names the source in the
     * compiler's messages. 0 with out->binary holding the names, each ended
     * by '\n' (binary_len bytes, NUL-terminated), or -1 with out->error and
     * out->log. */
    int (*entries)(void *impl, int dev, const char *src, size_t len, const char *file, const warm_flags *flags,
                   warm_build *out);
} warm_compiler;

/* A compiler's devices by identity, with the find() and names() that both
 * compilers use. */
#define CCKEY_WARM_MAX_DEVS 64
typedef struct warm_devices {
    char ident[CCKEY_WARM_MAX_DEVS][400];
    size_t n;
} warm_devices;
int warm_find(const warm_devices *d, const char *ident, size_t len);
void warm_names(const warm_devices *d, char *buf, size_t len);

/* The NVRTC library the CUDA compiler loads instead of searching the usual
 * names (NULL or "": search); call before any compiler is made. 0, or -1
 * for a path of 4096 bytes or more. */
int warm_set_nvrtc_library(const char *path);

/* The CUDA toolkit that NVRTC gets its headers from when none is found
 * beside the NVRTC library (CUDA_HOME, else CUDA_PATH; NULL or "": none);
 * call before any compiler is made. 0, or -1 for a path too long. */
int warm_set_cuda_home(const char *path);
/* The toolkit's include folders (ROOT/include, and ROOT/include/cccl where
 * it exists), real paths: ROOT is the folder above the one nvrtc_path (the
 * NVRTC library) lies in, else the folder warm_set_cuda_home named;
 * a ROOT counts when ROOT/include holds cuda_runtime_api.h. Their count. */
#define CCKEY_TOOLKIT_PATH 4096
size_t warm_cuda_toolkit_find(const char *nvrtc_path, char dirs[][CCKEY_TOOLKIT_PATH], size_t max);
/* The toolkit build the NVRTC library at lib_path comes from, as nvcc
 * --version names it ("V13.0.88", from the banner in its .rodata), or ""
 * when it does not say. */
void warm_nvrtc_build(const char *lib_path, char *buf, size_t len);
/* The CCCL (libcu++, CUB, Thrust) version of a toolkit include folder
 * ("CCCL 3.0.1", from cuda/std/__cccl/version.h there or under cccl/), or
 * "" when it has none. */
void warm_cccl_version(const char *include_dir, char *buf, size_t len);
/* The folders warm's NVRTC builds search after the options' own (-I each,
 * last), as found when the CUDA compiler was made: pointers to them, at
 * most max; their count (0 before, or when none was found). */
size_t warm_nvrtc_toolkit_include(const char **dirs, size_t max);

/* 0, or -1 with why when the compiler or its devices are not here. */
int warm_compiler_opencl(warm_compiler *out, char *why, size_t why_len);
int warm_compiler_cuda(warm_compiler *out, char *why, size_t why_len);
/* 0 when NVRTC loads here (for cckey --version), or -1 with why. */
int warm_nvrtc_probe(char *why, size_t why_len);

/* The .entry names of PTX text (mangled, template instances included),
 * each ended by '\n', NUL-terminated, malloc'ed; *n_out their bytes. NULL
 * when out of memory. */
char *warm_ptx_entries(const char *ptx, size_t len, size_t *n_out);
/* A whole file, NUL-terminated (*n its length without the NUL); NULL with
 * errno when it cannot be read. */
char *warm_read_file(const char *path, size_t *n);
/* nvcc's path: on PATH, else under /usr/local/cuda/bin; false when neither. */
bool warm_nvcc_find(char *buf, size_t len);
/* `nvcc -x cu -ptx FLAGS PATH` (which, unlike NVRTC, takes host code too),
 * its output and messages in files under tmpdir named after job: out as
 * for warm_compiler.entries, the log being nvcc's standard error. */
int warm_nvcc_entries(const char *nvcc, const char *path, const warm_flags *flags, const char *tmpdir,
                       size_t job, warm_build *out);

/* CUDA without a driver: a device identity that matches no local device
 * ("NAME|DRIVER") still finds this pseudo-device when NVRTC is usable; a
 * build for it needs the architecture in the options (arch=sm_XX), and is the
 * same NVRTC call a GPU machine makes for that key. */
#define CCKEY_WARM_REMOTE_DEV CCKEY_WARM_MAX_DEVS
/* Whether NVRTC can be loaded, and its version ("NVRTC 12.8") or why not. */
bool warm_nvrtc_usable(char *what, size_t len);

#endif
