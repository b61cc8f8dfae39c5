/* The scanner's CUDA names against NVRTC itself: compile the fixtures to PTX
 * and compare the .entry names with what the scanner lists. NVRTC runs on
 * the CPU (no GPU needed); the suite skips where libnvrtc is not installed. */
#include "cli/scan/scan.h"
#include "support.h"

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*create_fn)(void **, const char *, const char *, int, const char *const *, const char *const *);
typedef int (*compile_fn)(void *, int, const char *const *);
typedef int (*size_fn)(void *, size_t *);
typedef int (*get_fn)(void *, char *);
typedef int (*destroy_fn)(void **);

/* The PTX's .entry names, newline-separated, or NULL when NVRTC is absent. */
static char *ptx_entries(const char *src)
{
    void *h = dlopen("libnvrtc.so", RTLD_NOW);
    if (!h) h = dlopen("/usr/local/cuda/lib64/libnvrtc.so", RTLD_NOW);
    if (!h) return NULL;
    create_fn create = (create_fn)dlsym(h, "nvrtcCreateProgram");
    compile_fn compile = (compile_fn)dlsym(h, "nvrtcCompileProgram");
    size_fn ptx_size = (size_fn)dlsym(h, "nvrtcGetPTXSize"), log_size = (size_fn)dlsym(h, "nvrtcGetProgramLogSize");
    get_fn ptx = (get_fn)dlsym(h, "nvrtcGetPTX"), log = (get_fn)dlsym(h, "nvrtcGetProgramLog");
    destroy_fn destroy = (destroy_fn)dlsym(h, "nvrtcDestroyProgram");
    cr_assert(create && compile && ptx_size && ptx && destroy && log && log_size);
    void *prog;
    cr_assert_eq(create(&prog, src, "fixture.cu", 0, NULL, NULL), 0);
    const char *opts[] = {"--gpu-architecture=compute_75"};
    int r = compile(prog, 1, opts);
    if (r != 0) {
        size_t n = 0;
        log_size(prog, &n);
        char *l = calloc(1, n + 1);
        log(prog, l);
        cr_assert_fail("NVRTC failed on the fixture: %s", l);
    }
    size_t n = 0;
    cr_assert_eq(ptx_size(prog, &n), 0);
    char *text = calloc(1, n + 1);
    cr_assert_eq(ptx(prog, text), 0);
    destroy(&prog);
    char *out = calloc(1, n + 1);
    for (char *p = text; (p = strstr(p, ".entry ")); p += 7) {
        char *name = p + 7, *end = strchr(name, '(');
        if (!end) break;
        strncat(out, name, (size_t)(end - name));
        strcat(out, "\n");
    }
    free(text);
    return out;
}

static bool listed(const char *entries, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = entries; (p = strstr(p, name)); p++)
        if ((p == entries || p[-1] == '\n') && p[n] == '\n') return true;
    return false;
}

/* A fixture, the entry names NVRTC's PTX gives it, and what the scanner
 * finds in it; skips the test where libnvrtc is missing. */
static char *scan_with_ptx(const char *path, char **entries, scan_result *r)
{
    size_t len;
    char *src = cckey_test_read_file(path, &len);
    cr_assert_not_null(src);
    *entries = ptx_entries(src);
    if (!*entries) {
        free(src);
        cr_skip_test("libnvrtc is not installed");
    }
    cr_assert_eq(scan_source(src, len, CCKEY_LANG_CUDA, r), 0);
    return src;
}

Test(scan_nvrtc, every_scanned_name_is_a_ptx_entry_and_back)
{
    char *entries;
    scan_result r;
    char *src = scan_with_ptx(CCKEY_SCAN_DATA "/mangle.cu", &entries, &r);
    size_t n_ptx = 0;
    for (const char *p = entries; *p; p++) n_ptx += *p == '\n';
    cr_assert_eq(r.n, n_ptx, "scanner: %zu entries, PTX: %zu\n%s", r.n, n_ptx, entries);
    for (size_t i = 0; i < r.n; i++)
        cr_expect(listed(entries, r.entries[i].name), "%s is no PTX entry; PTX has:\n%s", r.entries[i].name, entries);
    scan_result_free(&r);
    free(entries);
    free(src);
}

Test(scan_nvrtc, tricky_fixture_names_exist)
{
    char *entries;
    scan_result r;
    char *src = scan_with_ptx(CCKEY_SCAN_DATA "/tricky.cu", &entries, &r);
    /* Every listed name must be exactly a PTX entry; what the scanner
     * cannot name (the anonymous namespace's kernel) it skips with a warning. */
    for (size_t i = 0; i < r.n; i++)
        cr_expect(listed(entries, r.entries[i].name), "%s is no PTX entry; PTX has:\n%s", r.entries[i].name, entries);
    cr_assert_eq(r.n, 7);
    scan_result_free(&r);
    free(entries);
    free(src);
}
