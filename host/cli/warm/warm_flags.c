/* Option pairs to compiler flags; the mapping is documented in warm.h. */
#include "warm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void warm_build_clear(warm_build *b)
{
    free(b->binary);
    free(b->log);
    memset(b, 0, sizeof *b);
}

void warm_flags_free(warm_flags *f)
{
    for (size_t i = 0; i < f->argc; i++) free(f->argv[i]);
    free(f->argv);
    free(f->joined);
    memset(f, 0, sizeof *f);
}

static bool is(cckey_bytes b, const char *s) { return b.len == strlen(s) && memcmp(b.ptr, s, b.len) == 0; }

static char *concat(const char *a, size_t al, const char *sep, const char *b, size_t bl)
{
    size_t sl = strlen(sep);
    char *f = malloc(al + sl + bl + 1);
    if (!f) return NULL;
    memcpy(f, a, al);
    memcpy(f + al, sep, sl);
    memcpy(f + al + sl, b, bl);
    f[al + sl + bl] = '\0';
    return f;
}

/* One pair as one flag, or two words (f[1] set) for a spaced flag of
 * OpenCL's build string (-isystem DIR); see warm.h. 0, or -1 out of memory. */
static int flag_of(const cckey_option *o, bool cuda, bool *arch, char *f[2])
{
    const char *k = o->key.ptr ? o->key.ptr : "", *v = o->value.ptr ? o->value.ptr : "";
    size_t kl = o->key.len, vl = o->value.len;
    f[1] = NULL;
    if (cuda && (is(o->key, "arch") || is(o->key, "-arch") || is(o->key, "--gpu-architecture"))) *arch = true;
    if (cuda && is(o->key, "arch")) {
        f[0] = concat("--gpu-architecture=", 19, "", v, vl);
    } else if (vl == 0 || (kl && k[kl - 1] == '=') || (kl == 2 && k[0] == '-')) {
        f[0] = concat(k, kl, "", v, vl);
    } else if (!cuda && warm_flag_spaced(k, kl)) {
        f[0] = concat(k, kl, "", "", 0);
        f[1] = concat(v, vl, "", "", 0);
        if (!f[1]) free(f[0]), f[0] = NULL;
    } else {
        f[0] = concat(k, kl, "=", v, vl);
    }
    return f[0] ? 0 : -1;
}

/* out->joined: the flags joined by single spaces. */
static int join(warm_flags *out)
{
    size_t total = 1;
    for (size_t i = 0; i < out->argc; i++) total += strlen(out->argv[i]) + 1;
    if (!(out->joined = malloc(total))) return -1;
    char *p = out->joined;
    for (size_t i = 0; i < out->argc; i++) {
        size_t n = strlen(out->argv[i]);
        if (i) *p++ = ' ';
        memcpy(p, out->argv[i], n);
        p += n;
    }
    *p = '\0';
    return 0;
}

static const char *const blanks = " \t\n\r\v\f\"'\\";

/* Why option i cannot be a flag, or NULL. */
static const char *unfit(const cckey_option *o)
{
    if ((o->key.len && memchr(o->key.ptr, '\0', o->key.len)) ||
        (o->value.len && memchr(o->value.ptr, '\0', o->value.len)))
        return "holds a NUL byte, which no compiler flag can carry";
    if (o->key.len == 0) return "has an empty key";
    return NULL;
}

int warm_flags_make(const cckey_option *opts, size_t n, bool cuda, warm_flags *out, char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    if (warm_options_check(opts, n, why, why_len) != 0) return -1;
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    out->argv = calloc(2 * n + 1, sizeof *out->argv);
    if (!order || !out->argv || cckey_option_order(opts, n, order) != CCKEY_OK) goto oom;
    for (size_t i = 0; i < n; i++) {
        const cckey_option *o = &opts[order[i]];
        const char *bad = unfit(o);
        if (bad) {
            snprintf(why, why_len, "option %zu %s", order[i], bad);
            goto fail;
        }
        char *f[2];
        if (flag_of(o, cuda, &out->has_arch, f) != 0) goto oom;
        out->argv[out->argc++] = f[0];
        if (f[1]) out->argv[out->argc++] = f[1];
        for (int w = 0; !cuda && w < 2 && f[w]; w++)
            if (strpbrk(f[w], blanks)) {
                snprintf(why, why_len, "flag \"%s\" holds white space, a quote or a backslash, which the OpenCL "
                         "build options string cannot carry unambiguously", f[w]);
                goto fail;
            }
    }
    if (join(out) != 0) goto oom;
    free(order);
    return 0;
oom:
    snprintf(why, why_len, "out of memory");
fail:
    free(order);
    warm_flags_free(out);
    return -1;
}

int warm_flags_include(const warm_flags *f, const char *const *dirs, size_t n, bool cuda, warm_flags *out,
                        char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    out->has_arch = f->has_arch;
    out->argv = calloc(n + f->argc + 1, sizeof *out->argv);
    for (size_t i = 0; out->argv && i < n + f->argc; i++) {
        char *a = NULL;
        if (i < n) {
            if (!cuda && strpbrk(dirs[i], blanks)) {
                snprintf(why, why_len, "the folder \"%s\" holds white space, a quote or a backslash, which the "
                         "OpenCL build options string cannot carry", dirs[i]);
                warm_flags_free(out);
                return -1;
            }
            size_t len = strlen(dirs[i]) + 20;
            if ((a = malloc(len))) snprintf(a, len, "%s%s", cuda ? "--include-path=" : "-I", dirs[i]);
        } else {
            a = strdup(f->argv[i - n]);
        }
        if (!a) break;
        out->argv[out->argc++] = a;
    }
    if (out->argc == n + f->argc && join(out) == 0) return 0;
    snprintf(why, why_len, "out of memory");
    warm_flags_free(out);
    return -1;
}

/* The folder argv[*i] names as flag's argument (-IDIR, FLAG=DIR, or FLAG
 * then DIR in the next word, which *i then steps over), or NULL. */
static const char *dir_of(const warm_flags *f, size_t *i, const char *flag)
{
    const char *a = f->argv[*i];
    size_t n = strlen(flag);
    if (strncmp(a, flag, n) != 0) return NULL;
    if (n == 2 && a[2]) return a + 2;
    if (a[n] == '=' && a[n + 1]) return a + n + 1;
    if (!a[n] && *i + 1 < f->argc) return f->argv[++*i];
    return NULL;
}

size_t warm_flags_include_dirs(const warm_flags *f, const char **dirs, size_t max)
{
    /* In the compiler's search order (clang's): -iquote, -I (NVRTC's
     * --include-path is the same list), -isystem, -idirafter. */
    static const char *const passes[][2] = {{"-iquote", NULL}, {"-I", "--include-path"}, {"-isystem", NULL},
                                            {"-idirafter", NULL}};
    size_t n = 0;
    for (size_t p = 0; p < 4; p++)
        for (size_t i = 0; i < f->argc && n < max; i++)
            for (size_t k = 0; k < 2 && passes[p][k]; k++) {
                const char *d = dir_of(f, &i, passes[p][k]);
                if (d) {
                    dirs[n++] = d;
                    break;
                }
            }
    return n;
}
