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

bool cckey_known_type(const char *name, size_t len, cckey_ctype *out)
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

static bool word(const cckey_token *t, const char *s) { return t->kind == CCKEY_TOK_IDENT && cckey_tok_is(t, s); }

int cckey_parse_decl(const cckey_token *t, size_t n, cckey_type_lookup lookup, void *user, cckey_ctype *out,
                     const char **name, size_t *name_len, const char **why)
{
    memset(out, 0, sizeof *out);
    *name = NULL, *name_len = 0;
    int n_signed = 0, n_unsigned = 0, n_short = 0, n_long = 0, n_int = 0, n_char = 0, n_other = 0;
    const char *other = NULL;   /* the one builtin word that is a whole type */
    bool have_named = false;    /* a typedef or class name */
    unsigned base_ptrs = 0;     /* pointer levels a typedef brought */
    unsigned char lead_quals = 0;
    unsigned arrays = 0;
    if (n == 3 && cckey_tok_is(&t[0], ".") && cckey_tok_is(&t[1], ".") && cckey_tok_is(&t[2], ".")) return 2;
    for (size_t i = 0; i < n; i++) {
        const cckey_token *k = &t[i];
        if (cckey_tok_is(k, "=")) break;   /* a default argument */
        if (k->kind == CCKEY_TOK_PUNCT) {
            if (cckey_tok_is(k, "*")) {
                if (*name || out->ref || arrays) return *why = "a declarator this scanner does not model", -1;
                if (out->nptr == CCKEY_CTYPE_MAX_PTR) return *why = "too many pointer levels", -1;
                out->nptr++;
            } else if (cckey_tok_is(k, "&")) {
                if (out->ref == 2 || *name) return *why = "a declarator this scanner does not model", -1;
                out->ref++;
            } else if (cckey_tok_is(k, "[")) {
                while (i < n && !cckey_tok_is(&t[i], "]")) i++;
                arrays++;
            } else if (cckey_tok_is(k, "::")) {
                return *why = "a qualified type name", -1;
            } else if (cckey_tok_is(k, "<")) {
                return *why = "a template type", -1;
            } else if (cckey_tok_is(k, "(")) {
                return *why = "a function pointer or parenthesised declarator", -1;
            } else {
                return *why = "an unexpected token in a parameter", -1;
            }
            continue;
        }
        if (k->kind != CCKEY_TOK_IDENT) return *why = "an unexpected token in a parameter", -1;
        unsigned char q = word(k, "const") ? CCKEY_Q_CONST : word(k, "volatile") ? CCKEY_Q_VOLATILE : 0;
        bool restrict_word = word(k, "__restrict__") || word(k, "__restrict") || word(k, "restrict");
        if (q || restrict_word) {
            if (restrict_word) q = CCKEY_Q_RESTRICT;
            if (out->nptr) out->quals[out->nptr] |= q;
            else if (!restrict_word) lead_quals |= q;
            continue;
        }
        if (word(k, "__grid_constant__") || word(k, "register") || word(k, "struct") || word(k, "class") ||
            word(k, "union") || word(k, "enum") || word(k, "typename"))
            continue;
        if (word(k, "signed")) n_signed++;
        else if (word(k, "unsigned")) n_unsigned++;
        else if (word(k, "short")) n_short++;
        else if (word(k, "long")) n_long++;
        else if (word(k, "int")) n_int++;
        else if (word(k, "char")) n_char++;
        else if (word(k, "void") || word(k, "bool") || word(k, "float") || word(k, "double") ||
                 word(k, "wchar_t") || word(k, "char16_t") || word(k, "char32_t") || word(k, "__int128"))
            n_other++, other = k->p;
        else {
            bool have_base = have_named || n_signed || n_unsigned || n_short || n_long || n_int || n_char || n_other;
            if (!have_base) {
                cckey_ctype named;
                if (!(lookup && lookup(user, k->p, k->len, &named)) && !cckey_known_type(k->p, k->len, &named))
                    return *why = "a type name not defined in this file", -1;
                *out = named;
                base_ptrs = named.nptr;
                have_named = true;
            } else if (!*name) {
                *name = k->p, *name_len = k->len;
            } else {
                return *why = "an unexpected word in a parameter", -1;
            }
        }
    }
    if (arrays > 1) return *why = "a multi-dimensional array parameter", -1;
    if (n_other > 1 || (n_other && (n_short || n_char || (n_long && !(other && !strncmp(other, "double", 6))))))
        return *why = "an unusual combination of type words", -1;
    if (!have_named) {
        const char *code;
        if (n_other) {
            code = !strncmp(other, "void", 4)     ? "v"
                   : !strncmp(other, "bool", 4)   ? "b"
                   : !strncmp(other, "float", 5)  ? "f"
                   : !strncmp(other, "double", 6) ? (n_long ? "e" : "d")
                   : !strncmp(other, "wchar_t", 7) ? "w"
                   : !strncmp(other, "char16_t", 8) ? "Ds"
                   : !strncmp(other, "char32_t", 8) ? "Di"
                                                    : (n_unsigned ? "o" : "n");
        } else if (n_char) {
            code = n_unsigned ? "h" : n_signed ? "a" : "c";
        } else if (n_short) {
            code = n_unsigned ? "t" : "s";
        } else if (n_long >= 2) {
            code = n_unsigned ? "y" : "x";
        } else if (n_long) {
            code = n_unsigned ? "m" : "l";
        } else if (n_int || n_signed || n_unsigned) {
            code = n_unsigned ? "j" : "i";
        } else {
            return *why = "no type", -1;
        }
        snprintf(out->builtin, sizeof out->builtin, "%s", code);
    }
    /* The base's qualifiers: on the typedef's outermost pointer when it
     * brought pointers ("const fptr" is a const pointer). */
    out->quals[base_ptrs] |= lead_quals;
    if (arrays) {
        if (out->nptr == CCKEY_CTYPE_MAX_PTR) return *why = "too many pointer levels", -1;
        out->nptr++;
    }
    if (!out->ref) {   /* top-level qualifiers are not part of a parameter's type */
        out->top_quals = out->quals[out->nptr];
        out->quals[out->nptr] = 0;
    }
    bool is_void = !out->nptr && !out->ref && !strcmp(out->builtin, "v");
    if (is_void && *name) return *why = "a void parameter", -1;
    return is_void ? 1 : 0;
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
static void key_of(const cckey_ctype *t, unsigned k, bool quals, char *buf, size_t cap)
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

static void put_level(emitter *e, const cckey_ctype *t, unsigned k, bool quals)
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

static void put_param(emitter *e, const cckey_ctype *t)
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

static void put_targs(emitter *e, const cckey_targ *args, size_t n)
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
static void put_name(emitter *e, const char *const *ns, size_t n_ns, const char *name, const cckey_targ *args,
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
                       const cckey_targ *args, size_t n_args, bool templated, const cckey_ctype *params, size_t n)
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

bool cckey_mangle(char *out, size_t cap, const char *const *ns, size_t n_ns, const char *name,
                  const cckey_ctype *params, size_t n)
{
    return mangle_any(out, cap, ns, n_ns, name, NULL, 0, false, params, n);
}

bool cckey_mangle_template(char *out, size_t cap, const char *const *ns, size_t n_ns, const char *name,
                           const cckey_targ *args, size_t n_args, const cckey_ctype *params, size_t n)
{
    return mangle_any(out, cap, ns, n_ns, name, args, n_args, true, params, n);
}
