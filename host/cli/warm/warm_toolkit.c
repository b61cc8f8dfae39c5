/* The CUDA toolkit's include folders, which NVRTC does not search by
 * itself (#include <cooperative_groups.h> needs them); see warm.h. */
#include "warm.h"

#include <elf.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Set by the CLI (CUDA_HOME, else CUDA_PATH) before any compiler is made. */
static char cuda_home[4096];

int warm_set_cuda_home(const char *path)
{
    if (path && strlen(path) >= sizeof cuda_home) return -1;
    snprintf(cuda_home, sizeof cuda_home, "%s", path ? path : "");
    return 0;
}

static bool is_file(const char *dir, const char *name)
{
    char p[PATH_MAX + 64];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* root/include (and its cccl/, where CUDA 13 keeps libcu++, CUB and Thrust)
 * when it holds the toolkit's headers; their count. */
static size_t include_of(const char *root, char dirs[][CCKEY_TOOLKIT_PATH], size_t max)
{
    char inc[PATH_MAX], real[PATH_MAX];
    snprintf(inc, sizeof inc, "%s/include", root);
    if (max == 0 || !realpath(inc, real) || !is_file(real, "cuda_runtime_api.h") ||
        strlen(real) + 7 >= CCKEY_TOOLKIT_PATH)
        return 0;
    snprintf(dirs[0], CCKEY_TOOLKIT_PATH, "%s", real);
    struct stat st;
    snprintf(inc, sizeof inc, "%s/cccl", real);
    if (max < 2 || stat(inc, &st) != 0 || !S_ISDIR(st.st_mode)) return 1;
    snprintf(dirs[1], CCKEY_TOOLKIT_PATH, "%s", inc);
    return 2;
}

size_t warm_cuda_toolkit_find(const char *nvrtc_path, char dirs[][CCKEY_TOOLKIT_PATH], size_t max)
{
    char real[PATH_MAX];
    /* The toolkit that NVRTC came with: LIBDIR/.. (lib64 and
     * targets/ARCH/lib alike). */
    if (nvrtc_path && realpath(nvrtc_path, real)) {
        char *lib = dirname(real);
        char up[PATH_MAX];
        snprintf(up, sizeof up, "%s", lib);
        size_t n = include_of(dirname(up), dirs, max);
        if (n) return n;
    }
    return *cuda_home ? include_of(cuda_home, dirs, max) : 0;
}

/* The section called name of the ELF64 file fd: its offset and size, or
 * false. */
static bool elf_section(int fd, const char *name, uint64_t *off, uint64_t *size)
{
    Elf64_Ehdr eh;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum)
        return false;
    Elf64_Shdr names;
    if (pread(fd, &names, sizeof names, (off_t)(eh.e_shoff + (uint64_t)eh.e_shstrndx * sizeof names)) !=
        (ssize_t)sizeof names)
        return false;
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh;
        char got[16] = "";
        if (pread(fd, &sh, sizeof sh, (off_t)(eh.e_shoff + (uint64_t)i * sizeof sh)) != (ssize_t)sizeof sh)
            return false;
        if (sh.sh_name >= names.sh_size || pread(fd, got, sizeof got - 1, (off_t)(names.sh_offset + sh.sh_name)) <= 0)
            continue;
        if (strcmp(got, name) == 0) {
            *off = sh.sh_offset, *size = sh.sh_size;
            return true;
        }
    }
    return false;
}

void warm_nvrtc_build(const char *lib_path, char *buf, size_t len)
{
    static const char mark[] = "Cuda compilation tools, release ";
    buf[0] = '\0';
    int fd = lib_path ? open(lib_path, O_RDONLY | O_CLOEXEC) : -1;
    uint64_t off, size;
    char *data = NULL;
    /* The banner nvcc --version prints lives in .rodata (13 MB of 109 for
     * NVRTC 13.0): read that section only. */
    if (fd >= 0 && elf_section(fd, ".rodata", &off, &size) && size < (1u << 30) && (data = malloc(size + 1)) &&
        pread(fd, data, size, (off_t)off) == (ssize_t)size) {
        data[size] = '\0';
        const char *p = memmem(data, size, mark, sizeof mark - 1), *v = p ? strstr(p, ", V") : NULL;
        if (v && v - p < 64) snprintf(buf, len, "%.*s", (int)strcspn(v + 2, " \n\r\t"), v + 2);
    }
    free(data);
    if (fd >= 0) close(fd);
}

void warm_cccl_version(const char *include_dir, char *buf, size_t len)
{
    static const char *const where[] = {"cccl/cuda/std/__cccl/version.h", "cuda/std/__cccl/version.h"};
    buf[0] = '\0';
    for (size_t i = 0; i < 2 && !buf[0]; i++) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/%s", include_dir, where[i]);
        size_t n;
        char *text = warm_read_file(path, &n);
        const char *d = text ? strstr(text, "#define CCCL_VERSION ") : NULL;
        unsigned long v = d ? strtoul(d + 21, NULL, 10) : 0;
        if (v) snprintf(buf, len, "CCCL %lu.%lu.%lu", v / 1000000, v / 1000 % 1000, v % 1000);
        free(text);
    }
}
