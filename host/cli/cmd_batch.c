/* cckey batch: keys for every tuple of a manifest, streamed in bounded
 * chunks so that manifests larger than memory work. */
#include "batch_args.h"
#include "batch_recent.h"
#include "batch_sources.h"
#include "json_out.h"
#include "manifest/manifest.h"
#include "parallel_for.h"
#include "pipeline.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_CHUNK_LINES 65536
#define RAMP_LINES 4096            /* the first chunk's lines without --chunk */
#define CHUNK_BYTES (32u << 20)    /* bytes of manifest text held per chunk */
#define DECODED_BYTES ((size_t)36 << 20)   /* a chunk's decoded strings, as its buffer (manifest/reader.c) */

typedef struct slot {
    manifest_item item;
    size_t source;             /* batch_sources entry + 1 of its source_file; 0 for none */
    const mj_known_entry *known;   /* the run-wide entry of its inline source, if any */
    char *error;               /* "FILE:LINE:COLUMN: what" for a bad line */
} slot;

typedef struct batch_progress {
    cli_progress bar;
    size_t items;                 /* tuples read so far */
    uint64_t chunk_lo, chunk_hi;  /* the manifest bytes of the chunk in hand */
    uint64_t input_size;          /* 0 for standard input */
} batch_progress;

/* The bar measures the manifest. Inside a chunk the library reports bytes
 * digested; that moves the bar across the chunk's share of the manifest,
 * so a chunk of huge source files still shows progress. */
static void on_progress(void *user, uint64_t done, uint64_t total)
{
    batch_progress *p = user;
    uint64_t pos = p->chunk_lo;
    if (total) pos += (uint64_t)((double)(p->chunk_hi - p->chunk_lo) * ((double)done / (double)total));
    cli_progress_update(&p->bar, pos, p->input_size, p->items);
}


/* The raw lines of one chunk, where the reader read them: the chunk takes
 * the reader's whole buffer (manifest_swap), so lines are never copied.
 * Offsets, not pointers: the buffer may grow while the chunk is read. */
typedef struct raw_lines {
    char *arena;
    size_t used, cap;   /* lines lie in arena[0, used) */
    size_t *off, *len, *line;
    size_t n;
} raw_lines;

/* Lines a parse range takes: enough that repeats within a range share an
 * address (batch_recent.h), few enough to spread a chunk over the cores. */
#define PARSE_GRAIN 1024

typedef struct parse_work {
    const raw_lines *raw;
    mj_known *known;        /* one per parse thread, for the whole run; NULL: none */
    char *decoded;   /* line i's strings decode into [off[i], off[i] + len[i]) */
    const manifest *m;
    slot *slots;
    size_t ranges;          /* of PARSE_GRAIN lines */
    cckey_option **blocks;  /* each range's options (see parse_range) */
    atomic_size_t *errors;  /* slots with an error */
    atomic_size_t next;     /* the next range a parse thread claims */
} parse_work;

static void parse_failed(parse_work *w, slot *s, size_t line, const char *err)
{
    atomic_fetch_add(w->errors, 1);
    s->item.line = line;
    s->error = strdup(err);
    if (!s->error) s->error = (char *)"out of memory";
}

/* The run-wide entry the parser handed out as this source, if it did. */
static const mj_known_entry *known_source(const mj_parser *ps, cckey_bytes src)
{
    for (unsigned h = 0; h < ps->n_hits; h++)
        if (ps->hits[h]->dec.ptr == src.ptr && ps->hits[h]->dec.len == src.len) return ps->hits[h];
    return NULL;
}

/* Parsing is most of a batch's time when sources are inline: spread the
 * lines of a chunk over the cores. No allocation per line: strings decode
 * into the chunk's buffer, and the options of a claim's lines share one
 * block, kept in w->blocks. Every field of a slot is set here, so that a
 * chunk is cleared by freeing its blocks and errors alone. */
static void parse_range(parse_work *w, size_t begin, size_t end, mj_reuse *reuse, mj_known *known)
{
    const raw_lines *r = w->raw;
    mj_parser ps = {.reuse = reuse, .known = known};
    char err[1024];
    cckey_option *block = NULL;
    size_t used = 0, cap = 0;
    batch_recent recent = {0};
    for (size_t i = begin; i < end; i++) {
        manifest_item *it = &w->slots[i].item;
        w->slots[i].source = 0;
        w->slots[i].known = NULL;
        w->slots[i].error = NULL;
        if (manifest_parse_into(&ps, w->decoded + r->off[i], r->arena + r->off[i], r->len[i], w->m->label,
                                r->line[i], w->m->base_dir, it, err, sizeof err) != MANIFEST_ITEM) {
            parse_failed(w, &w->slots[i], r->line[i], err);
            continue;
        }
        it->tuple.device = batch_recent_string(&recent, it->tuple.device);
        it->tuple.name = batch_recent_string(&recent, it->tuple.name);
        if (!it->source_file.ptr && !(w->slots[i].known = known_source(&ps, it->tuple.source)))
            it->tuple.source = batch_recent_string(&recent, it->tuple.source);
        size_t k = it->tuple.n_options;
        size_t same = k ? batch_recent_set(&recent, it->options_raw, used) : SIZE_MAX;
        if (same != SIZE_MAX) {
            it->opts = NULL;
            it->tuple.options = (const cckey_option *)(uintptr_t)same;
            continue;
        }
        if (used + k > cap) {
            size_t ncap = cap ? 2 * cap : 64;
            while (ncap < used + k) ncap *= 2;
            cckey_option *b = realloc(block, ncap * sizeof *b);
            if (!b) {
                free(it->source_path);
                it->source_path = NULL;
                parse_failed(w, &w->slots[i], r->line[i], "out of memory");
                continue;
            }
            block = b;
            cap = ncap;
        }
        if (k) memcpy(block + used, it->tuple.options, k * sizeof *block);
        it->opts = NULL;
        it->tuple.options = (const cckey_option *)(uintptr_t)used;   /* an offset until the block stops moving */
        used += k;
    }
    for (size_t i = begin; i < end; i++) {
        manifest_item *it = &w->slots[i].item;
        if (!w->slots[i].error) it->tuple.options = it->tuple.n_options ? block + (uintptr_t)it->tuple.options : NULL;
    }
    w->blocks[begin / PARSE_GRAIN] = block;
    mj_parser_free(&ps);
}

/* One tuple's output line: its key (or, for a bad line, nothing) in keys
 * format; else a JSON row of rows, {"line", "key", the four digests} or
 * {"line", "error"}. false: the row could not be made (out of memory). */
static bool write_result(FILE *out, const batch_opts *o, cli_json_rows *rows, const slot *s, const char *key)
{
    if (!o->jsonl) {
        fputs(s->error ? "" : key, out);
        fputc('\n', out);
        return true;
    }
    cli_json *w = &rows->w;
    cli_json_object(w);
    cli_json_kint(w, "line", (long long)s->item.line);
    if (s->error) {
        /* The message may quote a path that is not UTF-8: escape its bytes. */
        char shown[2048];
        cli_json_kstr(w, "error", cli_utf8_escape(s->error, shown, sizeof shown));
    } else {
        static const char *const field[] = {"device_md5", "name_md5", "source_md5", "options_md5"};
        cli_json_kstr(w, "key", key);
        for (size_t f = 0; f < 4; f++) cli_json_key(w, field[f]), cli_json_strn(w, key + 33 * f, 32);
    }
    cli_json_end(w);
    return cli_json_row_put(rows) == 0;
}

/* One chunk of the manifest on its way through the pipeline: read and
 * parsed by the reader thread, keyed and written by the calling thread. */
typedef struct batch_chunk {
    raw_lines raw;
    cckey_option **blocks;   /* one a parse range: the options of its lines */
    size_t n_blocks;
    atomic_size_t errors;    /* slots with an error, which own it */
    char *decoded;   /* as large as raw's arena */
    size_t decoded_cap;
    slot *slots;
    uint64_t offset;   /* manifest bytes consumed up to its end */
    int status;        /* CLI_OK, or CLI_FAIL with err: reading stopped there */
    char err[1024];
} batch_chunk;

/* What a parsed chunk owns goes: its options blocks, and the messages of
 * its bad lines (slots themselves are rewritten whole by parse_range). */
static void clear_chunk(batch_chunk *k)
{
    for (size_t b = 0; b < k->n_blocks; b++) free(k->blocks[b]), k->blocks[b] = NULL;
    k->n_blocks = 0;
    for (size_t i = 0; atomic_load(&k->errors) && i < k->raw.n; i++) {
        slot *s = &k->slots[i];
        if (s->error && strcmp(s->error, "out of memory") != 0) free(s->error);
        s->error = NULL;
    }
    atomic_store(&k->errors, 0);
}

/* What the keying stage keeps: one chunk's worth, and the run's totals. */
typedef struct chunk_state {
    cckey_tuple *tuples;
    const cckey_source **srcs;   /* per tuple: its source's handle, or NULL (the tuple has the bytes) */
    char (*keys)[CCKEY_KEY_LEN + 1];
    batch_sources sources;   /* for the whole run */
    char *out_buf;           /* a chunk's output in keys format */
    cli_json_rows rows;      /* jsonl and json: the rows written */
    bool write_failed;       /* a row could not be made: the output is not whole */
    size_t bad, total, warned;
} chunk_state;

/* The handle of a tuple's source, when it is already digested: the
 * source_file's, or a repeated inline source's from the parser's tables. */
static const cckey_source *source_of(const chunk_state *c, const slot *s)
{
    return s->source ? c->sources.e[s->source - 1].src : s->known ? s->known->src : NULL;
}

/* One chunk's results, in order: in keys format one large write. */
static void write_chunk(FILE *out, const batch_opts *o, chunk_state *c, const batch_chunk *k)
{
    size_t n = k->raw.n;
    if (o->jsonl || !c->out_buf) {
        for (size_t j = 0, g = 0; j < n; j++) {
            const slot *s = &k->slots[j];
            if (!write_result(out, o, &c->rows, s, s->error ? NULL : c->keys[g++])) c->write_failed = true;
        }
        return;
    }
    char *w = c->out_buf;
    for (size_t j = 0, g = 0; j < n; j++) {
        const slot *s = &k->slots[j];
        if (!s->error) {
            memcpy(w, c->keys[g++], CCKEY_KEY_LEN);
            w += CCKEY_KEY_LEN;
        }
        *w++ = '\n';
    }
    fwrite(c->out_buf, 1, (size_t)(w - c->out_buf), out);
}


/* Long strings seen by one parse thread in this chunk: sources repeat
 * across a chunk, not within a range (1,000 distinct ones in the bench). */
#define REUSE_BITS 14

/* Run-wide tables of repeated long strings (manifest/manifest.h): one per
 * parse thread, for the first KNOWN_TABLES threads, drawing on one budget.
 * 1,000 distinct 4 KiB sources take about 8 MiB. */
#define KNOWN_TABLES 64
#define KNOWN_BUDGET ((size_t)32 << 20)

/* One parse thread: ranges claimed one at a time, one table of repeats
 * for all of them (parsing goes on without it when memory is short). */
static void parse_thread(void *ctx, size_t t)
{
    parse_work *w = ctx;
    mj_reuse reuse;
    bool have = mj_reuse_init(&reuse, REUSE_BITS) == 0;
    mj_known *known = w->known && t < KNOWN_TABLES ? &w->known[t] : NULL;
    for (size_t i; (i = atomic_fetch_add(&w->next, 1)) < w->ranges;) {
        size_t begin = i * PARSE_GRAIN, end = begin + PARSE_GRAIN < w->raw->n ? begin + PARSE_GRAIN : w->raw->n;
        parse_range(w, begin, end, have ? &reuse : NULL, known);
    }
    if (have) mj_reuse_free(&reuse);
}

/* Parse a chunk's lines, on all threads. false without memory. */
static bool parse_chunk(const batch_opts *o, const manifest *m, mj_known *known, batch_chunk *k)
{
    /* Sized once for a usual chunk (pages never touched cost nothing), and
     * again only for a huge line, or after one. */
    size_t want = k->raw.used > DECODED_BYTES ? k->raw.used : DECODED_BYTES;
    if (k->decoded_cap < k->raw.used || k->decoded_cap > 2 * want) {
        free(k->decoded);
        k->decoded = malloc(want);
        k->decoded_cap = k->decoded ? want : 0;
        if (!k->decoded) return false;
    }
    parse_work pw = {.raw = &k->raw, .known = known, .decoded = k->decoded, .m = m, .slots = k->slots,
                     .ranges = (k->raw.n + PARSE_GRAIN - 1) / PARSE_GRAIN, .blocks = k->blocks, .errors = &k->errors};
    k->n_blocks = pw.ranges;
    atomic_init(&pw.next, 0);
    size_t threads = o->threads ? o->threads : cckey_cpu_threads();
    if (threads > pw.ranges) threads = pw.ranges;
    cli_parallel_for(threads, (unsigned)threads, parse_thread, &pw);
    return true;
}

/* Map, key and write one parsed chunk. CLI_OK, CLI_USAGE (a bad line and
 * no --keep-going) or CLI_FAIL. */
static int process_chunk(const batch_opts *o, const manifest *m, FILE *out, chunk_state *c, batch_chunk *k)
{
    size_t n = k->raw.n;
    /* Each distinct source_file once per run: new paths of this chunk are
     * digested here, on all threads; known ones cost a look-up. */
    for (size_t i = 0; i < n; i++) {
        slot *s = &k->slots[i];
        if (s->error || !s->item.source_file.ptr) continue;
        size_t e = batch_sources_add(&c->sources, s->item.source_file);
        if (e == SIZE_MAX) {
            cli_error("batch: out of memory (line %zu of %s)", s->item.line, m->label);
            return CLI_FAIL;
        }
        s->source = e + 1;
    }
    batch_sources_digest(&c->sources, o->threads);
    size_t good = 0;
    for (size_t i = 0; i < n; i++) {
        slot *s = &k->slots[i];
        const batch_source *e = s->source && !s->error ? &c->sources.e[s->source - 1] : NULL;
        if (e && e->why) {
            char *path = manifest_join_path(m->base_dir, s->item.source_file);
            char err[1024];
            size_t col = manifest_column_of(k->raw.arena + k->raw.off[i], s->item.source_off);
            snprintf(err, sizeof err, "%s:%zu:%zu: cannot read source_file \"%s\": %s", m->label, s->item.line, col,
                     path ? path : e->rel, e->why);
            free(path);
            s->error = strdup(err);
            if (!s->error) return CLI_FAIL;
            atomic_fetch_add(&k->errors, 1);
        }
        if (s->error) {
            fprintf(stderr, "%s\n", s->error);
            c->bad++;
            if (!o->keep_going) return CLI_USAGE;
            continue;
        }
        c->srcs[good] = source_of(c, s);
        if (c->srcs[good]) s->item.tuple.source = (cckey_bytes){NULL, 0};   /* the handle stands for it */
        c->tuples[good++] = s->item.tuple;
    }
    c->total += good;
    cckey_status st = cckey_make_keys_sources(c->keys, c->tuples, c->srcs, good, o->cfg);
    if (st != CCKEY_OK) {
        cli_error("batch: %s: %s", cckey_strerror(st), cckey_last_error());
        return CLI_FAIL;
    }
    const char *warning = cckey_batch_config_warning(o->cfg);
    /* A repair (wrong device digests replaced) is said for every chunk it
     * happens in; the rest (a device fallback, what a sample checked) once. */
    if (*warning && (strstr(warning, "wrong digest") || !c->warned++)) cli_warn("%s", warning);
    write_chunk(out, o, c, k);
    return CLI_OK;
}

/* The reader stage: the manifest, read by one thread only. */
typedef struct batch_reader {
    const batch_opts *o;
    manifest *m;
    mj_known *known;   /* KNOWN_TABLES, or NULL */
    size_t line_bytes; /* manifest bytes a line in the last chunk, for read-ahead */
    size_t ramp;       /* lines of the next chunk while they double up to o->chunk; 0: o->chunk */
} batch_reader;

/* Read the next chunk's lines: bounded in lines and in bytes of line text.
 * false at the end of the manifest or on a read failure (k->status). */
static bool read_chunk(batch_reader *r, batch_chunk *k)
{
    manifest *m = r->m;
    /* Waiting on input (a pipe, a terminal) is where the reader may be
     * stopped: nothing in this loop holds a lock or leaves state that the
     * caller's cleanup cannot free. */
    int cancel;
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &cancel);
    bool more = true;
    raw_lines *raw = &k->raw;
    size_t text = 0;   /* bytes of line text */
    /* The line ends of about a chunk's bytes, as long as the last chunk's
     * lines were, found at once on all threads (a mapped manifest; the
     * loop's memchr goes on where they fall short). */
    size_t lines = r->ramp && r->ramp < r->o->chunk ? r->ramp : r->o->chunk;
    if (r->ramp) r->ramp *= 2;
    size_t ahead = r->line_bytes * lines + ((size_t)64 << 10);
    if (ahead > CHUNK_BYTES) ahead = CHUNK_BYTES;
    unsigned threads = r->o->threads ? r->o->threads : cckey_cpu_threads();
    if (r->line_bytes) manifest_index_lines(m, ahead, threads);
    while (k->status == CLI_OK && raw->n < lines && text < CHUNK_BYTES) {
        const char *line;
        size_t len;
        int rd = manifest_read_line(m, &line, &len, k->err, sizeof k->err);
        if (rd == MANIFEST_EOF) {
            more = false;
            break;
        }
        if (rd == MANIFEST_FULL && raw->n) break;   /* the lines so far fill the buffer: a chunk */
        if (rd == MANIFEST_FULL) {                   /* blank lines only: drop them, read on */
            rd = manifest_swap(m, &raw->arena, &raw->cap);
            if (rd == 0) continue;
        }
        if (rd != MANIFEST_ITEM) {
            if (rd != MANIFEST_IO) snprintf(k->err, sizeof k->err, "batch: out of memory (line %zu of %s)", m->line, m->label);
            k->status = CLI_FAIL;
            break;
        }
        raw->off[raw->n] = (size_t)(line - m->buf);
        raw->len[raw->n] = len;
        raw->line[raw->n++] = m->line;
        raw->used = (size_t)(line - m->buf) + len;
        text += len;
    }
    pthread_setcancelstate(cancel, NULL);
    if (raw->n) r->line_bytes = raw->used / raw->n + 1;
    /* The chunk takes the buffer its lines are in; the reader goes on in
     * the chunk's previous one. */
    if (k->status == CLI_OK && manifest_swap(m, &raw->arena, &raw->cap) != 0) {
        snprintf(k->err, sizeof k->err, "batch: out of memory (line %zu of %s)", m->line, m->label);
        k->status = CLI_FAIL;
    }
    k->offset = m->offset;
    return more && k->status == CLI_OK;
}

static bool fill_chunk(void *ctx, void *buf)
{
    batch_reader *r = ctx;
    batch_chunk *k = buf;
    clear_chunk(k);
    k->raw.n = k->raw.used = 0;
    k->status = CLI_OK;
    bool more = read_chunk(r, k);
    if (k->status == CLI_OK && k->raw.n && !parse_chunk(r->o, r->m, r->known, k)) {
        snprintf(k->err, sizeof k->err, "batch: out of memory");
        k->status = CLI_FAIL;
    }
    return more && k->raw.n;
}

/* Chunks in flight: the one being keyed and the one being read. */
#define PIPELINE_DEPTH 2

static bool chunk_alloc(batch_chunk *k, size_t lines)
{
    k->slots = calloc(lines, sizeof *k->slots);
    k->raw.off = calloc(lines, sizeof *k->raw.off);
    k->raw.len = calloc(lines, sizeof *k->raw.len);
    k->raw.line = calloc(lines, sizeof *k->raw.line);
    k->blocks = calloc((lines + PARSE_GRAIN - 1) / PARSE_GRAIN, sizeof *k->blocks);
    atomic_init(&k->errors, 0);
    return k->slots && k->raw.off && k->raw.len && k->raw.line && k->blocks;
}

static void chunk_free(batch_chunk *k, const manifest *m)
{
    if (k->slots && k->blocks) clear_chunk(k);
    free(k->slots), free(k->blocks);
    manifest_buffer_free(m, k->raw.arena, k->raw.cap);
    free(k->raw.off), free(k->raw.len), free(k->raw.line), free(k->decoded);
}

/* Key and write the chunks the reader hands over, in order. */
static int consume(const batch_opts *o, const manifest *m, cli_output *out, chunk_state *c, cli_pipeline *pipe,
                   batch_progress *prog)
{
    int rc = CLI_OK;
    for (batch_chunk *k; rc == CLI_OK && (k = cli_pipeline_take(pipe));) {
        if (k->status != CLI_OK) {
            cli_error("%s", k->err);
            return CLI_FAIL;
        }
        if (!k->raw.n) break;
        prog->chunk_hi = k->offset;
        prog->items = c->total + k->raw.n;
        rc = process_chunk(o, m, out->f, c, k);
        /* A full disk or a closed pipe stops the batch now, not at the end. */
        if (rc == CLI_OK && fflush(out->f) != 0) {
            cli_error("batch: writing %s: %s", o->output ? o->output : "standard output", strerror(errno));
            rc = CLI_FAIL;
        }
        cli_pipeline_release(pipe);
        prog->items = c->total;
        prog->chunk_lo = prog->chunk_hi;
        cli_progress_update(&prog->bar, prog->chunk_hi, prog->input_size, c->total);
    }
    return rc;
}

static int run(const batch_opts *o)
{
    manifest m;
    if (manifest_open(&m, o->input) != 0) return CLI_USAGE;
    m.max_line = o->max_line;
    m.pinned = true;   /* chunks take the reader's buffers: no line is copied */
    manifest_map(&m);  /* and a regular file's buffers are windows of it: no copy at all */
    cli_output out;
    if (cli_output_open(&out, o->output) != 0) {
        manifest_close(&m);
        return CLI_FAIL;
    }
    setvbuf(out.f, NULL, _IOFBF, 1 << 20);   /* large writes, not one per 4 KiB */
    uint64_t input_size = 0;
    struct stat st;
    if (fstat(fileno(m.f), &st) == 0 && S_ISREG(st.st_mode)) input_size = (uint64_t)st.st_size;

    chunk_state c = {0};
    c.tuples = calloc(o->chunk, sizeof *c.tuples);
    c.srcs = calloc(o->chunk, sizeof *c.srcs);
    c.keys = calloc(o->chunk, sizeof *c.keys);
    c.out_buf = malloc(o->chunk * (CCKEY_KEY_LEN + 1));   /* no check: write_chunk copes without */
    c.sources.base_dir = m.base_dir;
    cli_json_rows_start(&c.rows, out.f, o->json, CLI_JSON_SPACED, false);
    batch_chunk chunks[PIPELINE_DEPTH] = {0};
    void *bufs[PIPELINE_DEPTH];
    bool ok = c.tuples && c.srcs && c.keys;
    for (size_t i = 0; i < PIPELINE_DEPTH; i++) ok = chunk_alloc(&chunks[i], o->chunk) && ok, bufs[i] = &chunks[i];
    batch_progress prog = {.input_size = input_size};
    cli_progress *bar = &prog.bar;
    cli_progress_init(bar, "batch");
    if (o->quiet) bar->enabled = false;
    if (bar->enabled) cckey_batch_config_set_progress(o->cfg, on_progress, &prog);
    int rc = CLI_OK;
    /* Reading and parsing chunk k+1 overlaps keying and writing chunk k;
     * one host thread (--jobs 1) means no reader thread. */
    size_t budget = KNOWN_BUDGET;
    mj_known *known = calloc(KNOWN_TABLES, sizeof *known);   /* none without memory: slower, not wrong */
    for (size_t i = 0; known && i < KNOWN_TABLES; i++) known[i].budget = &budget;
    /* Without --chunk, chunks start small and double: the keying stage
     * starts on the first one soon, so the two stages overlap from the
     * start, which is most of a short manifest's run. */
    batch_reader reader = {.o = o, .m = &m, .known = known, .ramp = o->chunk_set ? 0 : RAMP_LINES};
    unsigned threads = o->threads ? o->threads : cckey_cpu_threads();
    cli_pipeline *pipe = ok ? cli_pipeline_start(bufs, PIPELINE_DEPTH, threads > 1, fill_chunk, &reader) : NULL;
    if (!pipe) {
        cli_error("batch: out of memory");
        rc = CLI_FAIL;
    } else {
        rc = consume(o, &m, &out, &c, pipe, &prog);
    }
    cli_pipeline_stop(pipe);
    cli_progress_finish(bar);
    if (rc == CLI_OK && c.write_failed) {
        cli_error("batch: out of memory writing the results");
        rc = CLI_FAIL;
    }
    bool complete = rc == CLI_OK;   /* every line has its output line */
    cli_json_rows_end(&c.rows, complete);
    if (rc == CLI_OK && c.bad) {
        cli_error("batch: %zu bad line%s (keys for the other %zu tuples were written)", c.bad,
                  c.bad == 1 ? "" : "s", c.total);
        rc = CLI_USAGE;
    }
    /* -o only ever holds a complete batch: any failure leaves no file. With
     * --keep-going, bad lines are part of the result (one placeholder each). */
    if (complete) {
        if (cli_output_commit(&out) != 0) rc = CLI_FAIL;
    } else if (out.path) {
        cli_output_abort(&out);
    } else {
        fflush(stdout);
    }
    for (size_t i = 0; i < PIPELINE_DEPTH; i++) chunk_free(&chunks[i], &m);
    for (size_t i = 0; known && i < KNOWN_TABLES; i++) mj_known_free(&known[i]);
    free(known);
    batch_sources_free(&c.sources);
    free(c.out_buf);
    free(c.tuples), free(c.srcs), free(c.keys);
    manifest_close(&m);
    return rc;
}

int cli_cmd_batch(int argc, char **argv)
{
    batch_opts o = {.chunk = DEFAULT_CHUNK_LINES, .max_line = MANIFEST_DEFAULT_MAX_LINE};
    if (cckey_batch_config_new(&o.cfg) != CCKEY_OK) {
        cli_error("out of memory");
        return CLI_FAIL;
    }
    int rc = batch_args(argc, argv, &o);
    if (rc == BATCH_RUN && (rc = cli_config_from_env(o.cfg)) == CLI_OK) rc = run(&o);
    cckey_batch_config_free(o.cfg);
    return rc;
}
