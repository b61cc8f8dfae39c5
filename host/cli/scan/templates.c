/* Template kernels and the instances a unit asks for (see scanner.h).
 *
 * nvcc emits a template kernel once per instance the unit uses: explicit
 * instantiations (template __global__ void k<16>(float *);), launches and
 * other uses with explicit arguments (k<16><<<...>>>, &k<float>), and the
 * same inside function and class templates, once per instance of those
 * (template <class T> void run() { k<T, 256><<<...>>>(); } with run<int>()
 * or template void run<int>();). The walk notes every template definition
 * and every `name<` it passes; here the uses are followed from the ones
 * outside any template, instance by instance, and each kernel instance is
 * named as nvcc names it. Arguments are types the unit spells (builtins,
 * its typedefs and classes, the library types) and integer constants
 * (literals, macros, constexpr variables, the enclosing instance's
 * arguments); anything else is a warning that says to use --exact. */
#include "scanner.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TPARAMS 16
#define MAX_FPARAMS 64

enum tdef_kind { TD_KERNEL, TD_FUNC, TD_CLASS, TD_MEMBER };

typedef struct tparam {
    char name[64];
    bool is_type;
    char code[4];               /* an integer parameter's type */
    size_t def_start, def_end;  /* a default argument's tokens, when def_end > def_start */
} tparam;

typedef struct tdef {
    enum tdef_kind kind;
    size_t template_tok;        /* where `template` stands */
    char name[128];
    char ns[256];
    tparam params[MAX_TPARAMS];
    size_t n_params;
    const char *bad;            /* parameters not modelled (variadic, template template) */
    size_t body_open, body_close;   /* the braces; 0, 0 for a declaration */
    const scan_token *name_tok;
    scan_ctype fparams[MAX_FPARAMS];   /* a kernel's parameters, T as template parameters */
    int n_fparams;              /* -1: not modelled (why in fparams_why) */
    const char *fparams_why;
    bool instanced, warned;
    char owner[128];            /* TD_MEMBER: the class template it belongs to */
    int owner_arg[MAX_TPARAMS]; /* its parameter k is the owner's argument owner_arg[k] (-1: none) */
} tdef;

/* A `name <` the walk passed, and the namespace it stands in. */
typedef struct use {
    size_t tok;
    size_t ns;   /* index into tmpl_set.nss */
} use;

typedef struct ns_name {
    char name[256];
} ns_name;

typedef struct instance {
    size_t def;
    scan_targ args[MAX_TPARAMS];
    size_t n;
} instance;

struct tmpl_set {
    tdef *defs;
    size_t n_defs, cap_defs;
    use *uses;
    size_t n_uses, cap_uses;
    ns_name *nss;               /* the distinct namespaces uses stand in */
    size_t n_nss, cap_nss;
    instance *work;             /* every instance seen, in order; processed up to done */
    size_t n_work, cap_work, done;
};

#define grow scan_grow

int tmpl_init(scanner *s)
{
    s->tmpl = calloc(1, sizeof *s->tmpl);
    return s->tmpl ? 0 : -1;
}

void tmpl_free(scanner *s)
{
    if (!s->tmpl) return;
    free(s->tmpl->defs);
    free(s->tmpl->uses);
    free(s->tmpl->nss);
    free(s->tmpl->work);
    free(s->tmpl);
    s->tmpl = NULL;
}

/* ---- definitions ------------------------------------------------------------ */

/* One template parameter from t[a..b). */
static void parse_tparam(scanner *s, tdef *d, size_t a, size_t b)
{
    tparam *p = &d->params[d->n_params];
    *p = (tparam){0};
    size_t eq = a;
    while (eq < b && !scan_is(s, eq, "=")) eq++;
    if (eq < b) p->def_start = eq + 1, p->def_end = b;
    if (eq > a && scan_is(s, a, "template")) {
        d->bad = "a template template parameter";
        return;
    }
    for (size_t k = a; k < eq; k++)
        if (scan_is(s, k, ".")) d->bad = "a parameter pack";
    size_t name = eq - 1;
    if (eq == a || !scan_ident(s, name)) {
        d->bad = "an unnamed template parameter";
        return;
    }
    snprintf(p->name, sizeof p->name, "%.*s", (int)s->t[name].len, s->t[name].p);
    if (scan_is(s, a, "typename") || scan_is(s, a, "class")) {
        p->is_type = true;
        return;
    }
    scan_ctype t;
    const char *nm, *why;
    size_t nl;
    if (types_parse(s, s->t + a, eq - a, &t, &nm, &nl, &why) != 0 || t.nptr || t.ref || t.tparam || !t.builtin[0])
        d->bad = "a template parameter of a type this scan does not model";
    else snprintf(p->code, sizeof p->code, "%s", t.builtin);
}

/* The parameters between the '<' at open and the '>' before close. */
static void parse_tparams(scanner *s, tdef *d, size_t open, size_t close)
{
    size_t a = open + 1;
    int depth = 0;
    for (size_t k = a; k < close; k++) {
        if (scan_is(s, k, "(") || scan_is(s, k, "[") || scan_is(s, k, "<")) depth++;
        else if (scan_is(s, k, ")") || scan_is(s, k, "]") || scan_is(s, k, ">")) depth--;
        bool end = k + 1 == close;
        if (!(depth == 0 && scan_is(s, k, ",")) && !end) continue;
        size_t b = end && !scan_is(s, k, ",") ? k + 1 : k;
        if (b > a) {
            if (d->n_params == MAX_TPARAMS) {
                d->bad = "more than 16 template parameters";
                return;
            }
            parse_tparam(s, d, a, b);
            d->n_params++;
        }
        a = k + 1;
    }
}

/* X<P...>::member: the member of class template X, whose parameters stand
 * where P names them. */
static void member_owner(scanner *s, tdef *d, size_t lt, size_t gt)
{
    snprintf(d->owner, sizeof d->owner, "%.*s", (int)s->t[lt - 1].len, s->t[lt - 1].p);
    for (size_t k = 0; k < d->n_params; k++) d->owner_arg[k] = -1;
    int arg = 0;
    for (size_t k = lt + 1; k + 1 < gt; k++) {
        if (scan_is(s, k, ",")) arg++;
        else if (scan_ident(s, k))
            for (size_t p = 0; p < d->n_params; p++)
                if (strlen(d->params[p].name) == s->t[k].len && !memcmp(d->params[p].name, s->t[k].p, s->t[k].len))
                    d->owner_arg[p] = arg;
    }
    d->kind = TD_MEMBER;
}

/* What the declaration after the parameter list (from j) defines. */
static void classify(scanner *s, tdef *d, size_t j)
{
    d->kind = TD_FUNC;
    for (size_t k = j; k < s->n; k++) {
        if (scan_is(s, k, ";")) return;
        if (scan_is(s, k, "{")) {
            d->body_open = k, d->body_close = scan_skip_group(s, k) - 1;
            return;
        }
        if ((scan_is(s, k, "class") || scan_is(s, k, "struct") || scan_is(s, k, "union")) && scan_ident(s, k + 1) &&
            d->kind == TD_FUNC) {
            d->kind = TD_CLASS;
            d->name_tok = &s->t[k + 1];
        } else if (scan_is(s, k, "<") && scan_ident(s, k - 1) && d->kind == TD_FUNC) {
            size_t gt = scan_skip_angles(s, k);
            if (gt > k && scan_is(s, gt, "::")) member_owner(s, d, k, gt);
            if (gt > k) k = gt - 1;
        } else if (scan_is(s, k, "(")) {
            if (d->kind != TD_CLASS && scan_ident(s, k - 1) && !d->name_tok) d->name_tok = &s->t[k - 1];
            k = scan_skip_group(s, k) - 1;
        }
    }
}

void tmpl_definition(scanner *s, size_t i)
{
    tmpl_set *ts = s->tmpl;
    if (!scan_is(s, i + 1, "<")) return;   /* template void f<int>(): an explicit instantiation, a use */
    size_t close = scan_skip_angles(s, i + 1);
    if (close == i + 1) return;
    if (!grow(s, (void **)&ts->defs, &ts->cap_defs, ts->n_defs, sizeof *ts->defs)) return;
    tdef *d = &ts->defs[ts->n_defs];
    memset(d, 0, sizeof *d);
    d->template_tok = i;
    d->n_fparams = -1;
    scan_ns_path(s, d->ns, sizeof d->ns, NULL);
    parse_tparams(s, d, i + 1, close - 1);
    classify(s, d, close);
    if (!d->name_tok) return;   /* nothing named: not noted */
    snprintf(d->name, sizeof d->name, "%.*s", (int)d->name_tok->len, d->name_tok->p);
    ts->n_defs++;
}

void tmpl_kernel(scanner *s, size_t stmt, size_t marker, const scan_token *name, size_t open, size_t close)
{
    (void)marker;
    tmpl_set *ts = s->tmpl;
    tdef *d = NULL;
    for (size_t k = ts->n_defs; k-- > 0 && !d;)
        if (ts->defs[k].template_tok >= stmt && ts->defs[k].template_tok < open) d = &ts->defs[k];
    if (!d) return;
    d->kind = TD_KERNEL;
    d->name_tok = name;
    snprintf(d->name, sizeof d->name, "%.*s", (int)name->len, name->p);
    const char *names[MAX_TPARAMS];
    size_t lens[MAX_TPARAMS];
    for (size_t k = 0; k < d->n_params; k++) names[k] = d->params[k].name, lens[k] = strlen(d->params[k].name);
    s->tparam_names = names, s->tparam_lens = lens, s->n_tparams = d->n_params;
    d->n_fparams = types_params(s, open, close, d->fparams, MAX_FPARAMS, &d->fparams_why);
    s->n_tparams = 0;
}

/* ---- uses ------------------------------------------------------------------- */

static bool note_use(scanner *s, size_t i)
{
    tmpl_set *ts = s->tmpl;
    char ns[256];
    scan_ns_path(s, ns, sizeof ns, NULL);
    size_t k = ts->n_nss;
    while (k > 0 && strcmp(ts->nss[k - 1].name, ns) != 0) k--;
    if (k == 0) {
        if (!grow(s, (void **)&ts->nss, &ts->cap_nss, ts->n_nss, sizeof *ts->nss)) return false;
        snprintf(ts->nss[ts->n_nss++].name, sizeof ts->nss[0].name, "%s", ns);
        k = ts->n_nss;
    }
    if (!grow(s, (void **)&ts->uses, &ts->cap_uses, ts->n_uses, sizeof *ts->uses)) return false;
    ts->uses[ts->n_uses++] = (use){i, k - 1};
    return true;
}

void tmpl_note_use(scanner *s, size_t i)
{
    if (scan_is(s, i + 1, "<") && scan_is(s, i + 2, "<") && scan_is(s, i + 3, "<")) return;   /* k<<<...>>> */
    if (i && (scan_is(s, i - 1, ".") || scan_is(s, i - 1, ">"))) return;   /* obj.f<...>, p->f<...> */
    note_use(s, i);
}

typedef struct binding {
    const tdef *def;
    const scan_targ *args;
    size_t n;
} binding;

/* The bound argument named name, or NULL. */
static const scan_targ *bound(const binding *b, const char *name, size_t len)
{
    for (size_t k = 0; b && k < b->n && k < b->def->n_params; k++)
        if (strlen(b->def->params[k].name) == len && !memcmp(b->def->params[k].name, name, len)) return &b->args[k];
    return NULL;
}

typedef struct eval_ctx {
    scanner *s;
    const binding *b;
} eval_ctx;

static bool resolve_value(void *user, const char *name, size_t len, long long *v)
{
    eval_ctx *c = user;
    const scan_targ *a = bound(c->b, name, len);
    if (a && !a->is_type) {
        *v = a->value;
        return true;
    }
    return !a && types_const_value(c->s, name, len, v);
}

/* One argument t[a..b) for parameter p, under b. */
static bool eval_arg(scanner *s, const binding *b, const tparam *p, size_t a, size_t e, scan_targ *out)
{
    memset(out, 0, sizeof *out);
    if (e <= a) return false;
    if (p->is_type) {
        out->is_type = true;
        if (e == a + 1 && scan_ident(s, a)) {
            const scan_targ *x = bound(b, s->t[a].p, s->t[a].len);
            if (x) {
                *out = *x;
                return x->is_type;
            }
        }
        const char *nm, *why;
        size_t nl;
        return types_parse(s, s->t + a, e - a, &out->type, &nm, &nl, &why) == 0 && !nm && !out->type.tparam;
    }
    snprintf(out->code, sizeof out->code, "%s", p->code);
    eval_ctx c = {s, b};
    const char *text = s->t[a].p, *stop = s->t[e - 1].p + s->t[e - 1].len;
    if (s->t[a].file != s->t[e - 1].file || stop < text) return false;
    if (!scan_pp_value(s->env, text, (size_t)(stop - text), resolve_value, &c, &out->value)) return false;
    if (!strcmp(p->code, "b")) out->value = out->value != 0;
    return true;
}

/* The arguments of the use whose '<' is at lt, for target d, under b: the
 * count, or -1. */
static int eval_args(scanner *s, const binding *b, const tdef *d, size_t lt, scan_targ *out)
{
    size_t gt = scan_skip_angles(s, lt);
    if (gt == lt || d->bad) return -1;
    size_t n = 0, a = lt + 1;
    int depth = 0;
    for (size_t k = a; k < gt && gt > lt + 2; k++) {   /* k<>: the defaults only */
        if (scan_is(s, k, "(") || scan_is(s, k, "[") || scan_is(s, k, "<")) depth++;
        else if (scan_is(s, k, ")") || scan_is(s, k, "]") || (scan_is(s, k, ">") && k + 1 < gt)) depth--;
        if (!((depth == 0 && scan_is(s, k, ",")) || k + 1 == gt)) continue;
        if (n == d->n_params) return -1;
        if (!eval_arg(s, b, &d->params[n], a, k, &out[n])) return -1;
        n++, a = k + 1;
    }
    /* the defaults, in the target's own terms (earlier parameters bound) */
    for (; n < d->n_params; n++) {
        const tparam *p = &d->params[n];
        binding own = {d, out, n};
        const char *ns = s->ns_at;
        size_t at = s->tok_at;
        s->ns_at = d->ns, s->tok_at = p->def_start;
        bool ok = p->def_end > p->def_start && eval_arg(s, &own, p, p->def_start, p->def_end, &out[n]);
        s->ns_at = ns, s->tok_at = at;
        if (!ok) return -1;
    }
    return (int)n;
}

/* The definition a use at i names (its body preferred), or -1. */
static long target(const scanner *s, size_t i)
{
    const tmpl_set *ts = s->tmpl;
    long best = -1;
    for (size_t k = 0; k < ts->n_defs; k++) {
        const tdef *d = &ts->defs[k];
        if (strlen(d->name) != s->t[i].len || memcmp(d->name, s->t[i].p, s->t[i].len)) continue;
        if (d->kind == TD_MEMBER) continue;
        if (i >= 2 && scan_is(s, i - 1, "::") && scan_ident(s, i - 2)) {
            /* ns::k: the namespace must be d's (or end it) */
            size_t nl = strlen(d->ns), ql = s->t[i - 2].len;
            if (nl < ql || memcmp(d->ns + nl - ql, s->t[i - 2].p, ql)) continue;
        }
        if (best < 0 || (d->body_open && !ts->defs[best].body_open) || d->kind == TD_KERNEL) best = (long)k;
    }
    return best;
}

/* ---- instances -------------------------------------------------------------- */

static bool same_args(const scan_targ *a, const scan_targ *b, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        if (a[k].is_type != b[k].is_type) return false;
        if (a[k].is_type ? memcmp(&a[k].type, &b[k].type, sizeof a[k].type) != 0 : a[k].value != b[k].value)
            return false;
    }
    return true;
}

static void add_instance(scanner *s, size_t def, const scan_targ *args, size_t n)
{
    tmpl_set *ts = s->tmpl;
    for (size_t k = 0; k < ts->n_work; k++)
        if (ts->work[k].def == def && ts->work[k].n == n && same_args(ts->work[k].args, args, n)) return;
    if (!grow(s, (void **)&ts->work, &ts->cap_work, ts->n_work, sizeof *ts->work)) return;
    instance *in = &ts->work[ts->n_work++];
    in->def = def, in->n = n;
    memcpy(in->args, args, n * sizeof *args);
    ts->defs[def].instanced = true;
}

/* The use at i, under b: a new instance of what it names. `template class
 * X<...>` instantiates all of X's members; other uses of a class template
 * name a type, not code. */
static void follow_use(scanner *s, const binding *b, const use *u)
{
    size_t i = u->tok;
    long t = target(s, i);
    if (t < 0) return;
    /* names in the arguments are looked up where the use stands */
    s->ns_at = s->tmpl->nss[u->ns].name, s->tok_at = i;
    tdef *d = &s->tmpl->defs[t];
    bool explicit_class = i >= 2 && (scan_is(s, i - 1, "class") || scan_is(s, i - 1, "struct")) &&
                          scan_is(s, i - 2, "template");
    if (d->kind == TD_CLASS && !explicit_class) return;
    scan_targ args[MAX_TPARAMS];
    int n = eval_args(s, b, d, i + 1, args);
    s->ns_at = NULL, s->tok_at = SIZE_MAX;
    if (n >= 0) {
        add_instance(s, (size_t)t, args, (size_t)n);
        return;
    }
    if (d->kind == TD_KERNEL && !d->warned) {
        d->warned = true;
        scan_warn(s, &s->t[i], "%s<...>: cannot work out the template arguments of this use%s%s; use --exact",
                  d->name, d->bad ? ": " : "", d->bad ? d->bad : "");
    }
}

/* The uses inside the token range (a, z), under b. */
static void follow_uses_in(scanner *s, const binding *b, size_t a, size_t z)
{
    tmpl_set *ts = s->tmpl;
    for (size_t k = 0; k < ts->n_uses; k++)
        if (ts->uses[k].tok > a && ts->uses[k].tok < z) follow_use(s, b, &ts->uses[k]);
}

/* Whether token i lies in the body of some template definition. */
static bool in_template(const scanner *s, size_t i)
{
    for (size_t k = 0; k < s->tmpl->n_defs; k++) {
        const tdef *d = &s->tmpl->defs[k];
        if (d->body_open && i > d->body_open && i < d->body_close) return true;
    }
    return false;
}

/* An instance of class template c: the members defined outside it. */
static void class_members(scanner *s, const tdef *c, const instance *in)
{
    for (size_t k = 0; k < s->tmpl->n_defs; k++) {
        const tdef *m = &s->tmpl->defs[k];
        if (m->kind != TD_MEMBER || strcmp(m->owner, c->name) || !m->body_open) continue;
        scan_targ args[MAX_TPARAMS];
        bool ok = true;
        for (size_t p = 0; p < m->n_params && ok; p++) {
            ok = m->owner_arg[p] >= 0 && (size_t)m->owner_arg[p] < in->n;
            if (ok) args[p] = in->args[m->owner_arg[p]];
        }
        binding b = {m, args, m->n_params};
        if (ok) follow_uses_in(s, &b, m->body_open, m->body_close);
    }
}

static void name_instance(scanner *s, tdef *d, const instance *in)
{
    if (d->n_fparams < 0) {
        if (!d->warned)
            scan_warn(s, d->name_tok, "%s: cannot work out the C++ names of its instances: %s; use --exact",
                      d->name, d->fparams_why);
        d->warned = true;
        return;
    }
    char ns[256];
    snprintf(ns, sizeof ns, "%s", d->ns);
    const char *parts[32];
    size_t n_parts = scan_ns_parts(ns, parts, 32);
    char mangled[1024];
    if (scan_mangle_template(mangled, sizeof mangled, parts, n_parts, d->name, in->args, in->n, d->fparams,
                              (size_t)d->n_fparams))
        scan_add_entry(s, mangled, strlen(mangled), d->name_tok);
}

void tmpl_resolve(scanner *s)
{
    tmpl_set *ts = s->tmpl;
    for (size_t k = 0; k < ts->n_uses && !s->oom; k++)
        if (!in_template(s, ts->uses[k].tok)) follow_use(s, NULL, &ts->uses[k]);
    /* New instances add their own uses; each instance once (the work list
     * only grows, and a depth of 64 stops recursive templates). */
    for (; ts->done < ts->n_work && ts->done < 4096 && !s->oom; ts->done++) {
        instance in = ts->work[ts->done];
        tdef *d = &ts->defs[in.def];
        binding b = {d, in.args, in.n};
        if (d->kind == TD_KERNEL) name_instance(s, d, &in);
        if (d->body_open) follow_uses_in(s, &b, d->body_open, d->body_close);
        if (d->kind == TD_CLASS) class_members(s, d, &in);
    }
    for (size_t k = 0; k < ts->n_defs; k++) {
        tdef *d = &ts->defs[k];
        if (d->kind == TD_KERNEL && !d->instanced && !d->warned && d->body_open)
            scan_warn(s, d->name_tok,
                      "%s: a template kernel with no instance this scan can see (nvcc names only the instances "
                      "a unit uses); use --exact", d->name);
    }
}
