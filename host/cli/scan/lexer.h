/* A small C-family lexer for finding kernel entry points: it drops comments,
 * line splices, preprocessor directives and the groups of conditionals that
 * are known to be dead (#if 0 and the #else of #if 1), and keeps everything
 * else as tokens. It never expands macros. */
#ifndef CCKEY_SCAN_LEXER_H
#define CCKEY_SCAN_LEXER_H

#include <stddef.h>
#include <stdbool.h>

#include "pp.h"

typedef enum scan_tok_kind {
    CCKEY_TOK_IDENT,
    CCKEY_TOK_NUMBER,
    CCKEY_TOK_STRING,   /* the whole literal, prefix and quotes included */
    CCKEY_TOK_CHAR,
    CCKEY_TOK_PUNCT,    /* one character, or "::" */
    /* The directives of a conditional scanned both ways (#ifdef X ...
     * #else ... #endif): the finder treats the groups as alternatives, so a
     * kernel header written once per group does not open two bodies. Text
     * "#" (matching nothing a finder looks for). */
    CCKEY_TOK_PP_IF,
    CCKEY_TOK_PP_ELSE,
    CCKEY_TOK_PP_ENDIF
} scan_tok_kind;

/* CCKEY_TOK_PP_IF of a condition only the device can decide (OpenCL's
 * cl_khr_fp64 and friends): the groups exist on some devices only. */
#define CCKEY_TOKF_DEVICE 1

typedef struct scan_token {
    scan_tok_kind kind;
    const char *p;      /* into one of scan_lexed.texts */
    size_t len;
    unsigned line;      /* 1-based line in the original source */
    unsigned short file;   /* which file (scan_lex_opts.file) it came from */
    unsigned char flags;   /* CCKEY_TOKF_* */
} scan_token;

typedef struct scan_lexed {
    char *text;         /* the (first) source with line splices removed */
    char **texts;       /* every lexed source's text, text first */
    size_t n_texts;
    scan_token *toks;
    size_t n, cap;
} scan_lexed;

/* How a source is lexed. */
typedef struct scan_lex_opts {
    /* The unit's macros: #define / #undef in live groups update it, and
     * #if / #ifdef conditions are evaluated over it (see pp.h). NULL: only
     * constant integers are known, as scan_lex has it. */
    scan_macro_env *env;
    /* #include "NAME" (angle false) or <NAME> (angle true) in a live group:
     * called where it stands, so that the header can be lexed into the same
     * output (scan_lex_more) before the rest of this source. NULL:
     * includes are skipped. */
    void (*include)(void *user, const char *name, size_t len, bool angle, unsigned line);
    void *user;
    unsigned short file;   /* the tokens' file */
} scan_lex_opts;

/* 0, or -1 when out of memory. Never fails on malformed input: an
 * unterminated comment or literal simply ends at the end of the file (a
 * literal at the end of its line). */
int scan_lex(const char *src, size_t len, scan_lexed *out);
int scan_lex_with(const char *src, size_t len, const scan_lex_opts *opts, scan_lexed *out);
/* The same, appending to out (an include's tokens). */
int scan_lex_more(const char *src, size_t len, const scan_lex_opts *opts, scan_lexed *out);
void scan_lexed_free(scan_lexed *l);

/* The line where braces first nest deeper than max, or 0 when they never
 * do. A quick pass over the raw text (comments and quoted literals
 * skipped) that stops right there: a file of nothing but '{' costs a few
 * pages, not a token and a scope per byte. */
unsigned scan_lex_too_deep(const char *src, size_t len, unsigned max);

/* Token t is the identifier or punctuator s. */
bool scan_tok_is(const scan_token *t, const char *s);

#endif
