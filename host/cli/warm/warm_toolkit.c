/* The CUDA toolkit's include folders, which NVRTC does not search by
 * itself (#include <cooperative_groups.h> needs them); see warm.h. */
#include "warm.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Set by the CLI (CUDA_HOME, else CUDA_PATH) before any compiler is made. */
static char cuda_home[4096];

int cckey_warm_set_cuda_home(const char *path)
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
    if (max == 0 || !realpath(inc, real) || !is_file(real, "cuda_runtime_api.h") || strlen(real) + 7 >= CCKEY_TOOLKIT_PATH)
        return 0;
    snprintf(dirs[0], CCKEY_TOOLKIT_PATH, "%s", real);
    struct stat st;
    snprintf(inc, sizeof inc, "%s/cccl", real);
    if (max < 2 || stat(inc, &st) != 0 || !S_ISDIR(st.st_mode)) return 1;
    snprintf(dirs[1], CCKEY_TOOLKIT_PATH, "%s", inc);
    return 2;
}

size_t cckey_cuda_toolkit_find(const char *nvrtc_path, char dirs[][CCKEY_TOOLKIT_PATH], size_t max)
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
