/* Option pairs to compiler flags; the mapping is documented in warm.h. */
#include "warm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cckey_build_clear(cckey_build *b)
{
    free(b->binary);
    free(b->log);
    memset(b, 0, sizeof *b);
}

void cckey_flags_free(cckey_flags *f)
{
    for (size_t i = 0; i < f->argc; i++) free(f->argv[i]);
    free(f->argv);
    free(f->joined);
    memset(f, 0, sizeof *f);
}

static bool is(cckey_bytes b, const char *s) { return b.len == strlen(s) && memcmp(b.ptr, s, b.len) == 0; }

static char *flag_of(const cckey_option *o, bool cuda, bool *arch)
{
    const char *k = o->key.ptr ? o->key.ptr : "", *v = o->value.ptr ? o->value.ptr : "";
    size_t kl = o->key.len, vl = o->value.len;
    const char *pre = "", *sep = "";
    if (cuda && is(o->key, "arch")) {
        pre = "--gpu-architecture=", k = "", kl = 0;
        *arch = true;
    } else if (vl == 0 || (kl && k[kl - 1] == '=') || (kl == 2 && k[0] == '-')) {
        sep = "";
    } else {
        sep = "=";
    }
    size_t n = strlen(pre) + kl + strlen(sep) + vl + 1;
    char *f = malloc(n);
    if (!f) return NULL;
    memcpy(f, pre, strlen(pre));
    memcpy(f + strlen(pre), k, kl);
    memcpy(f + strlen(pre) + kl, sep, strlen(sep));
    memcpy(f + strlen(pre) + kl + strlen(sep), v, vl);
    f[n - 1] = '\0';
    return f;
}

int cckey_flags_make(const cckey_option *opts, size_t n, bool cuda, cckey_flags *out, char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    out->argv = calloc(n ? n : 1, sizeof *out->argv);
    if (!order || !out->argv || cckey_option_order(opts, n, order) != CCKEY_OK) {
        free(order);
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    size_t total = 1;
    for (size_t i = 0; i < n; i++) {
        const cckey_option *o = &opts[order[i]];
        if ((o->key.len && memchr(o->key.ptr, '\0', o->key.len)) ||
            (o->value.len && memchr(o->value.ptr, '\0', o->value.len))) {
            snprintf(why, why_len, "option %zu holds a NUL byte, which no compiler flag can carry", order[i]);
            goto fail;
        }
        if (o->key.len == 0) {
            snprintf(why, why_len, "option %zu has an empty key", order[i]);
            goto fail;
        }
        char *f = flag_of(o, cuda, &out->has_arch);
        if (!f) {
            snprintf(why, why_len, "out of memory");
            goto fail;
        }
        out->argv[out->argc++] = f;
        if (!cuda && strpbrk(f, " \t\n\r\v\f\"'\\")) {
            snprintf(why, why_len, "flag \"%s\" holds white space, a quote or a backslash, which the OpenCL "
                     "build options string cannot carry unambiguously", f);
            goto fail;
        }
        total += strlen(f) + 1;
    }
    out->joined = malloc(total);
    if (!out->joined) {
        snprintf(why, why_len, "out of memory");
        goto fail;
    }
    out->joined[0] = '\0';
    for (size_t i = 0; i < out->argc; i++) {
        if (i) strcat(out->joined, " ");
        strcat(out->joined, out->argv[i]);
    }
    free(order);
    return 0;
fail:
    free(order);
    cckey_flags_free(out);
    return -1;
}

int cckey_flags_include(const cckey_flags *f, const char *const *dirs, size_t n, bool cuda, cckey_flags *out,
                        char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    out->has_arch = f->has_arch;
    out->argv = calloc(n + f->argc + 1, sizeof *out->argv);
    size_t total = 1;
    for (size_t i = 0; out->argv && i < n + f->argc; i++) {
        char *a = NULL;
        if (i < n) {
            if (!cuda && strpbrk(dirs[i], " \t\n\r\v\f\"'\\")) {
                snprintf(why, why_len, "the folder \"%s\" holds white space, a quote or a backslash, which the "
                         "OpenCL build options string cannot carry", dirs[i]);
                cckey_flags_free(out);
                return -1;
            }
            size_t len = strlen(dirs[i]) + 20;
            if ((a = malloc(len))) snprintf(a, len, "%s%s", cuda ? "--include-path=" : "-I", dirs[i]);
        } else {
            a = strdup(f->argv[i - n]);
        }
        if (!a) break;
        out->argv[out->argc++] = a;
        total += strlen(a) + 1;
    }
    if (out->argc == n + f->argc && (out->joined = malloc(total))) {
        out->joined[0] = '\0';
        for (size_t i = 0; i < out->argc; i++) {
            if (i) strcat(out->joined, " ");
            strcat(out->joined, out->argv[i]);
        }
        return 0;
    }
    snprintf(why, why_len, "out of memory");
    cckey_flags_free(out);
    return -1;
}

size_t cckey_flags_include_dirs(const cckey_flags *f, const char **dirs, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < f->argc && n < max; i++) {
        const char *a = f->argv[i];
        if (strncmp(a, "-I", 2) == 0 && a[2]) dirs[n++] = a + 2;
        else if (strncmp(a, "--include-path=", 15) == 0 && a[15]) dirs[n++] = a + 15;
    }
    return n;
}
