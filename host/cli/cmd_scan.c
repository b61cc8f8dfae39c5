/* cckey scan: find kernel sources and their entry points, and write the
 * manifest of entries x devices x option sets that `cckey batch` and
 * `cckey warm` read. */
#include "cli.h"
#include "json_out.h"
#include "scan/scan.h"
#include "warm/scan_exact.h"
#include "scan_langs.h"
#include "scan/shaders.h"
#include "warm/warm_vulkan.h"
#include "scan_sets.h"
#include "scan_text.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A manifest device. Discovered ones take only the sources their runtime
 * compiles, so that `cckey warm` can build every tuple; ones the user named
 * (and the "cpu" stand-in) take every source. */
typedef struct scan_device {
    char *id;
    unsigned langs;  /* bit 1 << scan_lang of each language it takes; SCAN_ALL_LANGS */
} scan_device;

typedef struct scan_opts {
    scan_device *devices;
    size_t n_devices;
    scan_sets sets;          /* -O, --options-file */
    const char *output;
    bool list, quiet;
    cli_format fmt;          /* of --list */
    cli_json_rows rows;      /* manifest lines, or --list's json and jsonl items */
    size_t skipped[CCKEY_LANG_HOST + 1];   /* entry points no device takes, by language */
    scan_exact_set *exact_sets;  /* the sets as the key (and the scans) read them */
    const char **macros;     /* --kernel-macro */
    size_t n_macros;
    bool exact;              /* --exact: ask the compilers */
    unsigned jobs;           /* --jobs: compiler runs at once (0: the cores) */
    const char *nvcc;        /* --nvcc */
    unsigned only;           /* --language: the languages scanned (0: all) */
    bool named;              /* the devices are the -d ones */
} scan_opts;

static int add_device(scan_opts *o, const char *id, unsigned langs)
{
    /* One identity named for several languages is one device. */
    for (size_t j = 0; j < o->n_devices; j++)
        if (strcmp(o->devices[j].id, id) == 0) {
            o->devices[j].langs |= langs;
            return 0;
        }
    scan_device *d = realloc(o->devices, (o->n_devices + 1) * sizeof *d);
    if (!d) return -1;
    o->devices = d;
    if (!(d[o->n_devices].id = strdup(id))) return -1;
    d[o->n_devices++].langs = langs;
    return 0;
}

/* The devices of this host, as `cckey devices` names them, each with the
 * language its runtime compiles. */
static int default_devices(scan_opts *o)
{
    static const cckey_backend_kind kinds[] = {CCKEY_BACKEND_OPENCL, CCKEY_BACKEND_CUDA};
    static const scan_lang langs[] = {CCKEY_LANG_OPENCL, CCKEY_LANG_CUDA};
    for (size_t k = 0; k < 2; k++) {
        cckey_device devs[32];
        size_t n = 0;
        if (cckey_devices(NULL, kinds[k], devs, 32, &n) != CCKEY_OK) continue;
        /* One GPU seen through both runtimes takes both languages. */
        for (size_t i = 0; i < n && i < 32; i++)
            if (add_device(o, devs[i].id, 1u << langs[k]) != 0) return -1;
    }
    /* Vulkan devices take the shaders warm compiles to SPIR-V for them;
     * "cpu" whatever no device here takes. */
    const unsigned shaders = 1u << CCKEY_LANG_GLSL | 1u << CCKEY_LANG_HLSL;
    bool kernels = o->n_devices > 0;
    warm_vk *vk = NULL;
    char why[512];
    int rc = 0;
    if (warm_vulkan_open(&vk, why, sizeof why) == 0)
        for (size_t i = 0; i < warm_vk_count(vk) && rc == 0; i++) rc = add_device(o, warm_vk_info(vk, i)->id, shaders);
    bool vulkan = vk && warm_vk_count(vk) > 0;
    warm_vk_close(vk);
    if (rc == 0 && !kernels) rc = add_device(o, "cpu", vulkan ? SCAN_ALL_LANGS & ~shaders : SCAN_ALL_LANGS);
    return rc;
}

/* target relative to base (both absolute and resolved), or NULL when they
 * share nothing but the root. */
static char *relative_to(const char *base, const char *target)
{
    size_t common = 0, i = 0;
    for (; base[i] && target[i] && base[i] == target[i]; i++)
        if (base[i] == '/') common = i;
    if (!base[i] && (target[i] == '/' || !target[i])) common = i;
    if (common == 0) return NULL;
    size_t ups = 0;
    for (const char *p = base + common; *p; p++)
        if (*p == '/') ups++;
    const char *rest = target + common + (target[common] == '/');
    char *out = malloc(ups * 3 + strlen(rest) + 1);
    if (!out) return NULL;
    out[0] = '\0';
    for (size_t u = 0; u < ups; u++) strcat(out, "../");
    strcat(out, rest);
    return out;
}

/* A scan's warnings: "LINE: text" is the file's, "HEADER:LINE: text" a
 * header's it includes. */
static void print_warnings(const char *path, const scan_result *r)
{
    for (size_t i = 0; i < r->n_warnings; i++) {
        const char *w = r->warnings[i];
        if (isdigit((unsigned char)w[0])) cli_warn("%s:%s", path, w);
        else cli_warn("%s (included by %s)", w, path);
    }
}

/* The text scan of one file under every option set, its warnings printed. */
static int scan_text(scan_opts *o, const char *path, scan_lang lang, scan_exact_file *f)
{
    cli_file m;
    char why[256];
    if (cli_file_map(path, &m, why, sizeof why) != 0) {
        cli_error("scan: %s: %s", path, why);
        return CLI_FAIL;
    }
    int sr = scan_text_sets(path, m.ptr, m.len, lang, o->exact_sets, o->sets.n, o->macros, o->n_macros, f);
    cli_file_unmap(&m);
    if (sr == CCKEY_SCAN_TOO_DEEP) {
        cli_error("scan: %s:%u: braces nested deeper than %d levels; not scanned", path, f->r.deep_line,
                  CCKEY_SCAN_MAX_DEPTH);
        return CLI_USAGE;
    }
    if (sr == CCKEY_SCAN_UNREADABLE) {
        cli_error("scan: %s: a header it includes cannot be read: %s", path, strerror(errno));
        return CLI_FAIL;
    }
    if (sr != 0) {
        cli_error("scan: out of memory");
        return CLI_FAIL;
    }
    const scan_result *r = &f->r;
    bool shader = lang == CCKEY_LANG_GLSL || lang == CCKEY_LANG_HLSL, comp = scan_shader_path_is_comp(path);
    if (!o->quiet) print_warnings(path, r);
    if (!o->quiet && r->n == 0 && r->n_warnings == 0 && shader && scan_shader_none(lang, comp))
        cli_warn("%s: no entry points: %s", path, scan_shader_none(lang, comp));
    else if (!o->quiet && r->n == 0 && r->n_warnings == 0 && lang != CCKEY_LANG_HOST && !shader)
        cli_warn("%s: no entry points: no %s definition at namespace scope (declared through a macro? "
                 "see --kernel-macro)", path, lang == CCKEY_LANG_CUDA || lang == CCKEY_LANG_HIP ? "__global__ function"
                                              : lang == CCKEY_LANG_METAL ? "kernel function" : "__kernel function");
    return CLI_OK;
}

/* The language an entry's runtime compiles: its program's, or the file's. */
static scan_lang entry_lang(scan_lang lang, const scan_result *r, const scan_entry *en)
{
    return en->program >= 0 ? r->programs[en->program].lang : lang;
}

/* The header an entry is defined in, or NULL (the file itself). */
static const char *defined_in(const scan_result *r, const scan_entry *en)
{
    return en->file && en->file < r->n_files ? r->files[en->file] : NULL;
}

/* The row built in o->rows.w (strict: a name that is not UTF-8 fails it)
 * as a manifest line or a --list item. */
static int put_json(scan_opts *o, const char *path)
{
    if (cli_json_row_put(&o->rows) == 0) return CLI_OK;
    cli_error("scan: cannot encode an entry of %s (not UTF-8?)", path);
    return CLI_FAIL;
}

/* One --list item: FILE:LINE: NAME [(SOURCE_NAME)] [in HEADER], or its JSON
 * object ("defined_in" for a header's kernel, "program": true for one in a
 * string the file holds). */
static int list_entry(scan_opts *o, FILE *out, const char *path, scan_lang lang, const scan_result *r,
                      const scan_entry *en)
{
    const char *hdr = defined_in(r, en);
    if (o->fmt == CLI_TEXT) {
        fprintf(out, "%s:%u: %s", path, en->line, en->name);
        if (strcmp(en->name, en->source_name) != 0) fprintf(out, " (%s)", en->source_name);
        if (hdr) fprintf(out, " in %s", hdr);
        fputc('\n', out);
        return CLI_OK;
    }
    cli_json *w = &o->rows.w;
    cli_json_object(w);
    cli_json_kstr(w, "file", path);
    cli_json_kint(w, "line", en->line);
    cli_json_kstr(w, "name", en->name);
    cli_json_kstr(w, "source_name", en->source_name);
    cli_json_kstr(w, "language", scan_lang_name(entry_lang(lang, r, en)));
    if (hdr) cli_json_kstr(w, "defined_in", hdr);
    if (en->program >= 0) cli_json_kbool(w, "program", true);
    cli_json_end(w);
    return put_json(o, path);
}

/* A set's [KEY, VALUE] pairs, as the manifest's "options". */
static void set_json(cli_json *w, const scan_exact_set *set)
{
    cli_json_array(w);
    for (size_t i = 0; i < set->n; i++) {
        cli_json_array(w);
        cli_json_strn(w, set->opts[i].key.ptr, set->opts[i].key.len);
        cli_json_strn(w, set->opts[i].value.ptr, set->opts[i].value.len);
        cli_json_end(w);
    }
    cli_json_end(w);
}

/* One entry's manifest lines: one per device that takes its language x
 * option set it exists in. A program held as a string is given inline
 * ("source"), as the runtime gets it; else the file ("source_file"). */
static int manifest_entry(scan_opts *o, FILE *out, const char *path, const char *shown, scan_lang lang,
                          const scan_result *r, size_t e, const bool *in_set)
{
    const scan_entry *en = &r->entries[e];
    scan_lang l = entry_lang(lang, r, en);
    int rc = CLI_OK;
    for (size_t d = 0; d < o->n_devices && rc == CLI_OK; d++) {
        if (!((o->devices[d].langs >> l) & 1)) continue;
        for (size_t s = 0; s < o->sets.n && rc == CLI_OK; s++) {
            if (in_set && !in_set[e * o->sets.n + s]) continue;
            cli_json *w = &o->rows.w;
            cli_json_object(w);
            cli_json_kstr(w, "device", o->devices[d].id);
            cli_json_kstr(w, "name", en->name);
            cli_json_key(w, en->program >= 0 ? "source" : "source_file");
            if (en->program >= 0) cli_json_strn(w, r->programs[en->program].text, r->programs[en->program].len);
            else cli_json_str(w, shown);
            cli_json_key(w, "options");
            set_json(w, &o->exact_sets[s]);
            cli_json_kstr(w, "language", scan_lang_name(l));
            cli_json_end(w);
            rc = put_json(o, path);
        }
    }
    return rc;
}

/* One file's entries r as manifest lines or --list items. in_set: which
 * option sets hold each entry; NULL: all of them. */
static int emit_file(scan_opts *o, const char *path, scan_lang lang, const char *base, FILE *out,
                     const scan_result *r, const bool *in_set)
{
    char real[PATH_MAX];
    char *rel = NULL;
    if (!o->list && realpath(path, real)) rel = relative_to(base, real);
    const char *shown = rel ? rel : (o->list || !realpath(path, real)) ? path : real;
    int rc = CLI_OK;
    for (size_t e = 0; e < r->n && rc == CLI_OK; e++) {
        const scan_entry *en = &r->entries[e];
        scan_lang l = entry_lang(lang, r, en);
        bool taken = o->list;
        for (size_t d = 0; d < o->n_devices; d++) taken |= (o->devices[d].langs >> l) & 1;
        if (!taken) o->skipped[l]++;
        rc = o->list ? list_entry(o, out, path, lang, r, en) : manifest_entry(o, out, path, shown, lang, r, e, in_set);
    }
    free(rel);
    return rc;
}

static int scan_listed_file(scan_opts *o, const char *path, scan_lang lang, const char *base, FILE *out,
                     size_t *entries)
{
    scan_exact_file f;
    int rc = scan_text(o, path, lang, &f);
    if (rc != CLI_OK) return rc;
    rc = emit_file(o, path, lang, base, out, &f.r, f.in_set);
    *entries += f.r.n;
    scan_exact_free(&f, 1);
    return rc;
}

/* The option sets as the key (and the scans) read them. */
static int make_sets(scan_opts *o)
{
    scan_exact_set *sets = calloc(o->sets.n ? o->sets.n : 1, sizeof *sets);
    bool ok = sets != NULL;
    for (size_t s = 0; ok && s < o->sets.n; s++) {
        ok = (sets[s].opts = scan_set_options(o->sets.v[s])) != NULL;
        sets[s].n = json_array_size(o->sets.v[s]);
    }
    o->exact_sets = sets;
    return ok ? 0 : -1;
}

static void free_sets(scan_opts *o)
{
    for (size_t s = 0; o->exact_sets && s < o->sets.n; s++) free(o->exact_sets[s].opts);
    free(o->exact_sets);
    o->exact_sets = NULL;
}

/* --exact: every file built with every option set (see warm/scan_exact.h); NULL
 * with *rc set when that fails. */
static scan_exact_file *exact_scan(scan_opts *o, const scan_source_list *list, int *rc)
{
    scan_exact_file *files = calloc(list->n ? list->n : 1, sizeof *files);
    scan_exact_in in = {.files = list, .sets = o->exact_sets, .n_sets = o->sets.n, .macros = o->macros,
                        .n_macros = o->n_macros, .jobs = o->jobs, .quiet = o->quiet, .nvcc = o->nvcc};
    if (!files) cli_error("scan: out of memory");
    *rc = files ? scan_exact_run(&in, files) : CLI_FAIL;
    if (*rc == CLI_OK) return files;
    free(files);
    return NULL;
}

/* --language: only the sources in those languages (host code, for the
 * programs it holds, with OpenCL or CUDA). */
static void keep_languages(scan_source_list *list, unsigned only)
{
    size_t kept = 0;
    unsigned host = 1u << CCKEY_LANG_OPENCL | 1u << CCKEY_LANG_CUDA;
    for (size_t i = 0; i < list->n; i++) {
        if (((only >> list->langs[i]) & 1) || (list->langs[i] == CCKEY_LANG_HOST && (only & host))) {
            list->paths[kept] = list->paths[i];
            list->named[kept] = list->named[i];
            list->langs[kept++] = list->langs[i];
        } else {
            free(list->paths[i]);
        }
    }
    list->n = kept;
}

/* The folder the manifest will be read from, which its paths are relative
 * to, into base (PATH_MAX): false when it cannot be resolved. */
static bool output_base(const scan_opts *o, char *base)
{
    if (o->output && strcmp(o->output, "-") != 0) {
        char *copy = strdup(o->output);
        bool ok = copy && realpath(dirname(copy), base);
        free(copy);
        return ok;
    }
    return getcwd(base, PATH_MAX) != NULL;
}

/* What the scan as a whole leaves to say: no entries at all (unless
 * --language left no file, said already), entries left without a device. */
static void closing_warnings(const scan_opts *o, const scan_source_list *list, size_t found, size_t entries)
{
    if (o->quiet) return;
    size_t kernel_files = 0;
    for (size_t i = 0; i < list->n; i++) kernel_files += list->langs[i] != CCKEY_LANG_HOST;
    if (entries == 0 && (list->n || !found))
        cli_warn("scan: no entry points found in %zu source file%s", kernel_files, kernel_files == 1 ? "" : "s");
    static const char *const label[] = {"", "OpenCL", "CUDA", "HIP", "Metal", "GLSL", "HLSL"};
    for (size_t l = 1; l < CCKEY_LANG_HOST; l++)
        if (o->skipped[l])
            cli_warn("scan: %zu %s entry point%s skipped: no %s device %s; pass --device %s:ID to name one%s",
                     o->skipped[l], label[l], o->skipped[l] == 1 ? "" : "s", label[l],
                     o->named ? "was named" : "here", scan_lang_name((scan_lang)l),
                     o->named ? ", or --language to leave them out" : "");
}

static int run(scan_opts *o, char **paths, size_t n_paths)
{
    scan_source_list list;
    char err[512];
    if (scan_find_sources(paths, n_paths, &list, err, sizeof err) != 0) {
        cli_error("scan: %s", err);
        return CLI_USAGE;
    }
    size_t found = list.n;
    if (o->only) keep_languages(&list, o->only);
    if (o->only && list.n == 0 && found && !o->quiet)
        cli_warn("scan: none of the %zu source file%s is in the languages given (--language)", found,
                 found == 1 ? "" : "s");
    /* Headers are part of the files that include them. */
    if (scan_drop_included(&list) < 0 || make_sets(o) != 0) {
        cli_error("scan: out of memory");
        scan_source_list_free(&list);
        free_sets(o);
        return CLI_FAIL;
    }
    /* Paths in the manifest are relative to the folder it will be read from. */
    char base[PATH_MAX];
    cli_output out;
    if (!output_base(o, base)) {
        cli_error("scan: cannot resolve the output's folder: %s", strerror(errno));
        scan_source_list_free(&list);
        free_sets(o);
        return CLI_FAIL;
    }
    if (cli_output_open(&out, o->output) != 0) {
        scan_source_list_free(&list);
        free_sets(o);
        return CLI_FAIL;
    }
    cli_json_rows_start(&o->rows, out.f, o->list && o->fmt == CLI_JSON, CLI_JSON_COMPACT, true);
    int rc = CLI_OK;
    size_t entries = 0;
    scan_exact_file *exact = o->exact ? exact_scan(o, &list, &rc) : NULL;
    for (size_t i = 0; i < list.n && rc == CLI_OK; i++) {
        /* A manifest is JSON, which cannot name such a file: skip it, say so. */
        if (!cli_utf8_ok(list.paths[i])) {
            char shown[PATH_MAX];
            cli_warn("scan: skipping %s: its name is not UTF-8, which a manifest cannot hold",
                     cli_utf8_escape(list.paths[i], shown, sizeof shown));
            continue;
        }
        if (!exact || exact[i].text) {
            rc = scan_listed_file(o, list.paths[i], list.langs[i], base, out.f, &entries);
            continue;
        }
        rc = emit_file(o, list.paths[i], list.langs[i], base, out.f, &exact[i].r, exact[i].in_set);
        entries += exact[i].r.n;
    }
    if (exact) scan_exact_free(exact, list.n);
    free(exact);
    if (rc == CLI_OK) closing_warnings(o, &list, found, entries);
    cli_json_rows_end(&o->rows, rc == CLI_OK);
    if (rc == CLI_OK) rc = cli_output_commit(&out) == 0 ? CLI_OK : CLI_FAIL;
    else cli_output_abort(&out);
    scan_source_list_free(&list);
    free_sets(o);
    return rc;
}

static void bad_language(const char *bad, size_t len)
{
    char known[256];
    scan_langs_known(known, sizeof known);
    const char *guess = scan_langs_suggest(bad, len);
    cli_error("scan: unknown language \"%.*s\" (known: %s)%s%s%s", (int)len, bad, known, guess ? "; did you mean " : "",
              guess ? guess : "", guess ? "?" : "");
}

/* -d cdua:ID: a prefix one edit from a language is likely a typo, although
 * it is taken as part of the identity. */
static void warn_prefix(const char *arg, const char *id)
{
    const char *colon = strchr(arg, ':');
    const char *guess = id == arg && colon ? scan_langs_suggest(arg, (size_t)(colon - arg)) : NULL;
    if (guess && !cli_quiet)
        cli_warn("scan: -d %s: \"%.*s\" is not a language, so it is part of the identity; did you mean %s:?", arg,
                 (int)(colon - arg), arg, guess);
}

/* Option values that need checking, each: -1 when taken, else the exit code
 * (CLI_USAGE with the error printed, CLI_FAIL when out of memory). */
#define SCAN_NEXT (-1)

static int scan_oom(void)
{
    cli_error("scan: out of memory");
    return CLI_FAIL;
}

static int opt_device(scan_opts *o, const char *arg)
{
    unsigned langs;
    const char *id;
    if (scan_device_spec(arg, &langs, &id) != 0) {
        cli_error("scan: --device wants a non-empty identity, as [LANGUAGES:]ID");
        return CLI_USAGE;
    }
    warn_prefix(arg, id);
    if (add_device(o, id, langs) != 0) return scan_oom();
    o->named = true;
    return SCAN_NEXT;
}

static int opt_language(scan_opts *o, const char *arg)
{
    const char *bad;
    size_t bad_len;
    unsigned m = scan_langs_parse(arg, strlen(arg), &bad, &bad_len);
    if (!m) {
        bad_language(bad, bad_len);
        return CLI_USAGE;
    }
    o->only |= m;
    return SCAN_NEXT;
}

static int opt_kernel_macro(scan_opts *o, const char *arg)
{
    const char *p = arg;
    bool word = *p && !isdigit((unsigned char)*p);
    for (; *p; p++) word &= isalnum((unsigned char)*p) || *p == '_';
    if (!word) {
        cli_error("scan: --kernel-macro wants an identifier, not \"%s\"", arg);
        return CLI_USAGE;
    }
    const char **m = realloc(o->macros, (o->n_macros + 1) * sizeof *m);
    if (!m) return scan_oom();
    o->macros = m;
    o->macros[o->n_macros++] = arg;
    return SCAN_NEXT;
}

static int opt_nvcc(scan_opts *o, const char *arg)
{
    if (strcmp(arg, "none") != 0 && access(arg, X_OK) != 0) {
        cli_error("scan: --nvcc %s: %s", arg, *arg ? strerror(errno) : "give a path or none");
        return CLI_USAGE;
    }
    o->nvcc = arg;
    return SCAN_NEXT;
}

static int opt_jobs(scan_opts *o, const char *arg)
{
    unsigned long j;
    if (!cli_parse_uint(arg, 1, 1024, &j)) {
        cli_error("scan: --jobs wants a number from 1 to 1024, not \"%s\"", arg);
        return CLI_USAGE;
    }
    o->jobs = (unsigned)j;
    return SCAN_NEXT;
}

static int opt_sets(scan_opts *o, const char *arg)
{
    int r = scan_sets_add(&o->sets, arg, "-O");
    if (r == CLI_USAGE) return CLI_USAGE;
    return r != 0 ? scan_oom() : SCAN_NEXT;
}

enum { OPT_OPTIONS_FILE = 256, OPT_LIST, OPT_FORMAT, OPT_JSON, OPT_EXACT, OPT_NVCC, OPT_LANGUAGE };

/* One option of scan's command line (c as cli_getopt returned it). */
static int scan_option(scan_opts *o, int c, const char *arg, bool *fmt_given)
{
    switch (c) {
    case 'd': return opt_device(o, arg);
    case OPT_LANGUAGE: return opt_language(o, arg);
    case 'O': return opt_sets(o, arg);
    case OPT_FORMAT:
        if (!cli_format_parse("scan", arg, CLI_FMT_ALL, &o->fmt)) return CLI_USAGE;
        *fmt_given = true;
        return SCAN_NEXT;
    case OPT_JSON: o->fmt = CLI_JSON, *fmt_given = true; return SCAN_NEXT;
    case OPT_OPTIONS_FILE: {
        int rc = scan_sets_read(&o->sets, arg);
        return rc == CLI_OK ? SCAN_NEXT : rc;
    }
    case 'o': o->output = arg; return SCAN_NEXT;
    case 'k': return opt_kernel_macro(o, arg);
    case OPT_LIST: o->list = true; return SCAN_NEXT;
    case OPT_EXACT: o->exact = true; return SCAN_NEXT;
    case OPT_NVCC: return opt_nvcc(o, arg);
    case 'j': return opt_jobs(o, arg);
    case 'q': o->quiet = cli_quiet = true; return SCAN_NEXT;
    case 'h': scan_usage(stdout); return CLI_OK;
    default: return CLI_USAGE;
    }
}

/* What the options leave to check, then the scan itself. */
static int scan_files(scan_opts *o, bool fmt_given, char **paths, size_t n)
{
    if (fmt_given && !o->list && o->fmt != CLI_JSONL) {
        cli_error("scan: a manifest is JSON Lines; --format %s is for --list", o->fmt == CLI_JSON ? "json" : "text");
        return CLI_USAGE;
    }
    if (n == 0) {
        cli_error("scan: give at least one file or folder (see 'cckey scan --help')");
        return CLI_USAGE;
    }
    if (!o->list && o->n_devices == 0 && default_devices(o) != 0) return scan_oom();
    if (o->sets.n == 0 && scan_sets_add(&o->sets, "", "-O") != 0) return scan_oom();
    return run(o, paths, n);
}

int cli_cmd_scan(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"device", required_argument, NULL, 'd'},  {"options", required_argument, NULL, 'O'},
        {"options-file", required_argument, NULL, OPT_OPTIONS_FILE},
        {"output", required_argument, NULL, 'o'},  {"list", no_argument, NULL, OPT_LIST},
        {"quiet", no_argument, NULL, 'q'},         {"help", no_argument, NULL, 'h'},
        {"format", required_argument, NULL, OPT_FORMAT}, {"json", no_argument, NULL, OPT_JSON},
        {"kernel-macro", required_argument, NULL, 'k'},
        {"exact", no_argument, NULL, OPT_EXACT},   {"jobs", required_argument, NULL, 'j'},
        {"nvcc", required_argument, NULL, OPT_NVCC}, {"language", required_argument, NULL, OPT_LANGUAGE},
        {NULL, 0, NULL, 0}};
    scan_opts o = {0};
    int rc = SCAN_NEXT, c;
    optind = 1;
    bool fmt_given = false;
    while (rc == SCAN_NEXT && (c = cli_getopt("scan", argc, argv, "d:O:o:k:j:qh", longopts)) != -1)
        rc = scan_option(&o, c, optarg, &fmt_given);
    if (rc == SCAN_NEXT) rc = scan_files(&o, fmt_given, argv + optind, (size_t)(argc - optind));
    for (size_t i = 0; i < o.n_devices; i++) free(o.devices[i].id);
    scan_sets_free(&o.sets);
    free(o.devices);
    free(o.macros);
    return rc;
}
