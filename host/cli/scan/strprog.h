/* Programs kept as strings: in host files (.h .hpp .c .cpp ...) and in
 * OpenCL files that hold nothing but a string (CLBlast's R"( ... )" .opencl
 * files, clpeak's MSTRINGIFY( ... ) .cl files). Each string expression (a C++
 * raw string, adjacent literals, a stringizing macro's call, and what
 * #include "..." brings into the expression) is decoded to the very text a
 * host program hands to clCreateProgramWithSource (or nvrtcCreateProgram):
 * escapes as the C++ compiler decodes them, MSTRINGIFY's argument as the
 * preprocessor stringizes it (white space to one space, its directives
 * evaluated on the host side). Those that define kernels are the file's
 * programs; their entries carry the line in the original file. */
#ifndef CCKEY_SCAN_STRPROG_H
#define CCKEY_SCAN_STRPROG_H

#include "scan.h"

#include <stdbool.h>

/* Whether path (of language lang; NONE for a host file) may hold programs
 * as strings: every host file; an OpenCL file whose first token starts a
 * string or a stringizing macro's call. */
bool scan_strings_wanted(const char *path, scan_lang lang);
/* The same for a file's text already in memory. */
bool scan_strings_wanted_src(const char *src, size_t len, scan_lang lang);

/* The programs in path (its text src[0..len)) and their entries into out
 * (entries[].program set). 0; 1 when the file turns out not to be a
 * stringified program (an OpenCL file: scan it as source); -1 out of memory
 * (or a file too big); CCKEY_SCAN_UNREADABLE (an included file). */
int scan_strings(const char *path, const char *src, size_t len, scan_lang lang, const scan_options *opts,
                 scan_result *out);

#endif
