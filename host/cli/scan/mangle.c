/* Parameter types and Itanium names; see mangle.h. */
#include "mangle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct known {
    const char *name, *code, *cls;
} known;

/* LP64 Linux, as NVRTC and nvcc see it there. */
static const known known_types[] = {
    {"size_t", "m", NULL},      {"ssize_t", "l", NULL},       {"ptrdiff_t", "l", NULL},
    {"intptr_t", "l", NULL},    {"uintptr_t", "m", NULL},     {"int8_t", "a", NULL},
    {"uint8_t", "h", NULL},     {"int16_t", "s", NULL},       {"uint16_t", "t", NULL},
    {"int32_t", "i", NULL},     {"uint32_t", "j", NULL},      {"int64_t", "l", NULL},
    {"uint64_t", "m", NULL},    {"cudaTextureObject_t", "y", NULL}, {"cudaSurfaceObject_t", "y", NULL},
    {"half", NULL, "__half"},   {"half2", NULL, "__half2"},   {"nv_bfloat16", NULL, "__nv_bfloat16"},
    {"nv_bfloat162", NULL, "__nv_bfloat162"}, {"__half", NULL, "__half"}, {"__half2", NULL, "__half2"},
    {"__nv_bfloat16", NULL, "__nv_bfloat16"}, {"__nv_bfloat162", NULL, "__nv_bfloat162"},
    {"dim3", NULL, "dim3"},
    /* <sys/types.h> and <time.h>, which CUDA's headers bring in. */
    {"uint", "j", NULL},        {"ushort", "t", NULL},        {"ulong", "m", NULL},
    {"u_char", "h", NULL},      {"u_short", "t", NULL},       {"u_int", "j", NULL},
    {"u_long", "m", NULL},      {"clock_t", "l", NULL},       {"time_t", "l", NULL},
    {"off_t", "l", NULL},       {"int_fast8_t", "a", NULL},   {"uint_fast8_t", "h", NULL},
    {"intmax_t", "l", NULL},    {"uintmax_t", "m", NULL},     {"cudaError_t", NULL, "cudaError"},
    /* The CUDA libraries' and runtime's types, as their headers define them
     * (each checked against nvcc -ptx .entry names). */
    {"curandState", NULL, "curandStateXORWOW"},   {"curandState_t", NULL, "curandStateXORWOW"},
    {"curandStateXORWOW_t", NULL, "curandStateXORWOW"},
    {"curandStatePhilox4_32_10_t", NULL, "curandStatePhilox4_32_10"},
    {"curandStateMRG32k3a_t", NULL, "curandStateMRG32k3a"}, {"curandStateMtgp32_t", NULL, "curandStateMtgp32"},
    {"curandStateSobol32_t", NULL, "curandStateSobol32"}, {"curandStateSobol64_t", NULL, "curandStateSobol64"},
    {"curandStateScrambledSobol32_t", NULL, "curandStateScrambledSobol32"},
    {"curandStateScrambledSobol64_t", NULL, "curandStateScrambledSobol64"},
    {"cufftComplex", NULL, "float2"},      {"cufftDoubleComplex", NULL, "double2"},
    {"cufftReal", "f", NULL},              {"cufftDoubleReal", "d", NULL},          {"cufftHandle", "i", NULL},
    {"cuComplex", NULL, "float2"},         {"cuFloatComplex", NULL, "float2"},      {"cuDoubleComplex", NULL, "double2"},
    {"cudaGraphConditionalHandle", "y", NULL},
    {"cudaExtent", NULL, "cudaExtent"},     {"cudaPitchedPtr", NULL, "cudaPitchedPtr"}, {"cudaPos", NULL, "cudaPos"},
    {"cudaChannelFormatDesc", NULL, "cudaChannelFormatDesc"}, {"cudaResourceDesc", NULL, "cudaResourceDesc"},
    {"cudaTextureDesc", NULL, "cudaTextureDesc"}, {"cudaError", NULL, "cudaError"},
    {"__nv_fp8_e4m3", NULL, "__nv_fp8_e4m3"}, {"__nv_fp8_e5m2", NULL, "__nv_fp8_e5m2"},
    {"__half_raw", NULL, "__half_raw"},     {"__half2_raw", NULL, "__half2_raw"},
};


/* Pointer typedefs: cudaStream_t is struct CUstream_st *. */
static const known known_ptrs[] = {
    {"curandDiscreteDistribution_t", NULL, "curandDiscreteDistribution_st"},
    {"cudaStream_t", NULL, "CUstream_st"},
    {"cudaEvent_t", NULL, "CUevent_st"},
    {"cudaGraph_t", NULL, "CUgraph_st"},
    {"cudaGraphExec_t", NULL, "CUgraphExec_st"},
    {"cudaGraphNode_t", NULL, "CUgraphNode_st"},
    {"cudaArray_t", NULL, "cudaArray"},
    {"cudaMipmappedArray_t", NULL, "cudaMipmappedArray"},
    {"cublasHandle_t", NULL, "cublasContext"},
};

bool scan_known_type(const char *name, size_t len, scan_ctype *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < sizeof known_types / sizeof *known_types; i++) {
        const known *k = &known_types[i];
        if (strlen(k->name) != len || memcmp(k->name, name, len) != 0) continue;
        if (k->code) snprintf(out->builtin, sizeof out->builtin, "%s", k->code);
        else snprintf(out->cls, sizeof out->cls, "%s", k->cls);
        return true;
    }
    for (size_t i = 0; i < sizeof known_ptrs / sizeof *known_ptrs; i++)
        if (strlen(known_ptrs[i].name) == len && memcmp(known_ptrs[i].name, name, len) == 0) {
            snprintf(out->cls, sizeof out->cls, "%s", known_ptrs[i].cls);
            out->nptr = 1;
            return true;
        }
    /* CUDA's vector types: char1..4, uchar, short, ushort, int, uint, long,
     * ulong, longlong, ulonglong, float, double; each a plain struct. */
    static const char *const lib_structs[] = {"curandStateXORWOW", "curandStatePhilox4_32_10", "curandStateMRG32k3a",
                                              "curandStateMtgp32", "curandStateSobol32", "curandStateSobol64",
                                              "curandStateScrambledSobol32", "curandStateScrambledSobol64"};
    for (size_t i = 0; i < sizeof lib_structs / sizeof *lib_structs; i++)
        if (strlen(lib_structs[i]) == len && memcmp(lib_structs[i], name, len) == 0) {
            snprintf(out->cls, sizeof out->cls, "%s", lib_structs[i]);
            return true;
        }
    static const char *const vec[] = {"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                                      "longlong", "ulonglong", "float", "double"};
    if (len < 2 || name[len - 1] < '1' || name[len - 1] > '4') return false;
    for (size_t i = 0; i < sizeof vec / sizeof *vec; i++)
        if (strlen(vec[i]) == len - 1 && memcmp(vec[i], name, len - 1) == 0) {
            snprintf(out->cls, sizeof out->cls, "%.*s", (int)len, name);
            return true;
        }
    return false;
}

static bool word(const scan_token *t, const char *s) { return t->kind == CCKEY_TOK_IDENT && scan_tok_is(t, s); }

/* A declaration being parsed (scan_parse_decl). */
typedef struct decl {
    scan_ctype *out;
    const char **name;
    size_t *name_len;
    const char **why;
    scan_type_lookup lookup;
    void *user;
    int n_signed, n_unsigned, n_short, n_long, n_int, n_char, n_other;
    const char *other;       /* the one builtin word that is a whole type */
    bool have_named;         /* a typedef or class name */
    unsigned base_ptrs;      /* pointer levels a typedef brought */
    unsigned char lead_quals;
    unsigned arrays;
} decl;

static int refuse(decl *d, const char *why)
{
    *d->why = why;
    return -1;
}

/* A punctuator at t[*i] (an array's brackets are skipped): 0 or -1. */
static int decl_punct(decl *d, const scan_token *t, size_t n, size_t *i)
{
    const scan_token *k = &t[*i];
    scan_ctype *out = d->out;
    if (scan_tok_is(k, "*")) {
        if (*d->name || out->ref || d->arrays) return refuse(d, "a declarator this scanner does not model");
        if (out->nptr == CCKEY_CTYPE_MAX_PTR) return refuse(d, "too many pointer levels");
        out->nptr++;
    } else if (scan_tok_is(k, "&")) {
        if (out->ref == 2 || *d->name) return refuse(d, "a declarator this scanner does not model");
        out->ref++;
    } else if (scan_tok_is(k, "[")) {
        while (*i < n && !scan_tok_is(&t[*i], "]")) (*i)++;
        d->arrays++;
    } else {
        return refuse(d, scan_tok_is(k, "::")  ? "a qualified type name"
                         : scan_tok_is(k, "<") ? "a template type"
                         : scan_tok_is(k, "(") ? "a function pointer or parenthesised declarator"
                                                : "an unexpected token in a parameter");
    }
    return 0;
}

/* const, volatile, restrict and the words that change nothing: true when
 * k is one of them. */
static bool decl_qualifier(decl *d, const scan_token *k)
{
    unsigned char q = word(k, "const") ? CCKEY_Q_CONST : word(k, "volatile") ? CCKEY_Q_VOLATILE : 0;
    bool restrict_word = word(k, "__restrict__") || word(k, "__restrict") || word(k, "restrict");
    if (q || restrict_word) {
        if (restrict_word) q = CCKEY_Q_RESTRICT;
        if (d->out->nptr) d->out->quals[d->out->nptr] |= q;
        else if (!restrict_word) d->lead_quals |= q;
        return true;
    }
    return word(k, "__grid_constant__") || word(k, "register") || word(k, "struct") || word(k, "class") ||
           word(k, "union") || word(k, "enum") || word(k, "typename");
}

/* A builtin type word: true when k is one (and counted). */
static bool decl_builtin_word(decl *d, const scan_token *k)
{
    if (word(k, "signed")) d->n_signed++;
    else if (word(k, "unsigned")) d->n_unsigned++;
    else if (word(k, "short")) d->n_short++;
    else if (word(k, "long")) d->n_long++;
    else if (word(k, "int")) d->n_int++;
    else if (word(k, "char")) d->n_char++;
    else if (word(k, "void") || word(k, "bool") || word(k, "float") || word(k, "double") || word(k, "wchar_t") ||
             word(k, "char16_t") || word(k, "char32_t") || word(k, "__int128"))
        d->n_other++, d->other = k->p;
    else return false;
    return true;
}

/* Another word: the type's name (a typedef or class) before any base, the
 * declarator's name after it. 0 or -1. */
static int decl_other_word(decl *d, const scan_token *k)
{
    bool have_base = d->have_named || d->n_signed || d->n_unsigned || d->n_short || d->n_long || d->n_int ||
                     d->n_char || d->n_other;
    if (!have_base) {
        scan_ctype named;
        if (!(d->lookup && d->lookup(d->user, k->p, k->len, &named)) && !scan_known_type(k->p, k->len, &named))
            return refuse(d, "a type name not defined in this file");
        *d->out = named;
        d->base_ptrs = named.nptr;
        d->have_named = true;
    } else if (!*d->name) {
        *d->name = k->p, *d->name_len = k->len;
    } else {
        return refuse(d, "an unexpected word in a parameter");
    }
    return 0;
}

/* The Itanium code of the builtin the counted words spell, or NULL. */
static const char *builtin_code(const decl *d)
{
    if (d->n_other) {
        const char *o = d->other;
        return !strncmp(o, "void", 4)       ? "v"
               : !strncmp(o, "bool", 4)     ? "b"
               : !strncmp(o, "float", 5)    ? "f"
               : !strncmp(o, "double", 6)   ? (d->n_long ? "e" : "d")
               : !strncmp(o, "wchar_t", 7)  ? "w"
               : !strncmp(o, "char16_t", 8) ? "Ds"
               : !strncmp(o, "char32_t", 8) ? "Di"
                                            : (d->n_unsigned ? "o" : "n");
    }
    if (d->n_char) return d->n_unsigned ? "h" : d->n_signed ? "a" : "c";
    if (d->n_short) return d->n_unsigned ? "t" : "s";
    if (d->n_long >= 2) return d->n_unsigned ? "y" : "x";
    if (d->n_long) return d->n_unsigned ? "m" : "l";
    if (d->n_int || d->n_signed || d->n_unsigned) return d->n_unsigned ? "j" : "i";
    return NULL;
}

/* After the words: the builtin, qualifiers, array decay. 0, 1 (void) or -1. */
static int decl_finish(decl *d)
{
    scan_ctype *out = d->out;
    if (d->arrays > 1) return refuse(d, "a multi-dimensional array parameter");
    bool long_double = d->other && !strncmp(d->other, "double", 6);
    if (d->n_other > 1 || (d->n_other && (d->n_short || d->n_char || (d->n_long && !long_double))))
        return refuse(d, "an unusual combination of type words");
    if (!d->have_named) {
        const char *code = builtin_code(d);
        if (!code) return refuse(d, "no type");
        snprintf(out->builtin, sizeof out->builtin, "%s", code);
    }
    /* The base's qualifiers: on the typedef's outermost pointer when it
     * brought pointers ("const fptr" is a const pointer). */
    out->quals[d->base_ptrs] |= d->lead_quals;
    if (d->arrays) {
        if (out->nptr == CCKEY_CTYPE_MAX_PTR) return refuse(d, "too many pointer levels");
        out->nptr++;
    }
    if (!out->ref) {   /* top-level qualifiers are not part of a parameter's type */
        out->top_quals = out->quals[out->nptr];
        out->quals[out->nptr] = 0;
    }
    bool is_void = !out->nptr && !out->ref && !strcmp(out->builtin, "v");
    if (is_void && *d->name) return refuse(d, "a void parameter");
    return is_void ? 1 : 0;
}

int scan_parse_decl(const scan_token *t, size_t n, scan_type_lookup lookup, void *user, scan_ctype *out,
                     const char **name, size_t *name_len, const char **why)
{
    memset(out, 0, sizeof *out);
    *name = NULL, *name_len = 0;
    decl d = {.out = out, .name = name, .name_len = name_len, .why = why, .lookup = lookup, .user = user};
    if (n == 3 && scan_tok_is(&t[0], ".") && scan_tok_is(&t[1], ".") && scan_tok_is(&t[2], ".")) return 2;
    for (size_t i = 0; i < n; i++) {
        const scan_token *k = &t[i];
        if (scan_tok_is(k, "=")) break;   /* a default argument */
        int r = 0;
        if (k->kind == CCKEY_TOK_PUNCT) r = decl_punct(&d, t, n, &i);
        else if (k->kind != CCKEY_TOK_IDENT) r = refuse(&d, "an unexpected token in a parameter");
        else if (!decl_qualifier(&d, k) && !decl_builtin_word(&d, k)) r = decl_other_word(&d, k);
        if (r != 0) return r;
    }
    return decl_finish(&d);
}

/* ---- emission with substitutions ---------------------------------------- */

typedef struct emitter {
    char *out;
    size_t cap, len;
    bool overflow;
    char *subs[64];
    size_t n_subs;
} emitter;

static void put(emitter *e, const char *s)
{
    size_t n = strlen(s);
    if (e->len + n + 1 > e->cap) {
        e->overflow = true;
        return;
    }
    memcpy(e->out + e->len, s, n + 1);
    e->len += n;
}

static bool substitute(emitter *e, const char *key)
{
    for (size_t i = 0; i < e->n_subs; i++)
        if (strcmp(e->subs[i], key) == 0) {
            char buf[16];
            if (i == 0) snprintf(buf, sizeof buf, "S_");
            else {
                /* seq-id: base 36, digits then upper-case letters. */
                char digits[12];
                size_t v = i - 1, k = 0;
                do digits[k++] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[v % 36], v /= 36;
                while (v);
                size_t j = 0;
                buf[j++] = 'S';
                while (k) buf[j++] = digits[--k];
                buf[j++] = '_', buf[j] = '\0';
            }
            put(e, buf);
            return true;
        }
    return false;
}

static void add(emitter *e, const char *key)
{
    if (e->n_subs < sizeof e->subs / sizeof *e->subs) e->subs[e->n_subs++] = strdup(key);
    else e->overflow = true;
}

static void put_source_name(emitter *e, const char *s, size_t n)
{
    char buf[300];
    snprintf(buf, sizeof buf, "%zu%.*s", n, (int)n, s);
    put(e, buf);
}

/* A nested name a::b::c. The prefixes (and, for a class, the whole name)
 * are substitution candidates; a function's own name is not. */
static void put_nested(emitter *e, const char *const *parts, size_t n, const char *last, bool last_is_candidate)
{
    char key[1024];
    size_t start = 0;
    put(e, "N");
    for (size_t p = n; p > 0; p--) {
        size_t k = (size_t)snprintf(key, sizeof key, "N:");
        for (size_t j = 0; j < p; j++) k += (size_t)snprintf(key + k, sizeof key - k, "%s%s", j ? "::" : "", parts[j]);
        if (substitute(e, key)) {
            start = p;
            break;
        }
    }
    for (size_t j = start; j < n; j++) {
        put_source_name(e, parts[j], strlen(parts[j]));
        size_t k = (size_t)snprintf(key, sizeof key, "N:");
        for (size_t m = 0; m <= j; m++) k += (size_t)snprintf(key + k, sizeof key - k, "%s%s", m ? "::" : "", parts[m]);
        add(e, key);
    }
    put_source_name(e, last, strlen(last));
    if (last_is_candidate) {
        size_t k = (size_t)snprintf(key, sizeof key, "N:");
        for (size_t m = 0; m < n; m++) k += (size_t)snprintf(key + k, sizeof key - k, "%s::", parts[m]);
        snprintf(key + k, sizeof key - k, "%s", last);
        add(e, key);
    }
    put(e, "E");
}

static void put_class(emitter *e, const char *cls)
{
    char key[300], copy[256];
    snprintf(key, sizeof key, "N:%s", cls);
    if (substitute(e, key)) return;
    snprintf(copy, sizeof copy, "%s", cls);
    const char *parts[32];
    size_t n = 0;
    char *p = copy;
    for (char *q; (q = strstr(p, "::")) && n < 32; p = q + 2) *q = '\0', parts[n++] = p;
    if (n == 0) {
        put_source_name(e, p, strlen(p));
        add(e, key);
    } else {
        put_nested(e, parts, n, p, true);
    }
}

/* a b c into buf, cut to fit (keys stay far below the buffers' size:
 * 256 bytes of class name and at most 8 pointer levels). */
static void cat3(char *buf, size_t cap, const char *a, const char *b, const char *c)
{
    size_t n = 0;
    for (const char *p[] = {a, b, c}, **q = p; q < p + 3; q++)
        for (const char *r = *q; *r && n + 1 < cap; r++) buf[n++] = *r;
    buf[n] = '\0';
}

/* The canonical key of Q_k (level k with its qualifiers). */
static void key_of(const scan_ctype *t, unsigned k, bool quals, char *buf, size_t cap)
{
    char inner[1024];
    if (quals && t->quals[k]) {
        char q[8];
        snprintf(q, sizeof q, "Q%u(", t->quals[k]);
        key_of(t, k, false, inner, sizeof inner);
        cat3(buf, cap, q, inner, ")");
    } else if (k == 0 && t->tparam) {
        char num[16];
        snprintf(num, sizeof num, "%u", t->tparam);
        cat3(buf, cap, "T:", num, "");
    } else if (k == 0) {
        cat3(buf, cap, t->builtin[0] ? "B" : "N:", t->builtin[0] ? t->builtin : t->cls, "");
    } else {
        key_of(t, k - 1, true, inner, sizeof inner);
        cat3(buf, cap, "P(", inner, ")");
    }
}

static void put_level(emitter *e, const scan_ctype *t, unsigned k, bool quals)
{
    char key[1024];
    key_of(t, k, quals, key, sizeof key);
    if (quals && t->quals[k]) {
        if (substitute(e, key)) return;
        unsigned char q = t->quals[k];
        if (q & CCKEY_Q_RESTRICT) put(e, "r");
        if (q & CCKEY_Q_VOLATILE) put(e, "V");
        if (q & CCKEY_Q_CONST) put(e, "K");
        put_level(e, t, k, false);
        add(e, key);
    } else if (k == 0 && t->tparam) {
        if (substitute(e, key)) return;
        char buf[16];
        if (t->tparam == 1) snprintf(buf, sizeof buf, "T_");
        else snprintf(buf, sizeof buf, "T%u_", t->tparam - 2);
        put(e, buf);
        add(e, key);
    } else if (k == 0) {
        if (t->builtin[0]) put(e, t->builtin);
        else put_class(e, t->cls);
    } else {
        if (substitute(e, key)) return;
        put(e, "P");
        put_level(e, t, k - 1, true);
        add(e, key);
    }
}

static void put_param(emitter *e, const scan_ctype *t)
{
    if (!t->ref) {
        put_level(e, t, t->nptr, true);
        return;
    }
    char key[1100], inner[1024];
    key_of(t, t->nptr, true, inner, sizeof inner);
    cat3(key, sizeof key, t->ref == 2 ? "O(" : "R(", inner, ")");
    if (substitute(e, key)) return;
    put(e, t->ref == 2 ? "O" : "R");
    put_level(e, t, t->nptr, true);
    add(e, key);
}

static void put_targs(emitter *e, const scan_targ *args, size_t n)
{
    put(e, "I");
    for (size_t i = 0; i < n; i++) {
        if (args[i].is_type) {
            put_param(e, &args[i].type);
            continue;
        }
        char buf[40];
        long long v = args[i].value;
        /* a negative number: n and its magnitude */
        if (v < 0) snprintf(buf, sizeof buf, "L%sn%llu", args[i].code, 0ull - (unsigned long long)v);
        else snprintf(buf, sizeof buf, "L%s%lld", args[i].code, v);
        put(e, buf);
        put(e, "E");
    }
    put(e, "E");
}

/* The name, its namespaces and (for a template instance) its arguments;
 * the function's own name is a substitution candidate only as a template's
 * name. */
static void put_name(emitter *e, const char *const *ns, size_t n_ns, const char *name, const scan_targ *args,
                     size_t n_args, bool templated)
{
    if (!n_ns) {
        put_source_name(e, name, strlen(name));
        if (templated) {
            char key[300];
            snprintf(key, sizeof key, "N:%s", name);
            add(e, key);
            put_targs(e, args, n_args);
        }
        return;
    }
    if (!templated) {
        put_nested(e, ns, n_ns, name, false);
        return;
    }
    /* N prefix name I args E E: put_nested writes the closing E, so the
     * arguments go in before it. */
    put_nested(e, ns, n_ns, name, true);
    e->len--;
    e->out[e->len] = '\0';
    put_targs(e, args, n_args);
    put(e, "E");
}

static bool mangle_any(char *out, size_t cap, const char *const *ns, size_t n_ns, const char *name,
                       const scan_targ *args, size_t n_args, bool templated, const scan_ctype *params, size_t n)
{
    emitter e = {.out = out, .cap = cap};
    if (cap) out[0] = '\0';
    put(&e, "_Z");
    put_name(&e, ns, n_ns, name, args, n_args, templated);
    if (templated) put(&e, "v");   /* a template instance's name has its return type */
    if (n == 0) put(&e, "v");
    for (size_t i = 0; i < n; i++) put_param(&e, &params[i]);
    for (size_t i = 0; i < e.n_subs; i++) free(e.subs[i]);
    return !e.overflow;
}

bool scan_mangle(char *out, size_t cap, const char *const *ns, size_t n_ns, const char *name,
                  const scan_ctype *params, size_t n)
{
    return mangle_any(out, cap, ns, n_ns, name, NULL, 0, false, params, n);
}

bool scan_mangle_template(char *out, size_t cap, const char *const *ns, size_t n_ns, const char *name,
                           const scan_targ *args, size_t n_args, const scan_ctype *params, size_t n)
{
    return mangle_any(out, cap, ns, n_ns, name, args, n_args, true, params, n);
}
