/* The manifest component (host/cli/manifest/): reading a JSON Lines
 * manifest one tuple at a time, so a manifest larger than memory streams
 * through in bounded chunks, and the parser of its lines. This is the
 * component's one public header: batch, warm, fuzz/ and bench/ include it
 * and nothing else of the folder (json.h, reuse.h and simd.h are its
 * internals). */
#ifndef CCKEY_MANIFEST_H
#define CCKEY_MANIFEST_H

#include "../cli.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- The JSON of one line ------------------------------------------------- */

/* The JSON half of the manifest reader: a strict parser for one line,
 * decoding strings into a caller's buffer (no allocation per value), that
 * accepts exactly what jansson accepts with JSON_DECODE_ANY |
 * JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES (fuzz/fuzz_manifest_diff.c holds
 * it to that), and keeps what the manifest format needs from the top-level
 * object (json.c; plain.c for lines of the usual shape). */

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
     * handed out at its address (manifest.h). Not freed here. */
    struct mj_reuse *reuse;
    /* Optional too: the run-wide layer over reuse (manifest.h). The
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

/* The fast path mj_parse tries first (plain.c): 1 when the line
 * had the usual plain shape and res is filled in, exactly as the strict
 * parser would; 0 when the strict parser must judge it (res and out are
 * then scratch); -2 out of memory. */
int mj_parse_plain(mj_parser *p, const char *line, size_t len, char *out, mj_line *res);

/* ---- Long strings decoded before (reuse.c) -------------------------------- */

/* Long strings the manifest parser has decoded before, handed out again.
 *
 * A string's decoding, and whether it is valid at all, depend only on its
 * raw bytes. So when a string's raw bytes repeat those of an earlier valid
 * one, up to and including its closing quote, the earlier decoded bytes
 * are the answer: the parser then skips decoding (inline sources repeat
 * whole) and hands out the earlier address, on which the library's
 * equal-address fast path skips hashing (host/batch/planner.c). Only equal
 * bytes are ever shared, so keys and errors cannot change.
 *
 * Direct-mapped, keyed by a hash of 64 of the first 256 raw bytes: a clash
 * or a miss costs one memcmp and a normal decode. The caller keeps every
 * raw line and every decoded string alive, unmoved, while the table is in
 * use (cmd_batch.c: one table per parse thread and chunk). */
#define MJ_REUSE_MIN 256   /* shorter strings decode faster than they compare */

typedef struct mj_reuse_entry {
    const uint8_t *raw;   /* the body, after the opening quote */
    size_t raw_len;       /* up to the closing quote */
    cckey_bytes dec;
} mj_reuse_entry;

typedef struct mj_reuse {
    mj_reuse_entry *e;
    size_t mask;
} mj_reuse;

/* A table of 2^bits entries: 0, or -1 out of memory. */
int mj_reuse_init(mj_reuse *r, unsigned bits);
void mj_reuse_free(mj_reuse *r);

/* The run-wide layer, one per parse thread for a whole run (cmd_batch.c).
 * A chunk's table above dies with the chunk, so each chunk would decode a
 * repeated source again on its first sight, and the library would hash it
 * again for every make_keys call. A string that repeats within a chunk is
 * therefore promoted here: its raw and decoded bytes are copied, and the
 * hex of the decoded bytes' MD5 (what a key's source field holds) is
 * digested once, into a source handle. A later sight costs one memcmp,
 * and the caller hands the library the handle instead of the source
 * (cckey_make_keys_sources).
 *
 * Entries never move and live as long as the table, so a chunk in flight
 * may point at them from another thread once the pipeline has handed the
 * chunk over. All of a run's tables draw on one byte budget; past it
 * nothing more is promoted and the chunk tables work on alone. */
typedef struct mj_known_entry {
    uint64_t hash;
    const uint8_t *raw;   /* the body after the opening quote, copied; NULL: a free slot */
    size_t raw_len;
    cckey_bytes dec;      /* its decoded bytes, copied */
    cckey_source *src;    /* a handle on dec, digested once: the keys' source field */
} mj_known_entry;

#define MJ_KNOWN_BITS 14
#define MJ_KNOWN_PROBES 4

typedef struct mj_known {
    mj_known_entry *e;    /* 2^MJ_KNOWN_BITS slots, allocated on the first promotion */
    size_t *budget;       /* bytes all of the run's tables may still take (shared, atomic) */
} mj_known;

void mj_known_free(mj_known *k);


/* The instruction set of the manifest parser's string kernel (simd.c), for
 * benches and tests. */
const char *mj_str_kernel_isa(void);

/* ---- The reader ---------------------------------------------------------- */


/* Lines longer than this are refused unless --max-line says otherwise: a
 * line is held whole in memory, so the limit bounds a reader's memory. */
#define MANIFEST_DEFAULT_MAX_LINE ((size_t)1 << 30)

typedef struct manifest {
    FILE *f;
    char *label;      /* the name used in messages: the path, or "<stdin>" */
    char *base_dir;   /* relative source_file paths resolve against this */
    size_t line;      /* number of the line last read */
    size_t max_line;  /* bytes of a line, line ending excluded */
    uint64_t offset;  /* manifest bytes consumed so far */
    uint64_t opened_size;   /* a regular file's size when opened (else 0): less at
                             * the end means it shrank while read, not a short line */
    char *buf;        /* read() lands here; lines are handed out in place */
    size_t cap, start, end;   /* unread bytes are buf[start, end) */
    bool eof;
    bool pinned;      /* see manifest_swap */
    bool mapped;      /* pinned, through windows of the file mapped read-only (manifest_map) */
    uint64_t map_at;  /* mapped: the file offset of buf[0] */
    size_t map_start; /* mapped: start when the window was made (the first
                       * unread byte's offset in its page, so rarely 0) */
    /* Where manifest_index_lines found '\n's, ascending, as offsets from
     * buf: every one in buf[nl_from, nl_to). */
    uint32_t *nl;
    size_t nl_n, nl_next, nl_cap, nl_from, nl_to;
} manifest;

/* One parsed tuple. Its byte strings point into root and into the files of
 * the manifest_files it was read with: keep both until the keys are made. */
typedef struct manifest_item {
    size_t line;
    char *owned;          /* decoded strings, when the item owns them */
    cckey_option *opts;   /* owned when owned is set */
    cckey_tuple tuple;
    cckey_bytes source_file;   /* the "source_file" string as written, if any */
    cckey_bytes options_raw;   /* "options" as written in the line (manifest_parse_into) */
    int language_kind;         /* MJ_NONE when there is no "language" member */
    cckey_bytes language;
    char *source_path;    /* a source_file not mapped yet (see manifest_resolve) */
    size_t source_col;    /* its column, for messages (0 from manifest_parse_into: see source_off) */
    size_t source_off;    /* the byte offset of its member name in the line */
} manifest_item;

/* source_file mappings shared by the items of one chunk: the same file named
 * on many lines is mapped once (and so deduplicated by address). */
typedef struct manifest_files {
    char **paths;
    cli_file *files;
    size_t n, cap;
    size_t *index;        /* open addressing over paths: entry + 1, 0 empty */
    size_t index_cap;
    uint64_t bytes;   /* total bytes mapped */
    void **copies;    /* files past MANIFEST_MAX_MAPS, read onto the heap */
    size_t n_copies, copies_cap;
} manifest_files;

/* Each mapping takes one of the process's memory areas (vm.max_map_count,
 * 65530 by default), so a manifest naming 10^5 files cannot keep them all
 * mapped: past this many, files are copied to the heap and unmapped. */
#define MANIFEST_MAX_MAPS 16384

enum { MANIFEST_ITEM = 1, MANIFEST_EOF = 0, MANIFEST_BAD = -1, MANIFEST_IO = -2, MANIFEST_FULL = -3 };

/* path "-" reads standard input. 0, or -1 with the error printed. */
int manifest_open(manifest *m, const char *path);
void manifest_close(manifest *m);

/* The next non-blank line, without its line ending: MANIFEST_ITEM with *line
 * and *len set (valid until the next call; m->line is its number),
 * MANIFEST_EOF, or MANIFEST_IO with the reason in err ("FILE:LINE: ..."
 * for a line over m->max_line or one that memory cannot hold). */
int manifest_read_line(manifest *m, const char **line, size_t *len, char *err, size_t err_len);

/* Read and parse the next non-blank line. MANIFEST_BAD leaves
 * "FILE:LINE:COLUMN: what" in err; the reader stays usable, so a caller may
 * go on to the next line. */
int manifest_next(manifest *m, manifest_item *item, manifest_files *files, char *err, size_t err_len);

/* Parse one line (no newline) as a tuple: the parser proper, also the fuzz
 * target's entry point. line_no and label are for messages. With files
 * NULL, a source_file is left in item->source_path for manifest_resolve, so
 * that lines can be parsed on many threads and mapped on one. The item
 * owns its strings (one buffer) and options. */
/* A member one edit from a known one and not beside it ("devcie"): the
 * known name, with the typo (NUL-terminated) in typo and its byte offset in
 * *off; NULL when none (members.c). */
const char *manifest_near_member(const mj_line *j, char typo[64], size_t *off);
/* Warn about such a typo, once per distinct typo in a run. */
void manifest_warn_near_member(const char *label, size_t line_no, size_t col, const char *typo, const char *guess);

int manifest_parse_line(const char *line, size_t len, const char *label, size_t line_no,
                        const char *base_dir, manifest_item *item, manifest_files *files,
                        char *err, size_t err_len);

/* The same without allocation for the hot path: strings are decoded into
 * out (len bytes), and item->opts points into ps's scratch, valid until
 * ps parses again (copy it). A source_file is only checked and left in
 * item->source_file (source_path stays NULL): the caller resolves it, and
 * computes its column from source_off only if a message needs it. */
int manifest_parse_into(mj_parser *ps, char *out, const char *line, size_t len, const char *label,
                        size_t line_no, const char *base_dir, manifest_item *item, char *err, size_t err_len);

/* Column (in characters, 1-based) of byte offset off of a line. */
size_t manifest_column_of(const char *line, size_t off);

/* Map a pending source_file (a no-op for other items). MANIFEST_ITEM or
 * MANIFEST_BAD with err set; a bad item is cleared. */
int manifest_resolve(manifest_item *item, manifest_files *files, const char *label, char *err,
                     size_t err_len);

/* Pinned reading, for a caller that keeps lines where they were read
 * instead of copying them out (cmd_batch.c): with m->pinned set, the
 * reader never moves bytes within its buffer, so every line handed out
 * since the last swap stays valid at its offset from m->buf. When it would
 * have to move them to read on, manifest_read_line returns MANIFEST_FULL.
 * The caller then takes the whole buffer, lines and all, with
 * manifest_swap, giving the reader *buf (a spare of *cap bytes, or NULL)
 * in exchange: the unread bytes move there, and *buf and *cap become the
 * old buffer's. Reads are at most a MiB, so little is ever unread. 0, or -1
 * without memory (nothing changed). */
int manifest_swap(manifest *m, char **buf, size_t *cap);

/* A pinned buffer's size: a chunk's lines (cmd_batch.c takes up to 32 MiB
 * of them) and a few reads beyond. */
#define MANIFEST_PINNED_BYTES ((size_t)36 << 20)

/* Find the line ends in up to want bytes of a mapped window from the first
 * unread one, on up to threads threads (lines.c); the reader then
 * takes them from that index instead of memchr. A no-op when the manifest
 * is not mapped or one thread is all there is. */
void manifest_index_lines(manifest *m, size_t want, unsigned threads);

/* Read a pinned regular file through windows of it mapped read-only
 * instead of read() (window.c): no copy out of the page cache.
 * Buffers manifest_swap hands out are then windows, which the caller gives
 * back with manifest_buffer_free (or as the next swap's spare). Call before
 * the first read; false (read() it is) for other files, or when the first
 * mapping fails. A file that shrinks under a window is the CLI's SIGBUS
 * guard's clear error (cli_mapped_enter). */
bool manifest_map(manifest *m);
void manifest_buffer_free(const manifest *m, char *buf, size_t cap);

/* Give back a buffer that grew for a long line, once that line has been
 * copied out: a huge line is then held once, not twice. */
void manifest_trim(manifest *m);

/* "--max-line" values: a byte count with an optional K, M or G (binary)
 * suffix, at least 1 KiB. false on anything else. */
bool manifest_parse_max_line(const char *s, size_t *out);

/* base_dir/rel, or rel when it is absolute; malloc'ed, NULL without memory. */
char *manifest_join_path(const char *base_dir, cckey_bytes rel);

void manifest_item_clear(manifest_item *item);
void manifest_files_clear(manifest_files *files);

#endif
