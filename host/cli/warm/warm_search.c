/* Where a build's compiler looks for headers, read from the flags exactly
 * as the build passes them (warm_flags_make's argv, "-Idir" or "-I" "dir"
 * alike, in their order), and the preprocessor command that looks the same
 * way (see warm_deps.h). */
#include "warm_deps.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool warm_deps_mode_parse(const char *s, warm_deps_mode *out)
{
    static const char *const names[] = {"auto", "text", "preprocessor"};
    for (int i = 0; i < 3; i++)
        if (strcmp(s, names[i]) == 0) return *out = (warm_deps_mode)i, true;
    return false;
}

/* An executable named name on PATH, into buf. */
static bool on_path(const char *name, char *buf, size_t len)
{
    if (strchr(name, '/')) return snprintf(buf, len, "%s", name) < (int)len && access(buf, X_OK) == 0;
    const char *path = getenv("PATH");
    for (const char *p = path ? path : ""; *p;) {
        size_t n = strcspn(p, ":");
        if (n && (size_t)snprintf(buf, len, "%.*s/%s", (int)n, p, name) < len && access(buf, X_OK) == 0) return true;
        p += n + (p[n] == ':');
    }
    return false;
}

int warm_deps_init(warm_deps_cfg *cfg, warm_deps_mode mode, const char *pp, char *why, size_t why_len)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->mode = mode;
    pthread_mutex_init(&cfg->lock, NULL);
    if (!getcwd(cfg->cwd, sizeof cfg->cwd)) {
        snprintf(why, why_len, "cannot name the working folder, which the compilers search for headers first");
        return -1;
    }
    if (mode == WARM_DEPS_TEXT || (pp && strcmp(pp, "none") == 0)) {
        snprintf(cfg->pp_why, sizeof cfg->pp_why, "no preprocessor (--%s)", pp ? "preprocessor none" : "deps text");
        return 0;
    }
    if (pp) {
        if (!on_path(pp, cfg->pp, sizeof cfg->pp)) {
            snprintf(why, why_len, "--preprocessor %s: no such program", pp);
            return -1;
        }
        return 0;
    }
    static const char *const names[] = {"clang", "clang-19", "clang-18", "clang-17", "clang-16", "clang-15",
                                        "clang-14"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (on_path(names[i], cfg->pp, sizeof cfg->pp)) return 0;
    cfg->pp[0] = '\0';
    snprintf(cfg->pp_why, sizeof cfg->pp_why, "no preprocessor (clang) on PATH");
    return 0;
}

/* ---- the search folders ---------------------------------------------------- */

enum { K_QUOTE, K_INC, K_SYS, K_AFTER, K_PRE, K_KINDS };

/* Flags that name a folder or a file, longest first where one is a prefix
 * of another. joined: the argument may follow without '=' ("-Idir"). */
static const struct {
    const char *flag;
    int kind;
    bool joined;
} search_flags[] = {
    {"--include-path", K_INC, false}, {"--system-include", K_SYS, false}, {"--pre-include", K_PRE, false},
    {"-idirafter", K_AFTER, true},    {"-isystem", K_SYS, true},          {"-iquote", K_QUOTE, true},
    {"-include", K_PRE, true},        {"-imacros", K_PRE, true},          {"-I", K_INC, true},
};

/* argv[*i] as a search flag: its kind and argument (taking argv[*i + 1]
 * when it is separate), or -1. why: the flag missing its argument. */
static int search_flag(const warm_flags *f, size_t *i, const char **arg, char *why, size_t why_len)
{
    const char *a = f->argv[*i];
    for (size_t k = 0; k < sizeof search_flags / sizeof *search_flags; k++) {
        size_t n = strlen(search_flags[k].flag);
        if (strncmp(a, search_flags[k].flag, n) != 0) continue;
        if (a[n] == '\0') {
            if (*i + 1 == f->argc) {
                snprintf(why, why_len, "flag %s is missing its argument", a);
                return -2;
            }
            *arg = f->argv[++*i];
        } else if (a[n] == '=') {
            *arg = a + n + 1;
        } else if (search_flags[k].joined) {
            *arg = a + n;
        } else {
            continue;
        }
        return search_flags[k].kind;
    }
    return -1;
}

int warm_search_make(const warm_deps_cfg *cfg, const warm_flags *f, const char *src, warm_search *out, char *why,
                     size_t why_len)
{
    memset(out, 0, sizeof *out);
    out->roots[out->n_roots++] = cfg->cwd;
    out->roots[out->n_roots++] = src;
    /* Each kind in turn, the flags of one kind in their order. */
    for (int kind = K_QUOTE; kind < K_KINDS; kind++) {
        for (size_t i = 0; i < f->argc; i++) {
            const char *arg = NULL;
            int k = search_flag(f, &i, &arg, why, why_len);
            if (k == -2) return -1;
            if (k != kind || !*arg) continue;
            if (kind == K_PRE) {
                if (out->n_pre == WARM_MAX_PRE) break;
                out->pre[out->n_pre++] = arg;
                continue;
            }
            if (out->n_roots == WARM_MAX_ROOTS) {
                snprintf(why, why_len, "more than %d include folders", WARM_MAX_ROOTS - 2);
                return -1;
            }
            out->roots[out->n_roots++] = arg;
            out->quote_dirs |= kind == K_QUOTE;
        }
    }
    return 0;
}

/* ---- the preprocessor's command -------------------------------------------- */

static bool starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static char *dupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *dupf(const char *fmt, ...)
{
    char buf[4200];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return n < 0 || (size_t)n >= sizeof buf ? NULL : strdup(buf);
}

static void push(warm_pp_argv *a, const char *s) { a->argv[a->argc++] = s; }

static const char *own(warm_pp_argv *a, char *s)
{
    if (!s) return NULL;
    if (a->n_owned == sizeof a->owned / sizeof *a->owned) {
        free(s);
        return NULL;
    }
    return a->owned[a->n_owned++] = s;
}

/* An OpenCL flag clang's preprocessor needs: what defines macros or changes
 * the search. A separate argument is taken along. */
static void opencl_flag(warm_pp_argv *a, const warm_flags *f, size_t *i)
{
    static const char *const pairs[] = {"-D", "-U", "-I", "-isystem", "-iquote", "-idirafter", "-include", "-imacros"};
    const char *s = f->argv[*i];
    for (size_t k = 0; k < sizeof pairs / sizeof *pairs; k++) {
        if (!starts(s, pairs[k])) continue;
        push(a, s);
        if (strcmp(s, pairs[k]) == 0 && *i + 1 < f->argc) push(a, f->argv[++*i]);
        return;
    }
    if (starts(s, "-cl-std=") || strcmp(s, "-cl-fast-relaxed-math") == 0 || strcmp(s, "-cl-finite-math-only") == 0 ||
        strcmp(s, "-cl-unsafe-math-optimizations") == 0)
        push(a, s);
}

/* An NVRTC flag as clang spells it: "--define-macro=X" is "-DX", and so on. */
static void cuda_flag(warm_pp_argv *a, const warm_flags *f, size_t *i, int *arch)
{
    static const struct {
        const char *nvrtc, *clang;
    } map[] = {{"--define-macro", "-D"}, {"--undefine-macro", "-U"}, {"--include-path", "-I"},
               {"--pre-include", "-include"}, {"-include", "-include"}, {"-D", "-D"}, {"-U", "-U"}, {"-I", "-I"}};
    const char *s = f->argv[*i];
    for (size_t k = 0; k < sizeof map / sizeof *map; k++) {
        size_t n = strlen(map[k].nvrtc);
        if (!starts(s, map[k].nvrtc) || (s[n] != '\0' && s[n] != '=' && map[k].nvrtc[1] == '-')) continue;
        const char *arg = s[n] == '\0' ? (*i + 1 < f->argc ? f->argv[++*i] : "") : s + n + (s[n] == '=');
        push(a, map[k].clang);
        push(a, arg);
        return;
    }
    const char *v = starts(s, "--gpu-architecture=") ? s + 19 : starts(s, "-arch=") ? s + 6 : NULL;
    if (v && (starts(v, "sm_") || starts(v, "compute_"))) *arch = atoi(strchr(v, '_') + 1);
    if (starts(s, "--std=") || starts(s, "-std=")) push(a, own(a, strdup(s + (s[1] == '-'))));
}

int warm_pp_argv_make(const warm_deps_cfg *cfg, const warm_flags *build, bool cuda, const char *nvrtc_version,
                      warm_pp_argv *out)
{
    memset(out, 0, sizeof *out);
    out->argv = calloc(2 * build->argc + 24, sizeof *out->argv);
    if (!out->argv) return -1;
    push(out, cfg->pp);
    push(out, "-E");
    push(out, "-dI");
    push(out, "-x");
    if (!cuda) {
        push(out, "cl");
        /* PoCL searches the working folder before every -I folder. */
        push(out, own(out, dupf("-I%s", cfg->cwd)));
        for (size_t i = 0; i < build->argc; i++) opencl_flag(out, build, &i);
    } else {
        out->cuda = true;
        int major = 0, minor = 0, arch = 0;
        sscanf(nvrtc_version ? nvrtc_version : "", "NVRTC %d.%d", &major, &minor);
        push(out, "c++");
        push(out, "-std=c++17");   /* NVRTC's default; a later --std wins */
        push(out, "-nostdinc");    /* NVRTC searches no system folder */
        push(out, "-D__CUDACC__");
        push(out, "-D__CUDACC_RTC__");
        push(out, "-D__NVCC__");
        push(out, own(out, dupf("-D__CUDACC_VER_MAJOR__=%d", major)));
        push(out, own(out, dupf("-D__CUDACC_VER_MINOR__=%d", minor)));
        /* NVRTC's built-in runtime header says which toolkit it is. */
        push(out, own(out, dupf("-DCUDART_VERSION=%d", major * 1000 + minor * 10)));
        size_t arch_at = out->argc++;
        for (size_t i = 0; i < build->argc; i++) cuda_flag(out, build, &i, &arch);
        /* NVRTC 13's default target is compute_75. */
        out->argv[arch_at] = own(out, dupf("-D__CUDA_ARCH__=%d", (arch ? arch : 75) * 10));
    }
    push(out, "-");
    for (size_t i = 0; i < out->argc; i++)
        if (!out->argv[i]) {
            warm_pp_argv_free(out);
            return -1;
        }
    return 0;
}

void warm_pp_argv_free(warm_pp_argv *a)
{
    for (size_t i = 0; i < a->n_owned; i++) free(a->owned[i]);
    free(a->argv);
    memset(a, 0, sizeof *a);
}
