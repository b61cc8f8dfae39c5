/* The CLI's one JSON writer: every command that prints JSON builds its text
 * here, into a buffer, and prints it whole (json_out.c). jansson stays for
 * reading JSON only.
 *
 * Layouts (what each command's output has always looked like):
 *   CLI_JSON_COMPACT  {"a":1,"b":[1,2]}          jsonl lines of key, scan, ...
 *   CLI_JSON_SPACED   {"a": 1, "b": [1, 2]}      batch and warm lines
 *   CLI_JSON_INDENT   two spaces a level, one member a line; "{}" and "[]"
 *                     when empty                  --format json documents
 * A container opened after cli_json_inline is written SPACED, whatever the
 * writer's layout: an INDENT document of one-line rows (warm --check).
 * Strings: '"' and '\\' escaped, \b \f \n \r \t, any other byte below 0x20
 * as \u00XX (upper-case hex); everything else as it is. A byte that is not
 * part of valid UTF-8 becomes U+FFFD, or, in a strict writer, fails the
 * text (scan's manifests name files: a replaced byte would name another).
 * Reals: the shortest of 17 significant digits (%.17g) that stays a real
 * when read back: ".0" added to a whole number, no '+' or leading zeros in
 * an exponent.
 *
 * Calls after a failure (out of memory, invalid UTF-8 when strict, nesting
 * deeper than CLI_JSON_DEPTH) do nothing; cli_json_put says so. */
#ifndef CCKEY_CLI_JSON_OUT_H
#define CCKEY_CLI_JSON_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum cli_json_layout { CLI_JSON_COMPACT, CLI_JSON_SPACED, CLI_JSON_INDENT } cli_json_layout;

#define CLI_JSON_DEPTH 16

typedef struct cli_json {
    char *buf;
    size_t len, cap;
    cli_json_layout layout;
    bool strict;
    bool failed;
    bool after_key;                   /* a key is written, its value is next */
    bool inline_next;                 /* the next container opened is inline */
    int inline_from;                  /* the depth of the outermost inline container; 0: none */
    int depth;                        /* open objects and arrays */
    bool members[CLI_JSON_DEPTH];     /* the open container at each depth has one already */
    char closer[CLI_JSON_DEPTH];      /* and the '}' or ']' that ends it */
} cli_json;

void cli_json_init(cli_json *w, cli_json_layout layout, bool strict);
void cli_json_free(cli_json *w);
/* Empty again for the next text, keeping the buffer (and the layout). */
void cli_json_reset(cli_json *w);
/* The text, then end (NULL: nothing), on out in one write; then reset.
 * -1, writing nothing, when the text failed. */
int cli_json_put(cli_json *w, FILE *out, const char *end);

void cli_json_object(cli_json *w);   /* { */
void cli_json_array(cli_json *w);    /* [ */
void cli_json_end(cli_json *w);      /* } or ], whichever is open */
void cli_json_key(cli_json *w, const char *key);
/* The next object or array (and all inside it) on one line, SPACED. */
void cli_json_inline(cli_json *w);

void cli_json_str(cli_json *w, const char *s);   /* NULL: null */
void cli_json_strn(cli_json *w, const char *s, size_t len);
void cli_json_int(cli_json *w, long long v);
void cli_json_real(cli_json *w, double v);
/* v with a fixed number of decimals (%.*f): seconds as "0.125". */
void cli_json_fixed(cli_json *w, double v, int decimals);
void cli_json_bool(cli_json *w, bool v);
void cli_json_null(cli_json *w);

/* A member: key, then its value. */
void cli_json_kstr(cli_json *w, const char *key, const char *s);
void cli_json_kint(cli_json *w, const char *key, long long v);
void cli_json_kreal(cli_json *w, const char *key, double v);
void cli_json_kbool(cli_json *w, const char *key, bool v);
void cli_json_knull(cli_json *w, const char *key);
/* key, then v[0..n) as an array of strings. */
void cli_json_kstrs(cli_json *w, const char *key, const char *const *v, size_t n);

/* Rows written one at a time: for --format json one array, "[\n  ROW,\n
 * ROW\n]\n" ("[]\n" when empty); for jsonl a row a line. Each row is built
 * in rows->w and written by cli_json_row_put, or dropped (-1) when it failed
 * (its caller says why). */
typedef struct cli_json_rows {
    FILE *out;
    bool array;
    size_t n;
    cli_json w;
} cli_json_rows;

void cli_json_rows_start(cli_json_rows *r, FILE *out, bool array, cli_json_layout row_layout, bool strict);
int cli_json_row_put(cli_json_rows *r);
/* The array's end when complete (nothing when an error cut it short). */
void cli_json_rows_end(cli_json_rows *r, bool complete);

#endif
