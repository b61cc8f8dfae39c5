/* OpenCL fixture for the scanner. Every kernel named "fake_*" must NOT be
 * listed; every other kernel must be, in this order:
 *   attr1 attr2 spliced taken_else live_if1 maybe_a maybe_b nested_live
 *   after_string proto_then_def
 * A comment that mentions __kernel void fake_comment(global int *p) {}
 */
// __kernel void fake_line_comment(global int *p) {}
// a line comment continued onto the next line by a backslash \
__kernel void fake_continued_comment(global int *p) {}

#define KERNEL_MACRO __kernel void fake_in_define(global int *p) {}
#define LONG_MACRO(x) \
    __kernel void fake_in_continued_define(global int *p) { p[0] = x; }

__kernel __attribute__((reqd_work_group_size(64, 1, 1))) void attr1(global float *a) { a[0] = 1.0f; }

kernel void __attribute__((vec_type_hint(float4))) attr2(global float4 *a) { a[0] = (float4)(0.0f); }

__kernel void spl\
iced(global int *p) { p[0] = '"'; }

#if 0
__kernel void fake_if0(global int *p) {}
#if 1
__kernel void fake_nested_in_if0(global int *p) {}
#endif
don't stop at an apostrophe in a dead group
#else
__kernel void taken_else(global int *p) { p[0] = 1; }
#endif

#if 1
__kernel void live_if1(global int *p) { p[0] = 2; }
#else
__kernel void fake_else_of_if1(global int *p) {}
#endif

#ifdef SOME_FLAG
__kernel void maybe_a(global int *p) { p[0] = 3; }
#else
__kernel void maybe_b(global int *p) { p[0] = 4; }
#endif

#if (0) /* a comment
           spanning lines */
__kernel void fake_paren_zero(global int *p) {}
#elif 0
__kernel void fake_elif_zero(global int *p) {}
#elif defined(X) || 1
#if 0
__kernel void fake_deeper(global int *p) {}
#endif
__kernel void nested_live(global int *p) { p[0] = 5; }
#endif

constant char opener[] = "/* not a comment";
constant char text[] = "__kernel void fake_in_string(global int *p) {}";
__kernel void after_string(global char *p) { p[0] = opener[0] + text[0]; }

__kernel void proto_then_def(global int *p);
__kernel void proto_then_def(global int *p) { p[0] = 6; }

__kernel void fake_prototype_only(global int *p);
