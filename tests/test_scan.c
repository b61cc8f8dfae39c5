/* The kernel scanner: fixtures with tricky comments, strings, macros and
 * conditionals (tests/data/scan), Itanium names checked against NVRTC's
 * output (recorded here; test_scan_nvrtc checks them live), the folder walk
 * and warm's option-to-flag mapping. */
#include "cli/scan/scan.h"
#include "cli/scan/lexer.h"
#include "cli/warm/warm.h"
#include "support.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void expect(const scan_result *r, const char *const *names, size_t n, const char *what)
{
    for (size_t i = 0; i < r->n && i < n; i++)
        cr_expect_str_eq(r->entries[i].name, names[i], "%s: entry %zu", what, i);
    cr_assert_eq(r->n, n, "%s: %zu entries, expected %zu", what, r->n, n);
    for (size_t i = 0; i < r->n; i++) cr_assert_null(strstr(r->entries[i].name, "fake"), "%s: listed %s", what,
                                                     r->entries[i].name);
}

static void scan_fixture(const char *name, scan_lang lang, scan_result *r)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", CCKEY_SCAN_DATA, name);
    size_t len;
    char *src = cckey_test_read_file(path, &len);
    cr_assert_not_null(src, "%s", path);
    cr_assert_eq(scan_source(src, len, lang, r), 0);
    free(src);
}

Test(scan, opencl_comments_strings_macros_conditionals)
{
    scan_result r;
    scan_fixture("tricky.cl", CCKEY_LANG_OPENCL, &r);
    /* No -DSOME_FLAG: the #else group is the one a build without flags compiles. */
    static const char *const want[] = {"attr1",       "attr2",        "spliced",       "taken_else", "live_if1",
                                       "maybe_b",     "nested_live",  "after_string",  "proto_then_def"};
    expect(&r, want, sizeof want / sizeof *want, "tricky.cl");
    cr_assert_eq(r.entries[0].line, 15);
    cr_assert_eq(r.entries[2].line, 19, "a splice must not shift line numbers");
    cr_assert_eq(r.entries[3].line, 29);
    cr_assert_eq(r.entries[8].line, 61, "the definition, not the prototype");
    cr_assert_eq(r.n_warnings, 0);
    scan_result_free(&r);
}

Test(scan, cuda_names_linkage_and_warnings)
{
    scan_result r;
    scan_fixture("tricky.cu", CCKEY_LANG_CUDA, &r);
    /* anon_kernel: nvcc names its namespace per file, so it is skipped
     * with a warning rather than listed under a name nvcc would not give. */
    static const char *const want[] = {"plain_c", "block_c1", "block_c2", "_Z7cxx_onePfPKfi",
                                       "_ZN2nn3two12in_namespaceEPNS_1TES2_", "_Z7boundedP6float4j",
                                       "_Z5weirdPN2nn1TE"};
    expect(&r, want, sizeof want / sizeof *want, "tricky.cu");
    cr_assert_str_eq(r.entries[4].source_name, "in_namespace");
    cr_assert_eq(r.n_warnings, 2, "anonymous namespace, template without instances");
    for (size_t i = 0; i < 2; i++) cr_assert(strstr(r.warnings[i], "use --exact"), "%s", r.warnings[i]);
    cr_assert(strstr(r.warnings[0], "anon_kernel"));
    cr_assert(strstr(r.warnings[1], "templated"));
    scan_result_free(&r);
}

/* Expected names: the .entry names NVRTC 13 printed for mangle.cu. */
Test(scan, itanium_names_match_nvrtc)
{
    scan_result r;
    scan_fixture("mangle.cu", CCKEY_LANG_CUDA, &r);
    static const char *const want[] = {
        "_Z6m_voidv",
        "_Z7m_void2v",
        "_Z10m_builtinsbcahstijlmxyfdlsjx",
        "_Z10m_pointersPfS_PKfS1_PS_PKS1_",
        "_Z12m_qualifiersPfPKfPViPVKiiPi",
        "_Z9m_classes1SPS_PKS_RS1_1EPS4_",
        "_Z9m_vectorsP6float4S_4int2P6uchar44dim3P7double2",
        "_Z10m_typedefsmfPfy4Anony",
        "_Z8m_arraysPiPfPK1S",
        "_ZN2ns7m_in_nsEPNS_5InnerES1_S0_1S",
        "_ZN2ns6deeper8m_deeperEPNS_5InnerEPfS3_",
        "_Z5m_refRiRKfR1S",
    };
    expect(&r, want, sizeof want / sizeof *want, "mangle.cu");
    cr_assert_eq(r.n_warnings, 0, "%s", r.n_warnings ? r.warnings[0] : "");
    scan_result_free(&r);

    /* The example suite's C++ entry point, as its manifest names it. */
    const char *hist = "__global__ void histogram256(const unsigned char *data, size_t n, unsigned int *bins) {}";
    cr_assert_eq(scan_source(hist, strlen(hist), CCKEY_LANG_CUDA, &r), 0);
    cr_assert_eq(r.n, 1);
    cr_assert_str_eq(r.entries[0].name, "_Z12histogram256PKhmPj");
    scan_result_free(&r);
}

Test(scan, metal_kernels_and_host_name)
{
    scan_result r;
    scan_fixture("shapes.metal", CCKEY_LANG_METAL, &r);
    static const char *const want[] = {"add_arrays", "attr_style", "renamed_entry"};
    expect(&r, want, 3, "shapes.metal");
    cr_assert_str_eq(r.entries[2].source_name, "original_name");
    scan_result_free(&r);
}

Test(scan, malformed_and_edge_inputs)
{
    static const struct {
        const char *src;
        scan_lang lang;
        const char *first;   /* NULL: no entry */
        unsigned line;
    } cases[] = {
        {"", CCKEY_LANG_OPENCL, NULL, 0},
        {"/* never closed __kernel void a(){}", CCKEY_LANG_OPENCL, NULL, 0},
        {"#if 0\n__kernel void a(){}\n", CCKEY_LANG_OPENCL, NULL, 0},   /* no #endif */
        {"char c = '\\''; __kernel void q(){}", CCKEY_LANG_OPENCL, "q", 1},
        {"const char *s = \"\\\"__kernel void no(){}\"; __kernel void yes(){}", CCKEY_LANG_OPENCL, "yes", 1},
        {"// x \\\r\n__kernel void no(){}\r\n__kernel void crlf(){}\r\n", CCKEY_LANG_OPENCL, "crlf", 3},
        {"__kernel void unterminated(){ \"abc\n}", CCKEY_LANG_OPENCL, "unterminated", 1},
        {"__kernel", CCKEY_LANG_OPENCL, NULL, 0},
        {"__kernel void (", CCKEY_LANG_OPENCL, NULL, 0},
        {"__global__ void k(int", CCKEY_LANG_CUDA, NULL, 0},
        {"}}}} __global__ void k() {}", CCKEY_LANG_CUDA, "_Z1kv", 1},
        {"#if 1\n#else\n__kernel void dead(){}\n#elif 1\n__kernel void dead2(){}\n#endif\n__kernel void z(){}",
         CCKEY_LANG_OPENCL, "z", 7},
        {"int x = 1'000; __kernel void sep(){}", CCKEY_LANG_OPENCL, "sep", 1},
        {"void f() { __global__ void inner(); } extern \"C++\" { __global__ void g(){} }", CCKEY_LANG_CUDA, "_Z1gv",
         1},
        {"__global__ void kernel(float *p) {}", CCKEY_LANG_CUDA, "_Z6kernelPf", 1},
        {"kernel void k(global float *p) {} /* .cl */", CCKEY_LANG_CUDA, NULL, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        scan_result r;
        cr_assert_eq(scan_source(cases[i].src, strlen(cases[i].src), cases[i].lang, &r), 0);
        if (!cases[i].first) {
            cr_assert_eq(r.n, 0, "case %zu: found %s", i, r.n ? r.entries[0].name : "");
        } else {
            cr_assert_geq(r.n, 1, "case %zu: nothing found", i);
            cr_assert_str_eq(r.entries[0].name, cases[i].first, "case %zu", i);
            cr_assert_eq(r.entries[0].line, cases[i].line, "case %zu", i);
            cr_assert_eq(r.n, 1, "case %zu: %zu entries", i, r.n);
        }
        scan_result_free(&r);
    }
}

Test(scan, languages_and_folder_walk)
{
    cr_assert_eq(scan_lang_of_path("a/b.cl"), CCKEY_LANG_OPENCL);
    cr_assert_eq(scan_lang_of_path("a/b.cuh"), CCKEY_LANG_CUDA);
    cr_assert_eq(scan_lang_of_path("x.metal"), CCKEY_LANG_METAL);
    cr_assert_eq(scan_lang_of_path("x.hip"), CCKEY_LANG_HIP);
    cr_assert_eq(scan_lang_of_path("x.c"), CCKEY_LANG_NONE);
    cr_assert_eq(scan_lang_of_path("dir.cl/file"), CCKEY_LANG_NONE);
    cr_assert_eq(scan_lang_from_name("cuda"), CCKEY_LANG_CUDA);
    cr_assert_eq(scan_lang_from_name("fortran"), CCKEY_LANG_NONE);

    char *paths[] = {CCKEY_SCAN_DATA, CCKEY_SCAN_DATA "/tricky.cl"};   /* overlapping on purpose */
    scan_source_list l;
    char err[256];
    cr_assert_eq(scan_find_sources(paths, 2, &l, err, sizeof err), 0, "%s", err);
    static const char *const want[] = {"mangle.cu", "shapes.metal", "tricky.cl", "tricky.cu"};
    cr_assert_eq(l.n, 4);
    for (size_t i = 0; i < 4; i++) {
        const char *base = strrchr(l.paths[i], '/') + 1;
        cr_assert_str_eq(base, want[i]);
    }
    scan_source_list_free(&l);

    char *bad[] = {CCKEY_SCAN_DATA "/does-not-exist"};
    cr_assert_eq(scan_find_sources(bad, 1, &l, err, sizeof err), -1);
    cr_assert(strstr(err, "does-not-exist"));
    char *not_kernel[] = {CCKEY_SCAN_DATA "/../../../CMakeLists.txt"};
    cr_assert_eq(scan_find_sources(not_kernel, 1, &l, err, sizeof err), -1);
    cr_assert(strstr(err, "not a kernel source"));
    /* Host code may hold programs as strings: named, it is read as such. */
    char *host[] = {CCKEY_SCAN_DATA "/../../test_scan.c"};
    cr_assert_eq(scan_find_sources(host, 1, &l, err, sizeof err), 0, "%s", err);
    cr_assert_eq(l.n, 1);
    cr_assert_eq(l.langs[0], CCKEY_LANG_HOST);
    cr_assert(l.named[0]);
    scan_source_list_free(&l);
}

static cckey_option opt(const char *k, const char *v) { return (cckey_option){{k, strlen(k)}, {v, strlen(v)}}; }

/* The flags warm makes of o[0..n) (for NVRTC when nvrtc), which must
 * succeed and join to want. */
static warm_flags flags_as(const cckey_option *o, size_t n, bool nvrtc, const char *want)
{
    warm_flags f;
    char why[256] = "";
    cr_assert_eq(warm_flags_make(o, n, nvrtc, &f, why, sizeof why), 0, "%s", why);
    cr_assert_str_eq(f.joined, want);
    return f;
}

Test(scan, warm_option_flags)
{
    cckey_option o[] = {opt("-cl-fast-relaxed-math", ""), opt("-O", "3"), opt("-DBLOCK", "64"), opt("-D", "N=4"),
                        opt("-DX=", "y"), opt("-cl-std", "CL2.0")};
    warm_flags f = flags_as(o, 6, false, "-DN=4 -DBLOCK=64 -DX=y -O3 -cl-fast-relaxed-math -cl-std=CL2.0");
    cr_assert_eq(f.argc, 6);
    warm_flags_free(&f);

    cckey_option c[] = {opt("arch", "sm_90"), opt("-O", "3"), opt("--use_fast_math", "")};
    f = flags_as(c, 3, true, "--use_fast_math -O3 --gpu-architecture=sm_90");
    cr_assert(f.has_arch);
    warm_flags_free(&f);

    char why[256];
    cckey_option spaced[] = {opt("-I", "/a path")};
    cr_assert_eq(warm_flags_make(spaced, 1, false, &f, why, sizeof why), -1);
    cr_assert(strstr(why, "white space"));
    cr_assert_eq(warm_flags_make(spaced, 1, true, &f, why, sizeof why), 0, "NVRTC takes flags one by one");
    cr_assert_str_eq(f.argv[0], "-I/a path");
    warm_flags_free(&f);
    cckey_option nul[] = {{{"-D", 2}, {"A\0B", 3}}};
    cr_assert_eq(warm_flags_make(nul, 1, true, &f, why, sizeof why), -1);
    cr_assert_eq(warm_flags_make(NULL, 0, false, &f, why, sizeof why), 0);
    cr_assert_str_eq(f.joined, "");
    warm_flags_free(&f);
}

/* Words to pairs, as scan -O and key -O make them. */
typedef struct pairs_out {
    char text[512];
} pairs_out;

static int collect(void *user, const char *k, size_t kl, const char *v, size_t vl)
{
    pairs_out *p = user;
    size_t n = strlen(p->text);
    snprintf(p->text + n, sizeof p->text - n, "[%.*s|%.*s]", (int)kl, k, (int)vl, v);
    return 0;
}

static int tokenize(const char *const *w, size_t n, pairs_out *out, char *why)
{
    size_t lens[32];
    for (size_t i = 0; i < n; i++) lens[i] = strlen(w[i]);
    out->text[0] = '\0';
    return warm_flags_tokenize(w, lens, n, collect, out, why, 256);
}

Test(scan, flags_that_take_an_argument_become_pairs)
{
    pairs_out p;
    char why[256];
    const char *w[] = {"-I", "/a b", "-I/c", "-I=/d", "-D", "N=4", "-DM=1", "-O3", "-O", "-include", "h.h",
                       "--pre-include=p.h", "-cl-std=CL2.0", "-DX=", "a=", "-arch", "sm_90"};
    cr_assert_eq(tokenize(w, 17, &p, why), 0, "%s", why);
    cr_assert_str_eq(p.text, "[-I|/a b][-I|/c][-I|/d][-D|N=4][-D|M=1][-O|3][-O|][-include|h.h][--pre-include|p.h]"
                             "[-cl-std|CL2.0][-D|X=][a=|][-arch|sm_90]");
    const char *missing[] = {"-DX", "-isystem"};
    cr_assert_eq(tokenize(missing, 2, &p, why), CCKEY_FLAGS_BAD);
    cr_assert(strstr(why, "-isystem needs an argument"), "%s", why);
    /* The argument is the next word whatever it looks like, as compilers take it. */
    const char *dash[] = {"-Xptxas", "-v"};
    cr_assert_eq(tokenize(dash, 2, &p, why), 0);
    cr_assert_str_eq(p.text, "[-Xptxas|-v]");
}

Test(scan, option_sets_no_build_can_honour)
{
    char why[512];
    cckey_option ok[] = {opt("-I", "/z"), opt("-I", "/a"), opt("-D", "X"), opt("-U", "X"), opt("-D", "Y=1"),
                         opt("-UY", ""), opt("-O", "")};
    cr_assert_eq(warm_options_check(ok, 7, why, sizeof why), 0, "%s", why);
    cckey_option empty[] = {opt("-I", "")};
    cr_assert_eq(warm_options_check(empty, 1, why, sizeof why), CCKEY_FLAGS_BAD);
    cr_assert(strstr(why, "-I needs an argument"), "%s", why);
    cckey_option undef_first[] = {opt("-U", "X"), opt("-D", "X=2")};
    cr_assert_eq(warm_options_check(undef_first, 2, why, sizeof why), CCKEY_FLAGS_BAD);
    cckey_option old_style[] = {opt("-Izz", ""), opt("-Iaa", "")};
    cr_assert_eq(warm_options_check(old_style, 2, why, sizeof why), CCKEY_FLAGS_BAD);
    cr_assert(strstr(why, "[\"-Izz\", \"\"]"), "%s", why);
    cckey_option mixed[] = {opt("-I", "/z"), opt("--include-path", "/a")};
    cr_assert_eq(warm_options_check(mixed, 2, why, sizeof why), CCKEY_FLAGS_BAD);
    cckey_option in_order[] = {opt("-Iaa", ""), opt("-Izz", "")};
    cr_assert_eq(warm_options_check(in_order, 2, why, sizeof why), 0, "already in canonical order");
}

Test(scan, warm_builds_tokenized_flags_in_order)
{
    cckey_option o[] = {opt("-isystem", "/s"), opt("-I", "/z"), opt("-idirafter", "/l"), opt("-I", "/a"),
                        opt("-iquote", "/q"), opt("-include", "h.h")};
    warm_flags f = flags_as(o, 6, false, "-I/z -I/a -idirafter /l -include h.h -iquote /q -isystem /s");
    const char *dirs[8];
    cr_assert_eq(warm_flags_include_dirs(&f, dirs, 8), 5);
    const char *want[] = {"/q", "/z", "/a", "/s", "/l"};   /* clang's search order */
    for (int i = 0; i < 5; i++) cr_assert_str_eq(dirs[i], want[i]);
    warm_flags_free(&f);
    char why[256];
    cr_assert_eq(warm_flags_make(o + 5, 1, true, &f, why, sizeof why), 0);
    cr_assert_str_eq(f.joined, "-include=h.h", "NVRTC takes -include=FILE");
    warm_flags_free(&f);
    cckey_option arch[] = {opt("-arch", "sm_90")};
    cr_assert_eq(warm_flags_make(arch, 1, true, &f, why, sizeof why), 0);
    cr_assert(f.has_arch);
    cr_assert_str_eq(f.joined, "-arch=sm_90");
    warm_flags_free(&f);
    cckey_option none[] = {opt("-D", "")};
    cr_assert_eq(warm_flags_make(none, 1, false, &f, why, sizeof why), -1);
    cr_assert(strstr(why, "-D needs an argument"), "%s", why);
}

/* The toolkit beside NVRTC, else CUDA_HOME's, on a made-up layout. */
Test(scan, cuda_toolkit_include_folders)
{
    char root[64], p[256], dirs[2][CCKEY_TOOLKIT_PATH], buf[64];
    cr_assert(cckey_test_make_dir(root, "toolkit"));
    const char *made[] = {"/t", "/t/targets", "/t/targets/x86_64-linux", "/t/targets/x86_64-linux/lib",
                          "/t/targets/x86_64-linux/include", "/t/targets/x86_64-linux/include/cccl", "/h",
                          "/h/include", "/h/lib64", "/t/targets/x86_64-linux/include/cccl/cuda",
                          "/t/targets/x86_64-linux/include/cccl/cuda/std",
                          "/t/targets/x86_64-linux/include/cccl/cuda/std/__cccl"};
    for (size_t i = 0; i < sizeof made / sizeof *made; i++) {
        snprintf(p, sizeof p, "%s%s", root, made[i]);
        cr_assert_eq(mkdir(p, 0700), 0, "%s", p);
    }
    const char *files[] = {"/t/targets/x86_64-linux/lib/libnvrtc.so.13", "/t/targets/x86_64-linux/include/cuda_runtime_api.h",
                           "/h/include/cuda_runtime_api.h", "/h/lib64/libnvrtc.so"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s%s", root, files[i]);
        cr_assert(cckey_test_write_file(p, "x", 1));
    }
    snprintf(p, sizeof p, "%s/t/targets/x86_64-linux/include/cccl/cuda/std/__cccl/version.h", root);
    cr_assert(cckey_test_write_file(p, "#pragma once\n#define CCCL_VERSION 3000001\n", 41));

    snprintf(p, sizeof p, "%s/t/targets/x86_64-linux/lib/libnvrtc.so.13", root);
    cr_assert_eq(warm_cuda_toolkit_find(p, dirs, 2), 2);
    char want[256];
    snprintf(want, sizeof want, "%s/t/targets/x86_64-linux/include", root);
    cr_assert_str_eq(dirs[0], want);
    cr_assert_str_eq(dirs[1], strcat(want, "/cccl"));
    warm_cccl_version(dirs[0], buf, sizeof buf);
    cr_assert_str_eq(buf, "CCCL 3.0.1");
    warm_nvrtc_build(p, buf, sizeof buf);
    cr_assert_str_eq(buf, "", "not an ELF file: no build");

    /* No headers beside the library (a pip wheel's NVRTC): CUDA_HOME's. */
    snprintf(p, sizeof p, "%s/h", root);
    cr_assert_eq(warm_set_cuda_home(p), 0);
    snprintf(p, sizeof p, "%s/t/targets/x86_64-linux/include/cuda_runtime_api.h", root);
    cr_assert_eq(remove(p), 0);
    snprintf(p, sizeof p, "%s/t/targets/x86_64-linux/lib/libnvrtc.so.13", root);
    cr_assert_eq(warm_cuda_toolkit_find(p, dirs, 2), 1);
    snprintf(want, sizeof want, "%s/h/include", root);
    cr_assert_str_eq(dirs[0], want);
    cr_assert_eq(warm_set_cuda_home(NULL), 0);
    cr_assert_eq(warm_cuda_toolkit_find(p, dirs, 2), 0);
    cr_assert(cckey_test_remove_tree(root));
}
