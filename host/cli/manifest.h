/* Reading a JSON Lines manifest one tuple at a time, so a manifest larger
 * than memory streams through in bounded chunks. */
#ifndef CCKEY_MANIFEST_H
#define CCKEY_MANIFEST_H

#include "cli.h"
#include "manifest_json.h"

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
 * *off; NULL when none (manifest_members.c). */
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
 * unread one, on up to threads threads (manifest_lines.c); the reader then
 * takes them from that index instead of memchr. A no-op when the manifest
 * is not mapped or one thread is all there is. */
void manifest_index_lines(manifest *m, size_t want, unsigned threads);

/* Read a pinned regular file through windows of it mapped read-only
 * instead of read() (manifest_window.c): no copy out of the page cache.
 * Buffers manifest_swap hands out are then windows, which the caller gives
 * back with manifest_buffer_free (or as the next swap's spare). Call before
 * the first read; false (read() it is) for other files, or when the first
 * mapping fails. A file that shrinks under a window is the CLI's SIGBUS
 * guard's clear error (cli_mapped_enter). */
bool manifest_map(manifest *m);
void manifest_buffer_free(const manifest *m, char *buf, size_t cap);
/* manifest.c's use of the windows: more bytes after buf[end] (0, with eof
 * set at the end of the file), MANIFEST_FULL, or -1 with errno; and
 * manifest_swap's work. */
int manifest_window_more(manifest *m);
int manifest_window_swap(manifest *m, char **buf, size_t *cap);

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
