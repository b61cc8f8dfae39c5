/* The text scan of Vulkan compute shaders (host/cli/scan/shaders.c): GLSL's
 * main in compute shaders only, HLSL's [numthreads] functions by name, with
 * the kernel scanner's conventions (comments, strings, dead conditionals,
 * prototypes). Each case's expected names are written from the languages'
 * rules; test_vulkan.c checks the same files against the compiler. A plain
 * program: no device or compiler needed, so it runs everywhere. */
#include "check.h"
#include "cli/scan/shaders.h"

#include <string.h>

/* The names found, joined by spaces, each with ":LINE". */
static void expect(const char *src, int hlsl, bool comp, const char *want)
{
    scan_result r;
    int rc = hlsl ? scan_hlsl(src, strlen(src), &r) : scan_glsl(src, strlen(src), comp, &r);
    CHECK(rc == 0, "scan failed (%d)", rc);
    char got[512] = "";
    size_t k = 0;
    for (size_t i = 0; i < r.n; i++)
        k += (size_t)snprintf(got + k, sizeof got - k, "%s%s:%u", i ? " " : "", r.entries[i].name, r.entries[i].line);
    CHECK(strcmp(got, want) == 0, "got \"%s\", want \"%s\" in:\n%s", got, want, src);
    scan_result_free(&r);
}

static void glsl(void)
{
    /* A .comp file is a compute shader by its name. */
    expect("#version 450\nvoid main() {}\n", 0, true, "main:2");
    /* A .glsl file is one when it declares its workgroup size. */
    expect("#version 450\nlayout(local_size_x = 64) in;\nvoid main() { }\n", 0, false, "main:3");
    expect("#version 450\nlayout(local_size_x_id = 0, local_size_y = 2) in;\nvoid\nmain()\n{\n}\n", 0, false,
           "main:4");
    expect("#version 450\nlayout(location = 0) out vec4 c;\nvoid main() { c = vec4(1); }\n", 0, false, "");
    /* ... not in a comment, a string or a dead group, nor a prototype. */
    expect("// layout(local_size_x = 8) in;\n/* layout(local_size_x = 8) in; */\nvoid main() {}\n", 0, false, "");
    expect("#if 0\nlayout(local_size_x = 8) in;\n#endif\nvoid main() {}\n", 0, false, "");
    expect("layout(local_size_x = 8) in;\nvoid main();\n", 0, false, "");
    expect("layout(local_size_x = 8) in;\nvoid helper() { main(); }\n", 0, false, "");
    /* A main only inside a dead group, or inside a function body. */
    expect("#if 0\nvoid main() {}\n#endif\n", 0, true, "");
    expect("void f() { int main = 0; }\n", 0, true, "");
}

/* Another stage's main is warned about (with its line); a header is not. */
static void glsl_warnings(void)
{
    const char *frag = "#version 450\nlayout(location = 0) out vec4 c;\nvoid main() { c = vec4(1); }\n";
    const char *header = "uint mix32(uint x) { return x * 3u; }\n";
    scan_result r;
    CHECK(scan_glsl(frag, strlen(frag), false, &r) == 0 && r.n == 0 && r.n_warnings == 1, "fragment");
    CHECK(strncmp(r.warnings[0], "3: main is not a compute shader's", 33) == 0, "%s", r.warnings[0]);
    scan_result_free(&r);
    CHECK(scan_glsl(header, strlen(header), false, &r) == 0 && r.n == 0 && r.n_warnings == 0, "header");
    scan_result_free(&r);
    CHECK(scan_shader_none(CCKEY_LANG_GLSL, false) == NULL && scan_shader_none(CCKEY_LANG_GLSL, true),
          "why none");
}

static void hlsl(void)
{
    expect("RWStructuredBuffer<uint> b : register(u0);\n"
           "[numthreads(64, 1, 1)]\nvoid a(uint3 id : SV_DispatchThreadID) { b[id.x] = 1; }\n"
           "[numthreads(8, 8, 1)] void c(uint3 id : SV_DispatchThreadID)\n{\n}\n",
           1, false, "a:3 c:4");
    /* Other attributes around it, a semantic on the return value. */
    expect("[shader(\"compute\")]\n[numthreads(32,1,1)]\n[WaveSize(32)]\nvoid k(uint i : SV_GroupIndex) {}\n", 1,
           false, "k:4");
    expect("[numthreads(1,1,1)] uint r() : SV_Target { return 0; }\n", 1, false, "r:1");
    /* Not entries: unmarked functions, prototypes, comments, strings, dead
     * groups, attributes of other kinds. */
    expect("void helper() {}\n[numthreads(1,1,1)] void proto(uint3 i : SV_DispatchThreadID);\n", 1, false, "");
    expect("// [numthreads(1,1,1)] void x() {}\n/* [numthreads(1,1,1)] void y() {} */\n", 1, false, "");
    expect("static const char *s = \"[numthreads(1,1,1)] void z() {}\";\n", 1, false, "");
    expect("#if 0\n[numthreads(1,1,1)] void dead() {}\n#endif\n[unroll] void loop() {}\n", 1, false, "");
    /* Both groups of an unknown conditional: each name once, one body. */
    expect("#ifdef WIDE\n[numthreads(256,1,1)]\n#else\n[numthreads(64,1,1)]\n#endif\nvoid k(uint3 i : "
           "SV_DispatchThreadID) {}\n[numthreads(1,1,1)] void after() {}\n",
           1, false, "k:6 after:7");
    /* Marked names inside a function body are not definitions at file scope. */
    expect("void f() { [numthreads(1,1,1)] void g() {} }\n", 1, false, "");
}

static void paths(void)
{
    CHECK(scan_shader_path_is_comp("a/b.comp") && !scan_shader_path_is_comp("a.comp/b"), "comp");
    CHECK(scan_shader_path_is_glsl("x.glsl") && scan_shader_path_is_hlsl("x.hlsl"), "glsl, hlsl");
    CHECK(!scan_shader_path_is_hlsl("x.hlsli") && !scan_shader_path_is_glsl("x.glslx"), "not those");
}

int main(void)
{
    glsl();
    glsl_warnings();
    hlsl();
    paths();
    puts("test_scan_shaders: every check passed");
    return 0;
}
