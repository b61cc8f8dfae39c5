/* Macros and #if conditions; see pp.h. */
#include "pp.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void scan_env_init(scan_macro_env *e, scan_lang lang)
{
    *e = (scan_macro_env){.lang = lang};
    if (lang == CCKEY_LANG_CUDA || lang == CCKEY_LANG_HIP) {
        /* What nvcc's host pass defines (on Linux, x86-64): the pass whose
         * declarations name the kernels. __CUDA_ARCH__ is the device pass's. */
        static const char *const predefined[][2] = {
            {"__CUDACC__", "1"}, {"__NVCC__", "1"}, {"__cplusplus", "201703L"}, {"__linux__", "1"},
            {"__x86_64__", "1"}, {"__LP64__", "1"}, {"__GNUC__", "12"}, {"__CUDACC_RTC__", NULL}};
        for (size_t i = 0; i < sizeof predefined / sizeof *predefined; i++) {
            const char *n = predefined[i][0], *v = predefined[i][1];
            if (v) scan_env_define(e, n, strlen(n), v, strlen(v), false);
            else scan_env_undef(e, n, strlen(n));
        }
    }
}

void scan_env_free(scan_macro_env *e)
{
    for (size_t i = 0; i < e->n; i++) free(e->m[i].name), free(e->m[i].body);
    free(e->m);
    *e = (scan_macro_env){0};
}

int scan_env_copy(scan_macro_env *dst, const scan_macro_env *src)
{
    *dst = (scan_macro_env){.lang = src->lang};
    for (size_t i = 0; i < src->n; i++) {
        const scan_macro *m = &src->m[i];
        if (m->defined) scan_env_define(dst, m->name, strlen(m->name), m->body ? m->body : "",
                                         m->body ? strlen(m->body) : 0, !m->body);
        else scan_env_undef(dst, m->name, strlen(m->name));
        if (dst->n) {
            scan_macro *d = &dst->m[dst->n - 1];
            d->ambiguous = m->ambiguous, d->uncertain = m->uncertain, d->device = m->device;
        }
    }
    return dst->oom ? -1 : 0;
}

const scan_macro *scan_env_find(const scan_macro_env *e, const char *name, size_t len)
{
    for (size_t i = e->n; i-- > 0;)
        if (strlen(e->m[i].name) == len && memcmp(e->m[i].name, name, len) == 0) return &e->m[i];
    return NULL;
}

static scan_macro *slot(scan_macro_env *e, const char *name, size_t len)
{
    scan_macro *m = (scan_macro *)scan_env_find(e, name, len);
    if (m) return m;
    if (e->n == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 32;
        scan_macro *p = realloc(e->m, cap * sizeof *p);
        if (!p) {
            e->oom = true;
            return NULL;
        }
        e->m = p, e->cap = cap;
    }
    m = &e->m[e->n];
    *m = (scan_macro){.name = strndup(name, len)};
    if (!m->name) {
        e->oom = true;
        return NULL;
    }
    e->n++;
    return m;
}

void scan_env_define(scan_macro_env *e, const char *name, size_t nlen, const char *body, size_t blen,
                      bool function_like)
{
    while (blen && isspace((unsigned char)*body)) body++, blen--;
    while (blen && isspace((unsigned char)body[blen - 1])) blen--;
    scan_macro *m = slot(e, name, nlen);
    if (!m) return;
    char *b = function_like ? NULL : strndup(body, blen);
    if (!function_like && !b) {
        e->oom = true;
        return;
    }
    /* Redefined with another body (#ifdef X / #define A 1 / #else / #define A
     * 2, scanned both ways): no single value. */
    if (m->defined && (!m->body != !b || (b && strcmp(m->body, b) != 0))) m->ambiguous = true;
    free(m->body);
    m->body = b;
    m->defined = true;
}

void scan_env_undef(scan_macro_env *e, const char *name, size_t nlen)
{
    scan_macro *m = slot(e, name, nlen);
    if (!m) return;
    free(m->body);
    m->body = NULL;
    m->defined = false;
}

static size_t word_len(const char *p, size_t len)
{
    size_t n = 0;
    if (len && (isalpha((unsigned char)p[0]) || p[0] == '_'))
        while (n < len && (isalnum((unsigned char)p[n]) || p[n] == '_')) n++;
    return n;
}

static void mark(scan_macro_env *e, const char *name, size_t n, bool uncertain, bool device)
{
    scan_macro *m = (scan_macro *)scan_env_find(e, name, n);
    if (m && uncertain) m->uncertain = true;
    if (m && uncertain && device) m->device = true;
}

void scan_env_define_text(scan_macro_env *e, const char *text, size_t len, bool uncertain, bool device)
{
    while (len && isspace((unsigned char)*text)) text++, len--;
    size_t n = word_len(text, len);
    if (!n) return;
    bool fn = n < len && text[n] == '(';
    scan_env_define(e, text, n, text + n, len - n, fn);
    mark(e, text, n, uncertain, device);
}

void scan_env_undef_text(scan_macro_env *e, const char *text, size_t len, bool uncertain, bool device)
{
    while (len && isspace((unsigned char)*text)) text++, len--;
    size_t n = word_len(text, len);
    if (!n) return;
    scan_env_undef(e, text, n);
    mark(e, text, n, uncertain, device);
}

static bool has_prefix(const char *name, size_t len, const char *p)
{
    size_t n = strlen(p);
    return len >= n && memcmp(name, p, n) == 0;
}

bool scan_pp_unknown_name(const scan_macro_env *e, const char *name, size_t len, bool *device)
{
    if (e->lang == CCKEY_LANG_OPENCL && (has_prefix(name, len, "cl_") || has_prefix(name, len, "CL_") ||
                                         has_prefix(name, len, "__OPENCL") || has_prefix(name, len, "__IMAGE") ||
                                         has_prefix(name, len, "__FAST") || has_prefix(name, len, "__ENDIAN") ||
                                         has_prefix(name, len, "FP_"))) {
        if (device) *device = true;
        return true;
    }
    if (len >= 2 && name[0] == '_' && (name[1] == '_' || isupper((unsigned char)name[1]))) return true;
    static const char *const toolkit[] = {"CUDA", "CUDART_", "CUB_", "THRUST_", "NV", "CU", "WIN", "GL_",
                                          "MAC", "APPLE", "HIP", "ROCM", "OPENCL", "linux", "unix"};
    for (size_t i = 0; i < sizeof toolkit / sizeof *toolkit; i++)
        if (has_prefix(name, len, toolkit[i])) return true;
    return false;
}

int scan_pp_defined(const scan_macro_env *e, const char *name, size_t len, bool *device)
{
    const scan_macro *m = scan_env_find(e, name, len);
    if (m && m->uncertain && m->device && device) *device = true;
    if (m && m->uncertain) return CCKEY_PP_UNKNOWN;
    if (m) return m->defined ? CCKEY_PP_TRUE : CCKEY_PP_FALSE;
    return scan_pp_unknown_name(e, name, len, device) ? CCKEY_PP_UNKNOWN : CCKEY_PP_FALSE;
}

/* ---- expressions ------------------------------------------------------------ */

typedef struct val {
    bool known;
    long long v;
} val;

typedef struct parser {
    const scan_macro_env *env;
    const char *p, *end;
    int depth;       /* macro bodies being evaluated, against self-reference */
    bool *device;
    bool bad;        /* a syntax this evaluator does not model */
    /* Values, not #if: a name no macro gives is asked of resolve (template
     * parameters, constants), else unknown (never 0). */
    bool strict;
    scan_pp_resolve resolve;
    void *user;
} parser;

static const val UNKNOWN = {false, 0};

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end) {
        if (isspace((unsigned char)*ps->p)) ps->p++;
        else if (ps->end - ps->p >= 2 && ps->p[0] == '/' && ps->p[1] == '*') {
            const char *c = ps->p + 2;
            while (c + 1 < ps->end && !(c[0] == '*' && c[1] == '/')) c++;
            ps->p = c + 1 < ps->end ? c + 2 : ps->end;
        } else if (ps->end - ps->p >= 2 && ps->p[0] == '/' && ps->p[1] == '/') ps->p = ps->end;
        else break;
    }
}

static bool eat(parser *ps, const char *op)
{
    skip_ws(ps);
    size_t n = strlen(op);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, op, n) != 0) return false;
    /* "<" is not the start of "<<" or "<=", "&" not of "&&" */
    if (n == 1 && ps->p + 1 < ps->end && strchr("<>&|=", *op) && ps->p[1] == *op) return false;
    if (n == 1 && ps->p + 1 < ps->end && strchr("<>!", *op) && ps->p[1] == '=') return false;
    ps->p += n;
    return true;
}

static val expr(parser *ps);

static val number(parser *ps)
{
    char *e;
    errno = 0;
    unsigned long long v = strtoull(ps->p, &e, 0);
    if (e == ps->p) {
        ps->bad = true;
        return UNKNOWN;
    }
    while (e < ps->end && strchr("uUlL", *e)) e++;
    if (e < ps->end && (isalnum((unsigned char)*e) || *e == '.')) ps->bad = true;   /* a float, a suffix we do not know */
    ps->p = e;
    return (val){true, (long long)v};
}

static val macro_value(parser *ps, const char *name, size_t n)
{
    const scan_macro *m = scan_env_find(ps->env, name, n);
    if (ps->strict && (!m || !m->defined)) {
        long long v;
        return ps->resolve && ps->resolve(ps->user, name, n, &v) ? (val){true, v} : UNKNOWN;
    }
    if (!m) return scan_pp_unknown_name(ps->env, name, n, ps->device) ? UNKNOWN : (val){true, 0};
    if (m->uncertain && m->device && ps->device) *ps->device = true;
    if (m->uncertain) return UNKNOWN;
    if (!m->defined) return (val){true, 0};
    if (!m->body || m->ambiguous || ps->depth > 16) return UNKNOWN;
    parser sub = *ps;
    sub.p = m->body, sub.end = m->body + strlen(m->body), sub.depth = ps->depth + 1, sub.bad = false;
    skip_ws(&sub);
    if (sub.p == sub.end) return (val){true, 0};   /* #define X (empty) is 0 in #if */
    val v = expr(&sub);
    skip_ws(&sub);
    return sub.bad || sub.p != sub.end ? UNKNOWN : v;
}

static val defined_op(parser *ps)
{
    bool paren = eat(ps, "(");
    skip_ws(ps);
    size_t n = word_len(ps->p, (size_t)(ps->end - ps->p));
    if (!n) {
        ps->bad = true;
        return UNKNOWN;
    }
    int d = scan_pp_defined(ps->env, ps->p, n, ps->device);
    ps->p += n;
    if (paren && !eat(ps, ")")) ps->bad = true;
    return d == CCKEY_PP_UNKNOWN ? UNKNOWN : (val){true, d};
}

static val primary(parser *ps)
{
    skip_ws(ps);
    if (ps->p >= ps->end) {
        ps->bad = true;
        return UNKNOWN;
    }
    if (eat(ps, "(")) {
        val v = expr(ps);
        if (!eat(ps, ")")) ps->bad = true;
        return v;
    }
    if (isdigit((unsigned char)*ps->p)) return number(ps);
    if (*ps->p == '\'') {
        /* 'c': the plain character's value; escapes are not modelled */
        if (ps->end - ps->p >= 3 && ps->p[1] != '\\' && ps->p[2] == '\'') {
            long long c = (unsigned char)ps->p[1];
            ps->p += 3;
            return (val){true, c};
        }
        ps->bad = true;
        return UNKNOWN;
    }
    size_t n = word_len(ps->p, (size_t)(ps->end - ps->p));
    if (!n) {
        ps->bad = true;
        return UNKNOWN;
    }
    const char *w = ps->p;
    ps->p += n;
    if (n == 7 && memcmp(w, "defined", 7) == 0 && !ps->strict) return defined_op(ps);
    if (n == 4 && memcmp(w, "true", 4) == 0) return (val){true, 1};
    if (n == 5 && memcmp(w, "false", 5) == 0) return (val){true, 0};
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '(') {   /* a function-like macro's call */
        int d = 0;
        for (; ps->p < ps->end; ps->p++)
            if (*ps->p == '(') d++;
            else if (*ps->p == ')' && --d == 0) {
                ps->p++;
                break;
            }
        return UNKNOWN;
    }
    return macro_value(ps, w, n);
}

static val unary(parser *ps)
{
    if (eat(ps, "!")) {
        val v = unary(ps);
        return v.known ? (val){true, !v.v} : UNKNOWN;
    }
    if (eat(ps, "-")) {
        val v = unary(ps);
        return v.known ? (val){true, -v.v} : UNKNOWN;
    }
    if (eat(ps, "~")) {
        val v = unary(ps);
        return v.known ? (val){true, ~v.v} : UNKNOWN;
    }
    if (eat(ps, "+")) return unary(ps);
    return primary(ps);
}

/* Binary operators by precedence, lowest first. */
static const char *const levels[][6] = {
    {"|", NULL}, {"^", NULL}, {"&", NULL}, {"==", "!=", NULL}, {"<=", ">=", "<", ">", NULL},
    {"<<", ">>", NULL}, {"+", "-", NULL}, {"*", "/", "%", NULL},
};

static val apply(const char *op, val a, val b)
{
    if (!a.known || !b.known) return UNKNOWN;
    long long x = a.v, y = b.v;
    switch (op[0]) {
    case '|': return (val){true, x | y};
    case '^': return (val){true, x ^ y};
    case '&': return (val){true, x & y};
    case '=': return (val){true, x == y};
    case '!': return (val){true, x != y};
    case '+': return (val){true, x + y};
    case '-': return (val){true, x - y};
    case '*': return (val){true, x * y};
    case '/': return y ? (val){true, x / y} : UNKNOWN;
    case '%': return y ? (val){true, x % y} : UNKNOWN;
    case '<':
        if (op[1] == '<') return y >= 0 && y < 63 ? (val){true, x << y} : UNKNOWN;
        return (val){true, op[1] == '=' ? x <= y : x < y};
    case '>':
        if (op[1] == '>') return y >= 0 && y < 63 ? (val){true, x >> y} : UNKNOWN;
        return (val){true, op[1] == '=' ? x >= y : x > y};
    }
    return UNKNOWN;
}

static val binary(parser *ps, size_t level)
{
    if (level == sizeof levels / sizeof *levels) return unary(ps);
    val a = binary(ps, level + 1);
    for (;;) {
        const char *op = NULL;
        for (size_t k = 0; levels[level][k] && !op; k++)
            if (eat(ps, levels[level][k])) op = levels[level][k];
        if (!op) return a;
        a = apply(op, a, binary(ps, level + 1));
    }
}

static val logical_and(parser *ps)
{
    val a = binary(ps, 0);
    while (eat(ps, "&&")) {
        val b = binary(ps, 0);
        if ((a.known && !a.v) || (b.known && !b.v)) a = (val){true, 0};
        else a = a.known && b.known ? (val){true, 1} : UNKNOWN;
    }
    return a;
}

static val logical_or(parser *ps)
{
    val a = logical_and(ps);
    while (eat(ps, "||")) {
        val b = logical_and(ps);
        if ((a.known && a.v) || (b.known && b.v)) a = (val){true, 1};
        else a = a.known && b.known ? (val){true, 0} : UNKNOWN;
    }
    return a;
}

static val expr(parser *ps)
{
    val c = logical_or(ps);
    if (!eat(ps, "?")) return c;
    val a = expr(ps);
    if (!eat(ps, ":")) ps->bad = true;
    val b = expr(ps);
    if (!c.known) return a.known && b.known && a.v == b.v ? a : UNKNOWN;
    return c.v ? a : b;
}

static val evaluate(const scan_macro_env *e, const char *text, size_t len, bool *device, scan_pp_resolve resolve,
                    void *user, bool strict)
{
    bool dev = false;
    parser ps = {e, text, text + len, 0, &dev, false, strict, resolve, user};
    val v = expr(&ps);
    skip_ws(&ps);
    if (ps.bad || ps.p != ps.end) v = UNKNOWN;
    if (device) *device = !v.known && dev;
    return v;
}

int scan_pp_eval(const scan_macro_env *e, const char *expr_text, size_t len, bool *device)
{
    val v = evaluate(e, expr_text, len, device, NULL, NULL, false);
    return !v.known ? CCKEY_PP_UNKNOWN : v.v ? CCKEY_PP_TRUE : CCKEY_PP_FALSE;
}

bool scan_pp_value(const scan_macro_env *e, const char *expr_text, size_t len, scan_pp_resolve resolve,
                    void *user, long long *value)
{
    val v = evaluate(e, expr_text, len, NULL, resolve, user, true);
    if (v.known) *value = v.v;
    return v.known;
}
