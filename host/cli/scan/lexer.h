/* A small C-family lexer for finding kernel entry points: it drops comments,
 * line splices, preprocessor directives and the groups of conditionals that
 * are known to be dead (#if 0 and the #else of #if 1), and keeps everything
 * else as tokens. It never expands macros. */
#ifndef CCKEY_SCAN_LEXER_H
#define CCKEY_SCAN_LEXER_H

#include <stddef.h>
#include <stdbool.h>

typedef enum cckey_tok_kind {
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
} cckey_tok_kind;

typedef struct cckey_token {
    cckey_tok_kind kind;
    const char *p;      /* into cckey_lexed.text */
    size_t len;
    unsigned line;      /* 1-based line in the original source */
} cckey_token;

typedef struct cckey_lexed {
    char *text;         /* the source with line splices removed */
    cckey_token *toks;
    size_t n, cap;
} cckey_lexed;

/* 0, or -1 when out of memory. Never fails on malformed input: an
 * unterminated comment or literal simply ends at the end of the file (a
 * literal at the end of its line). */
int cckey_lex(const char *src, size_t len, cckey_lexed *out);
void cckey_lexed_free(cckey_lexed *l);

/* The line where braces first nest deeper than max, or 0 when they never
 * do. A quick pass over the raw text (comments and quoted literals
 * skipped) that stops right there: a file of nothing but '{' costs a few
 * pages, not a token and a scope per byte. */
unsigned cckey_lex_too_deep(const char *src, size_t len, unsigned max);

/* Token t is the identifier or punctuator s. */
bool cckey_tok_is(const cckey_token *t, const char *s);

#endif
