/* Compiler flags that take an argument, how people write them, and the
 * option pairs they become; see warm.h. */
#include "warm.h"

#include <stdio.h>
#include <string.h>

/* What the argument of a flag may look like. */
enum {
    ARG_JOINED = 1,    /* -Idir: one letter, the argument glued on */
    ARG_SPACED = 2,    /* -I dir, -include h.h: the next word */
    ARG_OPTIONAL = 4,  /* -O alone is a flag too (-O3 is -O + 3) */
};

/* Flags whose relative order matters although they are different option
 * keys, which the key's canonical sort would reorder (see
 * warm_options_check). */
enum { ORD_NONE, ORD_INCLUDE, ORD_MACRO, ORD_PREINCLUDE };

typedef struct arg_flag {
    const char *name;
    unsigned how;
    int order;
} arg_flag;

/* OpenCL's clBuildProgram (-D, -I; -x spir), clang's preprocessor flags
 * (which PoCL and other clang-based OpenCL compilers take), and NVRTC's
 * options that take a value (nvrtc.h: every such option but
 * --device-stack-protector, whose value is optional). Not -L: neither
 * clBuildProgram/clLinkProgram nor NVRTC has one. */
static const arg_flag flags[] = {
    {"-D", ARG_JOINED | ARG_SPACED, ORD_MACRO},
    {"-U", ARG_JOINED | ARG_SPACED, ORD_MACRO},
    {"-I", ARG_JOINED | ARG_SPACED, ORD_INCLUDE},
    {"-O", ARG_JOINED | ARG_OPTIONAL, ORD_NONE},
    /* clang */
    {"-include", ARG_SPACED, ORD_PREINCLUDE},
    {"-imacros", ARG_SPACED, ORD_NONE},
    {"-isystem", ARG_SPACED, ORD_NONE},
    {"-idirafter", ARG_SPACED, ORD_NONE},
    {"-iquote", ARG_SPACED, ORD_NONE},
    {"-isysroot", ARG_SPACED, ORD_NONE},
    {"-iprefix", ARG_SPACED, ORD_NONE},
    {"-iwithprefix", ARG_SPACED, ORD_NONE},
    {"-iwithprefixbefore", ARG_SPACED, ORD_NONE},
    {"-x", ARG_SPACED, ORD_NONE},
    {"-Xclang", ARG_SPACED, ORD_NONE},
    /* NVRTC, long names and their short ones */
    {"--define-macro", ARG_SPACED, ORD_MACRO},
    {"--undefine-macro", ARG_SPACED, ORD_MACRO},
    {"--include-path", ARG_SPACED, ORD_INCLUDE},
    {"--pre-include", ARG_SPACED, ORD_PREINCLUDE},
    {"--gpu-architecture", ARG_SPACED, ORD_NONE},
    {"-arch", ARG_SPACED, ORD_NONE},
    {"--Ofast-compile", ARG_SPACED, ORD_NONE},
    {"-Ofc", ARG_SPACED, ORD_NONE},
    {"--ptxas-options", ARG_SPACED, ORD_NONE},
    {"-Xptxas", ARG_SPACED, ORD_NONE},
    {"--maxrregcount", ARG_SPACED, ORD_NONE},
    {"-maxrregcount", ARG_SPACED, ORD_NONE},
    {"--ftz", ARG_SPACED, ORD_NONE},
    {"-ftz", ARG_SPACED, ORD_NONE},
    {"--prec-sqrt", ARG_SPACED, ORD_NONE},
    {"-prec-sqrt", ARG_SPACED, ORD_NONE},
    {"--prec-div", ARG_SPACED, ORD_NONE},
    {"-prec-div", ARG_SPACED, ORD_NONE},
    {"--fmad", ARG_SPACED, ORD_NONE},
    {"-fmad", ARG_SPACED, ORD_NONE},
    {"--modify-stack-limit", ARG_SPACED, ORD_NONE},
    {"-modify-stack-limit", ARG_SPACED, ORD_NONE},
    {"--jump-table-density", ARG_SPACED, ORD_NONE},
    {"-jtd", ARG_SPACED, ORD_NONE},
    {"--relocatable-device-code", ARG_SPACED, ORD_NONE},
    {"-rdc", ARG_SPACED, ORD_NONE},
    {"--dopt", ARG_SPACED, ORD_NONE},
    {"-dopt", ARG_SPACED, ORD_NONE},
    {"--std", ARG_SPACED, ORD_NONE},
    {"-std", ARG_SPACED, ORD_NONE},
    {"--builtin-move-forward", ARG_SPACED, ORD_NONE},
    {"-builtin-move-forward", ARG_SPACED, ORD_NONE},
    {"--builtin-initializer-list", ARG_SPACED, ORD_NONE},
    {"-builtin-initializer-list", ARG_SPACED, ORD_NONE},
    {"--create-pch", ARG_SPACED, ORD_NONE},
    {"-create-pch", ARG_SPACED, ORD_NONE},
    {"--use-pch", ARG_SPACED, ORD_NONE},
    {"-use-pch", ARG_SPACED, ORD_NONE},
    {"--pch-dir", ARG_SPACED, ORD_NONE},
    {"-pch-dir", ARG_SPACED, ORD_NONE},
    {"--pch-verbose", ARG_SPACED, ORD_NONE},
    {"-pch-verbose", ARG_SPACED, ORD_NONE},
    {"--pch-messages", ARG_SPACED, ORD_NONE},
    {"-pch-messages", ARG_SPACED, ORD_NONE},
    {"--instantiate-templates-in-pch", ARG_SPACED, ORD_NONE},
    {"-instantiate-templates-in-pch", ARG_SPACED, ORD_NONE},
    {"--optimization-info", ARG_SPACED, ORD_NONE},
    {"-opt-info", ARG_SPACED, ORD_NONE},
    {"--diag-error", ARG_SPACED, ORD_NONE},
    {"-diag-error", ARG_SPACED, ORD_NONE},
    {"--diag-suppress", ARG_SPACED, ORD_NONE},
    {"-diag-suppress", ARG_SPACED, ORD_NONE},
    {"--diag-warn", ARG_SPACED, ORD_NONE},
    {"-diag-warn", ARG_SPACED, ORD_NONE},
    {"--brief-diagnostics", ARG_SPACED, ORD_NONE},
    {"-brief-diag", ARG_SPACED, ORD_NONE},
    {"--time", ARG_SPACED, ORD_NONE},
    {"-time", ARG_SPACED, ORD_NONE},
    {"--split-compile", ARG_SPACED, ORD_NONE},
    {"-split-compile", ARG_SPACED, ORD_NONE},
    {"--fdevice-time-trace", ARG_SPACED, ORD_NONE},
    {"-fdevice-time-trace", ARG_SPACED, ORD_NONE},
};

static const arg_flag *find(const char *s, size_t len)
{
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
        if (strlen(flags[i].name) == len && memcmp(flags[i].name, s, len) == 0) return &flags[i];
    return NULL;
}

/* The one-letter flag that w starts with and glues its argument to
 * (-DN=4, -I/dir), or NULL. */
static const arg_flag *joined(const char *w, size_t len)
{
    const arg_flag *f = len > 2 ? find(w, 2) : NULL;
    return f && (f->how & ARG_JOINED) ? f : NULL;
}

bool warm_flag_takes_arg(const char *flag, size_t len, bool *optional)
{
    const arg_flag *f = find(flag, len);
    if (optional) *optional = f && (f->how & ARG_OPTIONAL);
    return f != NULL;
}

bool warm_flag_spaced(const char *flag, size_t len)
{
    const arg_flag *f = find(flag, len);
    return f && (f->how & ARG_SPACED) && len > 2 && flag[1] != '-';
}

int warm_flags_tokenize(const char *const *words, const size_t *lens, size_t n, warm_pair_fn fn, void *user,
                         char *why, size_t why_len)
{
    for (size_t i = 0; i < n; i++) {
        const char *w = words[i], *eq = memchr(w, '=', lens[i]);
        size_t len = lens[i];
        const arg_flag *f = find(w, len);
        int r;
        if (f && (f->how & ARG_SPACED)) {          /* -I dir */
            if (i + 1 == n) {
                snprintf(why, why_len, "%s needs an argument (%s ARG), and none follows", f->name, f->name);
                return CCKEY_FLAGS_BAD;
            }
            i++;
            r = fn(user, f->name, len, words[i], lens[i]);
        } else if (f) {                             /* -O alone */
            r = fn(user, w, len, "", 0);
        } else if (eq && find(w, (size_t)(eq - w))) {   /* --include-path=dir, -D=X (NVRTC's spelling) */
            r = fn(user, w, (size_t)(eq - w), eq + 1, len - (size_t)(eq - w) - 1);
        } else if ((f = joined(w, len))) {          /* -Idir, -DN=4, -O3 */
            r = fn(user, f->name, 2, w + 2, len - 2);
        } else if (eq && eq + 1 < w + len) {        /* -cl-std=CL2.0 */
            r = fn(user, w, (size_t)(eq - w), eq + 1, len - (size_t)(eq - w) - 1);
        } else {                                    /* -cl-fast-relaxed-math, -DX= */
            r = fn(user, w, len, "", 0);
        }
        if (r != 0) {
            snprintf(why, why_len, "out of memory");
            return CCKEY_FLAGS_OOM;
        }
    }
    return 0;
}

/* An option's order class and what it is about (a macro's name; "" for an
 * include folder, as any two of them are ordered), for both the pair a
 * flag is tokenized into (-D + N=4) and the older joined one (-DN + 4). */
static int order_of(const cckey_option *o, cckey_bytes *subject)
{
    const char *k = o->key.ptr ? o->key.ptr : "";
    const arg_flag *f = find(k, o->key.len);
    cckey_bytes arg = o->value;
    if (!f && (f = joined(k, o->key.len))) arg = (cckey_bytes){k + 2, o->key.len - 2};
    if (!f || f->order == ORD_NONE) return ORD_NONE;
    *subject = (cckey_bytes){"", 0};
    if (f->order == ORD_MACRO) {
        const char *a = arg.ptr ? arg.ptr : "", *eq = memchr(a, '=', arg.len);
        *subject = (cckey_bytes){a, eq ? (size_t)(eq - a) : arg.len};
    }
    return f->order;
}

static int key_cmp(const cckey_option *a, const cckey_option *b)
{
    size_t n = a->key.len < b->key.len ? a->key.len : b->key.len;
    int c = n ? memcmp(a->key.ptr, b->key.ptr, n) : 0;
    return c ? c : (a->key.len > b->key.len) - (a->key.len < b->key.len);
}

static void put_pair(char *buf, size_t len, const cckey_option *o)
{
    const char *k = o->key.ptr ? o->key.ptr : "", *v = o->value.ptr ? o->value.ptr : "";
    snprintf(buf, len, "[\"%.*s\", \"%.*s\"]", (int)(o->key.len > 80 ? 80 : o->key.len), k,
             (int)(o->value.len > 80 ? 80 : o->value.len), v);
}

/* Options i < j of one class and subject whose keys sort j first: the
 * canonical order (the key's, and the build's) would swap them. */
static bool reordered(const cckey_option *opts, size_t n, size_t *a, size_t *b)
{
    for (size_t i = 0; i < n; i++) {
        cckey_bytes si, sj;
        int ci = order_of(&opts[i], &si);
        for (size_t j = i + 1; ci && j < n; j++) {
            if (order_of(&opts[j], &sj) != ci || si.len != sj.len || (si.len && memcmp(si.ptr, sj.ptr, si.len)))
                continue;
            if (key_cmp(&opts[j], &opts[i]) < 0) {
                *a = i, *b = j;
                return true;
            }
        }
    }
    return false;
}

int warm_options_check(const cckey_option *opts, size_t n, char *why, size_t why_len)
{
    for (size_t i = 0; i < n; i++) {
        const char *k = opts[i].key.ptr ? opts[i].key.ptr : "";
        int kl = (int)opts[i].key.len;
        bool optional;
        if (opts[i].value.len == 0 && warm_flag_takes_arg(k, opts[i].key.len, &optional) && !optional) {
            snprintf(why, why_len, "%.*s needs an argument, and option %zu, [\"%.*s\", \"\"], has none (write "
                     "[\"%.*s\", ARG])", kl, k, i, kl, k, kl, k);
            return CCKEY_FLAGS_BAD;
        }
    }
    size_t a, b;
    if (reordered(opts, n, &a, &b)) {
        char x[200], y[200];
        put_pair(x, sizeof x, &opts[a]);
        put_pair(y, sizeof y, &opts[b]);
        snprintf(why, why_len, "options %s and %s would reach the compiler in the other order (the key sorts "
                 "options by their first member, and the order of these matters): give such flags one key each, "
                 "as cckey scan does ([\"-I\", DIR], [\"-D\", \"N=4\"]), and for -U and -D of one macro write "
                 "-D first, or drop one", x, y);
        return CCKEY_FLAGS_BAD;
    }
    return 0;
}
