/* `cckey scan --exact` (see scan_exact.h): each file built with each option
 * set by the toolchain that will compile it, which then names its entry
 * points: OpenCL's CL_PROGRAM_KERNEL_NAMES, the .entry names of nvcc's (or,
 * without nvcc, NVRTC's) PTX. Macro-declared kernels, template instances
 * and typedef'd parameters come out right because nothing is guessed. */
#include "scan_exact.h"
#include "../cli.h"
#include "../scan/strprog.h"
#include "../parallel_for.h"
#include "warm.h"
#include "warm_vulkan.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { JOB_OK, JOB_FAILED, JOB_NO_COMPILER, JOB_TEXT };

typedef struct job {
    int state;
    bool rdc;         /* built again with -rdc=true: it launches kernels from the device */
    char *names;      /* JOB_OK: each ended by '\n' */
    int *prog;        /* string-held programs: the program of each name (NULL otherwise) */
    char why[640];    /* JOB_FAILED: the first error */
} job;

typedef struct exact {
    const scan_exact_in *in;
    warm_compiler opencl, cuda, glsl, hlsl;
    bool have_opencl, have_cuda, have_vulkan;
    char opencl_why[512], cuda_why[600], vulkan_why[512];
    char nvcc[PATH_MAX];   /* "" when NVRTC builds CUDA */
    char tmpdir[PATH_MAX];
    job *jobs;
} exact;

static bool is_cuda(scan_lang l) { return l == CCKEY_LANG_CUDA || l == CCKEY_LANG_HIP; }
static bool is_shader(scan_lang l) { return l == CCKEY_LANG_GLSL || l == CCKEY_LANG_HLSL; }

/* The compiler that lists lang's entry points, or NULL when none is here. */
static const warm_compiler *compiler_of(const exact *x, scan_lang lang)
{
    if (lang == CCKEY_LANG_OPENCL) return x->have_opencl ? &x->opencl : NULL;
    if (is_cuda(lang)) return x->have_cuda ? &x->cuda : NULL;
    if (is_shader(lang) && x->have_vulkan) return lang == CCKEY_LANG_GLSL ? &x->glsl : &x->hlsl;
    return NULL;
}

bool scan_exact_first_error(const char *log, char *buf, size_t len)
{
    const char *first = NULL;
    for (const char *p = log; p && *p;) {
        size_t n = strcspn(p, "\n");
        const char *a = p, *b = p + n;
        while (a < b && isspace((unsigned char)*a)) a++;
        while (b > a && isspace((unsigned char)b[-1])) b--;
        if (a < b) {
            char line[1024];
            snprintf(line, sizeof line, "%.*s", (int)(b - a), a);
            if (strstr(line, "error")) {
                snprintf(buf, len, "%s", line);
                return true;
            }
            if (!first) first = a;
        }
        p += n + (p[n] == '\n');
    }
    if (!first) return false;
    size_t n = strcspn(first, "\n");
    while (n && isspace((unsigned char)first[n - 1])) n--;
    snprintf(buf, len, "%.*s", (int)n, first);
    return true;
}

/* OpenCL runtimes compile a copy of the source (PoCL: a temporary file in
 * its cache folder) and name that in their messages: the first
 * "NAME:LINE:COLUMN" in msg names path instead. */
static void name_the_file(char *msg, size_t cap, const char *path)
{
    for (char *p = msg; (p = strchr(p, ':')); p++) {
        char *q = p + 1;
        if (!isdigit((unsigned char)*q)) continue;
        while (isdigit((unsigned char)*q)) q++;
        if (*q != ':' || !isdigit((unsigned char)q[1])) continue;
        char *start = p;
        while (start > msg && !isspace((unsigned char)start[-1])) start--;
        if (start == p) return;
        size_t head = (size_t)(start - msg), plen = strlen(path), tail = strlen(p);
        if (head + plen + tail >= cap) return;
        memmove(msg + head + plen, p, tail + 1);
        memcpy(msg + head, path, plen);
        return;
    }
}

/* The source's folder, searched first for its headers as warm does. */
static int flags_for(const char *path, const scan_exact_set *set, bool cuda, warm_flags *out, char *why,
                     size_t why_len)
{
    warm_flags plain;
    if (warm_flags_make(set->opts, set->n, cuda, &plain, why, why_len) != 0) return -1;
    char real[PATH_MAX];
    const char *dir = realpath(path, real) ? dirname(real) : ".";
    int r = warm_flags_include(&plain, &dir, 1, cuda, out, why, why_len);
    warm_flags_free(&plain);
    return r;
}

/* One build of path with the set's options (and -rdc=true when rdc). */
static int compile_job(exact *x, const char *path, const scan_exact_set *set, scan_lang lang, bool rdc, size_t i,
                       warm_build *b, char *why, size_t why_len)
{
    bool cuda = is_cuda(lang);
    cckey_option *o = malloc((set->n + 1) * sizeof *o);
    if (!o) return snprintf(why, why_len, "out of memory"), -1;
    if (set->n) memcpy(o, set->opts, set->n * sizeof *o);
    o[set->n] = (cckey_option){{"-rdc=true", 9}, {"", 0}};
    scan_exact_set with = {o, set->n + rdc};
    warm_flags flags;
    int r = flags_for(path, &with, cuda, &flags, why, why_len);
    free(o);
    if (r != 0) return -1;
    if (cuda && x->nvcc[0]) {
        r = warm_nvcc_entries(x->nvcc, path, &flags, x->tmpdir, i, b);
    } else {
        size_t len;
        char *src = warm_read_file(path, &len);
        const warm_compiler *c = compiler_of(x, lang);
        if (src) r = c->entries(c->impl, 0, src, len, path, &flags, b);
        else r = -1, snprintf(b->error, sizeof b->error, "cannot read it: %s", strerror(errno));
        free(src);
    }
    warm_flags_free(&flags);
    return r;
}

/* The set already asks for relocatable device code. */
static bool has_rdc(const scan_exact_set *set)
{
    for (size_t k = 0; k < set->n; k++) {
        const char *key = set->opts[k].key.ptr;
        size_t len = set->opts[k].key.len;
        if ((len >= 4 && !memcmp(key, "-rdc", 4)) || (len == 3 && !memcmp(key, "-dc", 3)) ||
            (len >= 25 && !memcmp(key, "--relocatable-device-code", 25)))
            return true;
    }
    return false;
}

/* Appends the names ("a\nb\n") to the job's list, each of program p. */
static bool add_names(job *j, size_t *len, size_t *count, const char *names, size_t n, int p)
{
    char *t = realloc(j->names, *len + n + 1);
    if (!t) return false;
    j->names = t;
    memcpy(t + *len, names, n);
    t[*len += n] = '\0';
    size_t lines = 0;
    for (size_t k = 0; k < n; k++) lines += names[k] == '\n';
    int *q = realloc(j->prog, (*count + lines + 1) * sizeof *q);
    if (!q) return false;
    j->prog = q;
    for (size_t k = 0; k < lines; k++) q[(*count)++] = p;
    return true;
}

/* The names in program p of r: the OpenCL runtime's for an OpenCL program
 * (false with j->why when it does not build and the text saw kernels in
 * it; a string that merely mentions __kernel builds to nothing), the text
 * scan's for a CUDA one. */
static bool program_names(exact *x, const char *path, const warm_flags *flags, const scan_result *r,
                          size_t p, job *j, size_t *len, size_t *count)
{
    bool seen = false, ok = true;
    for (size_t e = 0; e < r->n && ok; e++) {
        if (r->entries[e].program != (int)p) continue;
        seen = true;
        if (r->programs[p].lang != CCKEY_LANG_OPENCL) {
            char line[1100];
            int n = snprintf(line, sizeof line, "%s\n", r->entries[e].name);
            ok = n > 0 && (size_t)n < sizeof line && add_names(j, len, count, line, (size_t)n, (int)p);
        }
    }
    if (r->programs[p].lang != CCKEY_LANG_OPENCL) return ok;
    warm_build b = {0};
    if (x->opencl.entries(x->opencl.impl, 0, r->programs[p].text, r->programs[p].len, path, flags, &b) == 0)
        ok = add_names(j, len, count, b.binary, b.binary_len, (int)p);
    else if (seen && !scan_exact_first_error(b.log, j->why, sizeof j->why))
        snprintf(j->why, sizeof j->why, "%s", b.error);
    if (seen && !b.binary) ok = false;
    warm_build_clear(&b);
    return ok;
}

/* A file holding its programs as strings: each program the text scan
 * decodes (the host compiler's string) built on the OpenCL device. */
static void strings_job(exact *x, const char *path, scan_lang lang, const scan_exact_set *set, job *j)
{
    size_t len;
    char *src = warm_read_file(path, &len);
    scan_result r = {0};
    scan_options so = {x->in->macros, x->in->n_macros, NULL, 0};
    warm_flags flags;
    j->state = JOB_FAILED;
    if (!src || scan_file(path, src, len, lang, &so, &r) != 0) {
        snprintf(j->why, sizeof j->why, "cannot read it: %s", strerror(errno ? errno : EIO));
        free(src);
        return;
    }
    free(src);
    if (flags_for(path, set, false, &flags, j->why, sizeof j->why) == 0) {
        size_t n = 0, count = 0;
        bool ok = add_names(j, &n, &count, "", 0, -1);
        for (size_t p = 0; p < r.n_programs && ok; p++) ok = program_names(x, path, &flags, &r, p, j, &n, &count);
        if (ok) j->state = JOB_OK;
        warm_flags_free(&flags);
    }
    scan_result_free(&r);
}

/* Host code, and OpenCL files that are one string. */
static bool string_held(const char *path, scan_lang lang)
{
    return lang == CCKEY_LANG_HOST || (lang == CCKEY_LANG_OPENCL && scan_strings_wanted(path, lang));
}

static void build_one(void *arg, size_t i)
{
    exact *x = arg;
    const scan_exact_in *in = x->in;
    size_t f = i / in->n_sets;
    const char *path = in->files->paths[f];
    scan_lang lang = in->files->langs[f];
    bool cuda = is_cuda(lang);
    job *j = &x->jobs[i];
    /* Programs held as strings: as the text scan decodes them (the host
     * compiler's strings), built on the device; without one, the text
     * scan's list (cmd_scan lists them so). */
    if (string_held(path, lang)) {
        if (x->have_opencl) strings_job(x, path, lang, &in->sets[i % in->n_sets], j);
        else j->state = JOB_TEXT;
        return;
    }
    if (!compiler_of(x, lang)) {
        j->state = JOB_NO_COMPILER;
        return;
    }
    j->state = JOB_FAILED;
    const scan_exact_set *set = &in->sets[i % in->n_sets];
    warm_build b = {0};
    int r = compile_job(x, path, set, lang, false, i, &b, j->why, sizeof j->why);
    /* A kernel launched from device code (dynamic parallelism) compiles only
     * as relocatable device code, as its build must have it. */
    if (r != 0 && cuda && b.log && !has_rdc(set) &&
        (strstr(b.log, "separate compilation mode") || strstr(b.log, "device-side kernel launch"))) {   /* nvcc, NVRTC */
        warm_build_clear(&b);
        b = (warm_build){0};
        r = compile_job(x, path, set, lang, true, i, &b, j->why, sizeof j->why);
        j->rdc = r == 0;
    }
    if (r == 0) {
        j->state = JOB_OK;
        j->names = b.binary;
        b.binary = NULL;
    } else if (!scan_exact_first_error(b.log, j->why, sizeof j->why)) {
        if (b.error[0]) snprintf(j->why, sizeof j->why, "%s", b.error);
    } else if (!cuda && !is_shader(lang)) {   /* shaderc names the file itself */
        name_the_file(j->why, sizeof j->why, path);
    }
    warm_build_clear(&b);
}

/* The compilers the files need; why each missing one is missing. */
static void find_compilers(exact *x)
{
    bool want_cl = false, want_cuda = false, want_vulkan = false;
    for (size_t f = 0; f < x->in->files->n; f++) {
        scan_lang l = x->in->files->langs[f];
        want_cl |= l == CCKEY_LANG_OPENCL || l == CCKEY_LANG_HOST;
        want_cuda |= is_cuda(l);
        want_vulkan |= is_shader(l);
    }
    /* shaderc, on the first Vulkan device or, without one, for Vulkan 1.3. */
    if (want_vulkan)
        x->have_vulkan = warm_compiler_glsl(&x->glsl, x->vulkan_why, sizeof x->vulkan_why) == 0 &&
                         warm_compiler_hlsl(&x->hlsl, x->vulkan_why, sizeof x->vulkan_why) == 0;
    if (want_cl) {
        /* As in warm: PoCL's own cache would keep every scanned program. */
        setenv("POCL_KERNEL_CACHE", "0", 0);
        x->have_opencl = warm_compiler_opencl(&x->opencl, x->opencl_why, sizeof x->opencl_why) == 0;
    }
    if (!want_cuda) return;
    const char *given = x->in->nvcc;
    bool nvcc = given ? strcmp(given, "none") != 0 : warm_nvcc_find(x->nvcc, sizeof x->nvcc);
    if (nvcc && given) snprintf(x->nvcc, sizeof x->nvcc, "%s", given);
    if (nvcc) {
        x->have_cuda = true;
        return;
    }
    x->nvcc[0] = '\0';
    char why[512];
    x->have_cuda = warm_compiler_cuda(&x->cuda, why, sizeof why) == 0;
    snprintf(x->cuda_why, sizeof x->cuda_why, "%s, and %s", given ? "--nvcc none" : "nvcc not found", why);
}

static int rm_entry(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)type, (void)ftw;
    remove(p);
    return 0;
}

/* The identifier a (possibly mangled) entry name was written as:
 * _Z6kernelIfEvPT_ and _ZN2ns6kernelEPf are "kernel". */
static void ident_of(const char *name, char *buf, size_t len)
{
    const char *p = name, *last = NULL;
    size_t last_n = 0;
    if (strncmp(p, "_Z", 2) == 0) {
        p += 2 + (p[2] == 'L');
        if (*p == 'N')
            for (p++; *p == 'r' || *p == 'V' || *p == 'K';) p++;
        while (isdigit((unsigned char)*p)) {
            char *e;
            size_t n = strtoul(p, &e, 10);
            if (n == 0 || strnlen(e, n) < n) break;
            last = e, last_n = n, p = e + n;
        }
    }
    if (last) snprintf(buf, len, "%.*s", (int)last_n, last);
    else snprintf(buf, len, "%s", name);
}

/* The line of the first "ident(" or "ident<" in src (a definition, or the
 * declaration before it), 0 when there is none. */
static unsigned line_of(const char *src, size_t len, const char *ident)
{
    size_t n = strlen(ident);
    const char *end = src + len;
    for (const char *p = src; n && (p = memmem(p, (size_t)(end - p), ident, n)); p++) {
        if (p > src && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) continue;
        const char *q = p + n;
        while (q < end && isspace((unsigned char)*q)) q++;
        if (q < end && (*q == '(' || *q == '<')) {
            unsigned line = 1;
            for (const char *c = src; c < p; c++) line += *c == '\n';
            return line;
        }
    }
    return 0;
}

typedef struct named {
    scan_entry e;
    size_t order;
    size_t first_set;
} named;

static int by_line(const void *a, const void *b)
{
    const named *x = a, *y = b;
    unsigned lx = x->e.line ? x->e.line : UINT_MAX, ly = y->e.line ? y->e.line : UINT_MAX;
    if (lx != ly) return lx < ly ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Where each name is in the source: the text scan's line when it found the
 * entry (or one of the same identifier: a template's instances), else the
 * identifier's first definition-like use. */
static void place(named *nm, const char *src, size_t len, const scan_result *text)
{
    char ident[512];
    ident_of(nm->e.name, ident, sizeof ident);
    nm->e.source_name = strdup(ident);
    for (size_t i = 0; i < text->n && !nm->e.line; i++)
        if (strcmp(text->entries[i].name, nm->e.name) == 0)
            nm->e.line = text->entries[i].line, nm->e.file = text->entries[i].file;
    for (size_t i = 0; i < text->n && !nm->e.line; i++)
        if (strcmp(text->entries[i].source_name, ident) == 0)
            nm->e.line = text->entries[i].line, nm->e.file = text->entries[i].file;
    if (!nm->e.line && src) nm->e.line = line_of(src, len, ident);
}

/* Whether name is one of the lines of a job's list. */
static bool in_list(const job *j, const char *name)
{
    size_t l = strlen(name);
    for (const char *p = j->state == JOB_OK ? j->names : ""; *p; p += strcspn(p, "\n") + 1)
        if (strcspn(p, "\n") == l && !memcmp(p, name, l)) return true;
    return false;
}

/* Every name file f's jobs list, each once, in first-seen order, into
 * *all (*n of them). 0 or -1 (out of memory; *all freed). */
static int gather(const exact *x, size_t f, named **all, size_t *n)
{
    size_t n_sets = x->in->n_sets, cap = 0;
    *all = NULL, *n = 0;
    for (size_t s = 0; s < n_sets; s++) {
        const job *j = &x->jobs[f * n_sets + s];
        for (const char *p = j->state == JOB_OK ? j->names : ""; *p; p += strcspn(p, "\n") + 1) {
            size_t l = strcspn(p, "\n");
            bool seen = false;
            for (size_t k = 0; k < *n && !seen; k++) seen = strlen((*all)[k].e.name) == l && !memcmp((*all)[k].e.name, p, l);
            if (seen) continue;
            if (*n == cap) {
                named *a = realloc(*all, (cap = cap ? 2 * cap : 16) * sizeof *a);
                if (!a) goto oom;
                *all = a;
            }
            size_t line = 0;
            for (const char *q = j->names; q < p; q++) line += *q == '\n';
            (*all)[*n] = (named){.e = {.name = strndup(p, l), .program = j->prog ? j->prog[line] : -1}, .order = *n,
                                 .first_set = s};
            if (!(*all)[(*n)++].e.name) goto oom;
        }
    }
    return 0;
oom:
    for (size_t k = 0; k < *n; k++) free((*all)[k].e.name);
    free(*all);
    *all = NULL, *n = 0;
    return -1;
}

/* The entries' lines and files from the text scan of the compiled file
 * (with its headers: an entry defined in a header is credited to this
 * file, and says which header); the headers into out. */
static void place_all(const exact *x, size_t f, named *all, size_t n, scan_exact_file *out)
{
    const scan_exact_in *in = x->in;
    size_t len = 0;
    char *src = n ? warm_read_file(in->files->paths[f], &len) : NULL;
    scan_result text = {0};
    scan_options so = {in->macros, in->n_macros, NULL, 0};
    if (src && scan_file(in->files->paths[f], src, len, in->files->langs[f], &so, &text) != 0)
        text = (scan_result){0};
    for (size_t k = 0; k < n; k++) place(&all[k], src, len, &text);
    out->r.files = text.files, out->r.n_files = text.n_files;
    text.files = NULL, text.n_files = 0;
    if (x->jobs[f * in->n_sets].prog) {   /* the programs the entries name: the same decoding's */
        out->r.programs = text.programs, out->r.n_programs = text.n_programs;
        text.programs = NULL, text.n_programs = 0;
    }
    scan_result_free(&text);
    free(src);
}

/* One file's entry points from its jobs' name lists. */
static int collect(const exact *x, size_t f, scan_exact_file *out)
{
    size_t n_sets = x->in->n_sets, n;
    named *all;
    if (gather(x, f, &all, &n) != 0) return -1;
    place_all(x, f, all, n, out);
    if (n) qsort(all, n, sizeof *all, by_line);   /* all is NULL when n is 0 */
    out->r.entries = malloc((n ? n : 1) * sizeof *out->r.entries);
    out->in_set = calloc((n ? n : 1) * n_sets, sizeof *out->in_set);
    if (!out->r.entries || !out->in_set) goto oom;
    for (size_t k = 0; k < n; k++) {
        out->r.entries[k] = all[k].e;
        if (!all[k].e.source_name) goto oom;
        for (size_t s = 0; s < n_sets; s++) out->in_set[k * n_sets + s] = in_list(&x->jobs[f * n_sets + s], all[k].e.name);
    }
    out->r.n = out->r.cap = n;
    out->text = x->jobs[f * n_sets].state == JOB_TEXT;
    free(all);
    return 0;
oom:
    for (size_t k = 0; k < n; k++) free(all[k].e.name), free(all[k].e.source_name);
    free(all);
    free(out->r.entries);
    free(out->in_set);
    for (size_t k = 0; k < out->r.n_files; k++) free(out->r.files[k]);
    free(out->r.files);
    *out = (scan_exact_file){0};
    return -1;
}

/* Failures, in file order: one warning per file when every set failed the
 * same way, else one per set; and per language, the files no compiler here
 * could list. */
static void warn_failures(const exact *x)
{
    const scan_exact_in *in = x->in;
    size_t no_compiler[CCKEY_LANG_HOST + 1] = {0};
    for (size_t f = 0; f < in->files->n; f++) {
        const job *j = &x->jobs[f * in->n_sets];
        if (j->state == JOB_TEXT) continue;
        if (j->state == JOB_NO_COMPILER) {
            no_compiler[in->files->langs[f]]++;
            continue;
        }
        /* Every set alike: one warning for the file. */
        bool same = true;
        for (size_t s = 1; s < in->n_sets; s++)
            same &= j[s].state == j->state && !strcmp(j[s].why, j->why) &&
                    (j->state != JOB_OK || !j[s].names[0] == !j->names[0]);
        for (size_t s = 0; s < (same ? 1 : in->n_sets); s++) {
            char with[48] = "";
            if (!same) snprintf(with, sizeof with, " with option set %zu", s + 1);
            if (j[s].rdc)
                cli_warn("scan: %s: launches kernels from device code (dynamic parallelism): built with -rdc=true%s; "
                         "its option sets must pass it to warm too", in->files->paths[f], with);
            if (j[s].state != JOB_OK)
                cli_warn("scan: %s: does not compile%s: %s", in->files->paths[f], with, j[s].why);
            else if (!j[s].names[0])
                cli_warn("scan: %s: the compiler reports no entry points%s", in->files->paths[f], with);
        }
    }
    static const char *const label[] = {"", "OpenCL", "CUDA", "HIP", "Metal", "GLSL", "HLSL"};
    for (int l = 1; l < CCKEY_LANG_HOST; l++) {
        if (!no_compiler[l]) continue;
        const char *why = l == CCKEY_LANG_METAL ? "no Metal compiler here (it needs macOS's xcrun metal)"
                        : l == CCKEY_LANG_OPENCL ? x->opencl_why
                        : is_shader((scan_lang)l) ? x->vulkan_why : x->cuda_why;
        cli_warn("scan: --exact: %zu %s file%s not listed: %s (without --exact they are scanned by text)",
                 no_compiler[l], label[l], no_compiler[l] == 1 ? "" : "s", why);
    }
}

/* The OpenCL runtime's compiler prints its own error count ("1 error
 * generated.", clang's) to our standard error, beside the warning that
 * already names the first error. While builds run, standard error goes
 * through a pipe that drops those lines and passes on everything else. */
typedef struct stderr_filter {
    int saved, pipe_r;
    pthread_t th;
    bool on;
} stderr_filter;

static void *forward(void *p)
{
    stderr_filter *f = p;
    FILE *in = fdopen(f->pipe_r, "r");
    regex_t count;
    bool have_re = regcomp(&count, "^[0-9]+ (errors?|warnings?)( and [0-9]+ (errors?|warnings?))? generated\\.$",
                           REG_EXTENDED | REG_NOSUB) == 0;
    char line[4096];
    while (in && fgets(line, sizeof line, in)) {
        size_t n = strlen(line);
        char bare[4096];
        snprintf(bare, sizeof bare, "%.*s", (int)(n && line[n - 1] == '\n' ? n - 1 : n), line);
        if (have_re && regexec(&count, bare, 0, NULL, 0) == 0) continue;
        for (size_t done = 0; done < n;) {
            ssize_t w = write(f->saved, line + done, n - done);
            if (w <= 0 && errno != EINTR) break;
            if (w > 0) done += (size_t)w;
        }
    }
    if (have_re) regfree(&count);
    if (in) fclose(in);
    else close(f->pipe_r);
    return NULL;
}

static void filter_begin(stderr_filter *f)
{
    int p[2];
    f->on = false;
    fflush(stderr);
    if (pipe2(p, O_CLOEXEC) != 0) return;   /* nvcc and the runtime's helpers need neither end */
    f->saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    f->pipe_r = p[0];
    if (f->saved < 0 || dup2(p[1], STDERR_FILENO) < 0 || pthread_create(&f->th, NULL, forward, f) != 0) {
        if (f->saved >= 0) dup2(f->saved, STDERR_FILENO), close(f->saved);
        close(p[0]), close(p[1]);
        return;
    }
    close(p[1]);
    f->on = true;
}

static void filter_end(stderr_filter *f)
{
    if (!f->on) return;
    fflush(stderr);
    dup2(f->saved, STDERR_FILENO);   /* the pipe's last writer closes: forward() sees its end */
    pthread_join(f->th, NULL);
    close(f->saved);
}

int scan_exact_run(const scan_exact_in *in, scan_exact_file *out)
{
    exact x = {.in = in};
    size_t n_jobs = in->files->n * in->n_sets;
    memset(out, 0, in->files->n * sizeof *out);
    x.jobs = calloc(n_jobs ? n_jobs : 1, sizeof *x.jobs);
    if (!x.jobs) goto oom;
    find_compilers(&x);
    if (x.have_cuda && x.nvcc[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(x.tmpdir, sizeof x.tmpdir, "%s/cckey-scan-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(x.tmpdir)) {
            cli_error("scan: cannot make a temporary folder for nvcc's output (%s): %s", x.tmpdir, strerror(errno));
            free(x.jobs);
            return CLI_FAIL;
        }
    }
    unsigned jobs = in->jobs;
    if (!jobs) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = c > 0 ? (unsigned)c : 1;
    }
    stderr_filter filter = {0};
    if (x.have_opencl) filter_begin(&filter);
    cli_parallel_for(n_jobs, jobs, build_one, &x);
    filter_end(&filter);
    if (x.tmpdir[0]) nftw(x.tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    if (x.have_vulkan) warm_vulkan_release();   /* lavapipe frees per-pipeline memory with its device */
    if (!in->quiet) warn_failures(&x);
    int rc = CLI_OK;
    for (size_t f = 0; f < in->files->n && rc == CLI_OK; f++)
        if (collect(&x, f, &out[f]) != 0) rc = CLI_FAIL;
    for (size_t i = 0; i < n_jobs; i++) free(x.jobs[i].names), free(x.jobs[i].prog);
    free(x.jobs);
    if (rc == CLI_OK) return CLI_OK;
    scan_exact_free(out, in->files->n);
oom:
    cli_error("scan: out of memory");
    return CLI_FAIL;
}

void scan_exact_free(scan_exact_file *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        scan_result_free(&f[i].r);
        free(f[i].in_set);
        f[i] = (scan_exact_file){0};
    }
}
