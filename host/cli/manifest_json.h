/* The JSON half of the manifest reader: a strict parser for one line,
 * decoding strings into a caller's buffer (no allocation per value), that
 * accepts exactly what jansson accepts with JSON_DECODE_ANY |
 * JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES (fuzz/fuzz_manifest_diff.c holds
 * it to that), and keeps what the manifest format needs from the top-level
 * object. */
#ifndef CCKEY_MANIFEST_JSON_H
#define CCKEY_MANIFEST_JSON_H

#include "cckey.h"

#include <stdbool.h>
#include <stddef.h>

/* Value kinds, for "must be a string, not %s". */
enum { MJ_NONE = 0, MJ_OBJECT, MJ_ARRAY, MJ_STRING, MJ_INTEGER, MJ_REAL, MJ_BOOL, MJ_NULL };
const char *mj_kind_name(int kind);

/* A top-level member the format knows. */
typedef struct mj_member {
    bool present;
    int kind;
    size_t key_off;      /* byte offset of its name's opening quote */
    cckey_bytes str;     /* the decoded string, for kind MJ_STRING */
    size_t val_off, val_end;   /* its value's raw bytes in the line: equal ones decode equal */
} mj_member;

/* How "options" failed its shape, in the order jansson-era messages came. */
enum { MJ_OPT_OK = 0, MJ_OPT_PAIR, MJ_OPT_PAIR_TYPES, MJ_OPT_MEMBER };

typedef struct mj_line {
    int root;            /* kind of the top-level value */
    mj_member device, name, source, source_file, options, language;
    cckey_option *opts;  /* in the parser's scratch: valid until its next parse */
    size_t n_opts;
    int opt_err;         /* MJ_OPT_*: the first bad pair or member */
    size_t opt_err_index;
    cckey_bytes opt_err_key;
    int opt_err_kind;
    /* The first top-level members the format does not know (for typo hints). */
#define MJ_UNKNOWN_MAX 8
    size_t n_unknown;
    cckey_bytes unknown[MJ_UNKNOWN_MAX];
    size_t unknown_off[MJ_UNKNOWN_MAX];
} mj_line;

/* Per-thread scratch, reused from line to line. Zero-initialise. */
typedef struct mj_key {
    const char *ptr;
    size_t len, off;
} mj_key;

typedef struct mj_parser {
    mj_key *keys;        /* member names of the objects being parsed (duplicates) */
    size_t n_keys, cap_keys;
    cckey_option *opts;
    size_t cap_opts;
    /* Optional (NULL: off), set by a caller that keeps earlier lines' raw
     * and decoded bytes alive: long strings that repeat an earlier one are
     * handed out at its address (manifest_reuse.h). Not freed here. */
    struct mj_reuse *reuse;
    /* Optional too: the run-wide layer over reuse (manifest_reuse.h). The
     * entries it handed out for the last line parsed, in hits (the first
     * MJ_HITS_MAX), so that a caller can tell which member was one. */
    struct mj_known *known;
#define MJ_HITS_MAX 4
    const struct mj_known_entry *hits[MJ_HITS_MAX];
    unsigned n_hits;
} mj_parser;
void mj_parser_free(mj_parser *p);

/* Parse line[0, len). Strings are decoded into out, which must hold len
 * bytes (decoding never grows a string). 0 when the line is valid JSON
 * (res filled in), -1 when not: *bad_off is the offset of the offending
 * byte (len at a premature end) and what says why; -2 out of memory. */
int mj_parse(mj_parser *p, const char *line, size_t len, char *out, mj_line *res, size_t *bad_off, char *what,
             size_t what_len);

/* The general parser alone, which mj_parse falls back to (same contract). */
int mj_parse_strict(mj_parser *p, const char *line, size_t len, char *out, mj_line *res, size_t *bad_off,
                    char *what, size_t what_len);

/* The fast path mj_parse tries first (manifest_plain.c): 1 when the line
 * had the usual plain shape and res is filled in, exactly as the strict
 * parser would; 0 when the strict parser must judge it (res and out are
 * then scratch); -2 out of memory. */
int mj_parse_plain(mj_parser *p, const char *line, size_t len, char *out, mj_line *res);

/* Appends the option (k, v) to res, in p's reused table (both parsers):
 * 0, or -1 out of memory. */
int mj_push_option(mj_parser *p, mj_line *res, cckey_bytes k, cckey_bytes v);

#endif
