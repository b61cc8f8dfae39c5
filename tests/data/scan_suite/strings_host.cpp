// Written for cckey's tests: host code that keeps its OpenCL programs as
// strings, the three ways suites write them.
#include <cstddef>
#define STRINGIFY(...) #__VA_ARGS__

// A raw string with a delimiter: the ")" inside does not end it.
static const char *kFill = R"CLC(
__kernel void fill(__global int *out, const int value) {
    out[get_global_id(0)] = value; // ")" is text here
}
)CLC";

// Adjacent literals with escapes: the program has real newlines and a tab.
static const char *kAxpy =
    "__kernel void axpy(const float a, __global const float *x,\n"
    "                   __global float *y) {\n"
    "    const size_t i = get_global_id(0);\n"
    "    y[i] += a * x[i];\t// a tab\n"
    "}\n";

// A stringizing macro: the preprocessor makes the argument one line.
static const char *kNeg = STRINGIFY(
    __kernel void negate(__global float *v) {
        v[get_global_id(0)] = -v[get_global_id(0)];
    }
);

// Not a program: a message that only mentions the word.
static const char *kHelp = "pick a __kernel by name with --kernel";

const char *program_source(int which) { return which == 0 ? kFill : which == 1 ? kAxpy : which == 2 ? kNeg : kHelp; }
