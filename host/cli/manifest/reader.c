/* The manifest format: one JSON object a line (json.c parses it).
 *
 *   {"device": S, "name": S, "source": S | "source_file": PATH,
 *    "options": [[K, V], ...] | {K: V, ...}}
 *
 * Strings may hold \u0000; the bytes digested are their UTF-8. Unknown
 * members are ignored (one edit from a known one: a warning, see
 * members.c); blank lines (JSON whitespace only: spaces, tabs, CRs)
 * are skipped. */
#include "manifest.h"
#include "window.h"

#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int manifest_open(manifest *m, const char *path)
{
    *m = (manifest){.max_line = MANIFEST_DEFAULT_MAX_LINE};
    if (strcmp(path, "-") == 0) {
        m->f = stdin;
        m->label = strdup("<stdin>");
        m->base_dir = strdup(".");
    } else {
        m->f = fopen(path, "rb");
        if (!m->f) {
            cli_error("%s: %s", path, strerror(errno));
            return -1;
        }
        struct stat dir;
        if (fstat(fileno(m->f), &dir) == 0 && S_ISDIR(dir.st_mode)) {
            cli_error("%s: is a directory, not a manifest", path);
            fclose(m->f);
            m->f = NULL;
            return -1;
        }
        char *copy = strdup(path);
        m->label = strdup(path);
        m->base_dir = copy ? strdup(dirname(copy)) : NULL;
        free(copy);
    }
    struct stat st;
    if (m->f && fstat(fileno(m->f), &st) == 0 && S_ISREG(st.st_mode)) m->opened_size = (uint64_t)st.st_size;
    if (!m->label || !m->base_dir) {
        cli_error("out of memory");
        manifest_close(m);
        return -1;
    }
    return 0;
}

void manifest_close(manifest *m)
{
    if (m->f && m->f != stdin) fclose(m->f);
    free(m->label);
    free(m->base_dir);
    manifest_buffer_free(m, m->buf, m->cap);
    free(m->nl);
    *m = (manifest){0};
}

void manifest_item_clear(manifest_item *item)
{
    if (item->owned) free(item->opts);
    free(item->owned);
    free(item->source_path);
    *item = (manifest_item){0};
}

void manifest_files_clear(manifest_files *files)
{
    for (size_t i = 0; i < files->n; i++) {
        free(files->paths[i]);
        cli_file_unmap(&files->files[i]);
    }
    for (size_t i = 0; i < files->n_copies; i++) free(files->copies[i]);
    free(files->copies);
    free(files->paths);
    free(files->files);
    free(files->index);
    *files = (manifest_files){0};
}

/* 1-based character column of a top-level member's key in the raw line, so
 * that errors about a value point at it; 1 when it cannot be found. jansson
 * keeps no positions for values, hence this small scan. */
static size_t member_column(const char *line, size_t len, const char *key)
{
    size_t klen = strlen(key), col = 1;
    int depth = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)line[i];
        if ((c & 0xc0) != 0x80) col++;
        if (c == '{' || c == '[') depth++;
        else if (c == '}' || c == ']') depth--;
        else if (c == '"') {
            size_t start = i, start_col = col - 1;
            for (i++; i < len && line[i] != '"'; i++) {
                if ((line[i] & 0xc0) != 0x80) col++;
                if (line[i] == '\\' && i + 1 < len) i++, col++;
            }
            col++;
            size_t j = i + 1;
            while (j < len && (line[j] == ' ' || line[j] == '\t')) j++;
            if (depth == 1 && j < len && line[j] == ':' && i - start - 1 == klen &&
                memcmp(line + start + 1, key, klen) == 0)
                return start_col;
        }
    }
    return 1;
}

typedef struct line_ctx {
    const char *line;
    size_t len;
    const char *label;
    size_t line_no;
    char *err;
    size_t err_len;
} line_ctx;

static int bad(const line_ctx *c, const char *member, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(const line_ctx *c, const char *member, const char *fmt, ...)
{
    size_t col = member ? member_column(c->line, c->len, member) : 1;
    int n = snprintf(c->err, c->err_len, "%s:%zu:%zu: ", c->label, c->line_no, col);
    if (n < 0 || (size_t)n >= c->err_len) return MANIFEST_BAD;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err + n, c->err_len - (size_t)n, fmt, ap);
    va_end(ap);
    return MANIFEST_BAD;
}

static int string_member(const line_ctx *c, const mj_member *m, const char *key, cckey_bytes *out)
{
    if (!m->present) return bad(c, NULL, "missing \"%s\" (a string)", key);
    if (m->kind != MJ_STRING) return bad(c, key, "\"%s\" must be a string, not %s", key, mj_kind_name(m->kind));
    *out = m->str;
    return 0;
}

static int check_options(const line_ctx *c, const mj_line *j, manifest_item *item)
{
    const mj_member *m = &j->options;
    if (!m->present || m->kind == MJ_NULL) return 0;
    if (m->kind != MJ_ARRAY && m->kind != MJ_OBJECT)
        return bad(c, "options", "\"options\" must be an array of [key, value] string pairs or an object of strings, not %s",
                   mj_kind_name(m->kind));
    switch (j->opt_err) {
    case MJ_OPT_PAIR: return bad(c, "options", "\"options\"[%zu] must be a [key, value] pair of strings", j->opt_err_index);
    case MJ_OPT_PAIR_TYPES:
        return bad(c, "options", "\"options\"[%zu]: key and value must both be strings", j->opt_err_index);
    case MJ_OPT_MEMBER:
        return bad(c, "options", "\"options\" member \"%.*s\" must be a string, not %s",
                   (int)(j->opt_err_key.len > 64 ? 64 : j->opt_err_key.len), (const char *)j->opt_err_key.ptr,
                   mj_kind_name(j->opt_err_kind));
    }
    item->opts = j->n_opts ? j->opts : NULL;
    item->tuple.options = item->opts;
    item->tuple.n_options = j->n_opts;
    item->options_raw = (cckey_bytes){c->line + m->val_off, m->val_end - m->val_off};
    return 0;
}

/* The checks every source_file gets while parsing. */
static int check_source_file(const line_ctx *c, cckey_bytes rel)
{
    if (rel.len == 0) return bad(c, "source_file", "\"source_file\" is empty");
    if (memchr(rel.ptr, '\0', rel.len)) return bad(c, "source_file", "\"source_file\" holds a NUL byte");
    return 0;
}

char *manifest_join_path(const char *base_dir, cckey_bytes rel)
{
    size_t n = strlen(base_dir) + rel.len + 2;
    char *path = malloc(n);
    if (!path) return NULL;
    if (((const char *)rel.ptr)[0] == '/') snprintf(path, n, "%.*s", (int)rel.len, (const char *)rel.ptr);
    else snprintf(path, n, "%s/%.*s", base_dir, (int)rel.len, (const char *)rel.ptr);
    return path;
}

static size_t path_hash(const char *p)
{
    size_t h = 1469598103934665603u;
    while (*p) h = (h ^ (unsigned char)*p++) * 1099511628211u;
    return h;
}

/* Room for one more file: both arrays and the index (kept at most half full). */
static int grow_files(manifest_files *files)
{
    if (files->n == files->cap) {
        size_t cap = files->cap ? files->cap * 2 : 16;
        char **p = realloc(files->paths, cap * sizeof *p);
        if (p) files->paths = p;
        cli_file *f = realloc(files->files, cap * sizeof *f);
        if (f) files->files = f;
        if (!p || !f) return -1;
        files->cap = cap;
    }
    if (2 * (files->n + 1) > files->index_cap) {
        size_t cap = files->index_cap ? files->index_cap * 2 : 64;
        size_t *index = calloc(cap, sizeof *index);
        if (!index) return -1;
        for (size_t i = 0; i < files->n; i++) {
            size_t s = path_hash(files->paths[i]) & (cap - 1);
            while (index[s]) s = (s + 1) & (cap - 1);
            index[s] = i + 1;
        }
        free(files->index);
        files->index = index;
        files->index_cap = cap;
    }
    return 0;
}

/* Replace f's mapping by a heap copy, owned by files (see MANIFEST_MAX_MAPS). */
static int to_heap(manifest_files *files, cli_file *f)
{
    if (files->n_copies == files->copies_cap) {
        size_t cap = files->copies_cap ? files->copies_cap * 2 : 1024;
        void **c = realloc(files->copies, cap * sizeof *c);
        if (!c) return -1;
        files->copies = c, files->copies_cap = cap;
    }
    void *copy = malloc(f->len);
    if (!copy) return -1;
    memcpy(copy, f->ptr, f->len);
    size_t len = f->len;
    cli_file_unmap(f);
    files->copies[files->n_copies++] = copy;
    *f = (cli_file){.ptr = copy, .len = len};
    return 0;
}

int manifest_resolve(manifest_item *item, manifest_files *files, const char *label, char *err,
                     size_t err_len)
{
    if (!item->source_path) return MANIFEST_ITEM;
    const char *path = item->source_path;
    size_t h = path_hash(path), slot = 0;
    if (files->index_cap) {
        for (slot = h & (files->index_cap - 1); files->index[slot]; slot = (slot + 1) & (files->index_cap - 1)) {
            size_t i = files->index[slot] - 1;
            if (strcmp(files->paths[i], path) == 0) {
                item->tuple.source = (cckey_bytes){files->files[i].ptr, files->files[i].len};
                goto done;
            }
        }
    }
    if (files->n == files->cap || 2 * (files->n + 1) > files->index_cap) {
        if (grow_files(files) != 0) {
            snprintf(err, err_len, "%s:%zu:%zu: out of memory", label, item->line, item->source_col);
            manifest_item_clear(item);
            return MANIFEST_BAD;
        }
        for (slot = h & (files->index_cap - 1); files->index[slot]; slot = (slot + 1) & (files->index_cap - 1)) {}
    }
    char why[256];
    cli_file f;
    if (cli_file_map(path, &f, why, sizeof why) != 0) {
        snprintf(err, err_len, "%s:%zu:%zu: cannot read source_file \"%s\": %s", label, item->line,
                 item->source_col, path, why);
        manifest_item_clear(item);
        return MANIFEST_BAD;
    }
    if (files->n >= MANIFEST_MAX_MAPS && f.map && to_heap(files, &f) != 0) {
        snprintf(err, err_len, "%s:%zu:%zu: out of memory", label, item->line, item->source_col);
        cli_file_unmap(&f);
        manifest_item_clear(item);
        return MANIFEST_IO;
    }
    files->paths[files->n] = item->source_path;
    item->source_path = NULL;   /* the table owns it now */
    files->files[files->n++] = f;
    files->index[slot] = files->n;
    files->bytes += f.len;
    item->tuple.source = (cckey_bytes){f.ptr, f.len};
done:
    free(item->source_path);
    item->source_path = NULL;
    return MANIFEST_ITEM;
}

size_t manifest_column_of(const char *line, size_t off)
{
    size_t col = 1;
    for (size_t i = 0; i < off; i++) col += ((unsigned char)line[i] & 0xc0) != 0x80;
    return col;
}

int manifest_parse_into(mj_parser *ps, char *out, const char *line, size_t len, const char *label,
                        size_t line_no, const char *base_dir, manifest_item *item, char *err, size_t err_len)
{
    line_ctx c = {line, len, label, line_no, err, err_len};
    *item = (manifest_item){.line = line_no};
    mj_line j;
    size_t off;
    char what[160];
    int r = mj_parse(ps, line, len, out, &j, &off, what, sizeof what);
    if (r == -2) return bad(&c, NULL, "out of memory");
    /* A raw NUL is never JSON, so only a line that failed can hold one: say
     * what it is rather than "invalid JSON". */
    const char *nul = r ? memchr(line, '\0', len) : NULL;
    if (nul) {
        snprintf(err, err_len, "%s:%zu:%zu: a raw NUL byte (inside a string, write \\u0000)", label, line_no,
                 manifest_column_of(line, (size_t)(nul - line)));
        return MANIFEST_BAD;
    }
    if (r) {
        snprintf(err, err_len, "%s:%zu:%zu: invalid JSON: %s", label, line_no, manifest_column_of(line, off), what);
        return MANIFEST_BAD;
    }
    if (j.root != MJ_OBJECT) return bad(&c, NULL, "expected a JSON object, found %s", mj_kind_name(j.root));
    cckey_bytes dev, name, src;
    r = string_member(&c, &j.device, "device", &dev);
    if (!r) r = string_member(&c, &j.name, "name", &name);
    if (!r && j.source.present && j.source_file.present)
        r = bad(&c, "source_file", "give \"source\" or \"source_file\", not both");
    if (!r && !j.source.present && !j.source_file.present)
        r = bad(&c, NULL, "missing \"source\" (a string) or \"source_file\" (a path)");
    if (!r) r = j.source.present ? string_member(&c, &j.source, "source", &src)
                                 : string_member(&c, &j.source_file, "source_file", &src);
    if (!r) r = check_options(&c, &j, item);
    if (!r) {
        item->tuple.device = dev;
        item->tuple.name = name;
        item->language_kind = j.language.present ? j.language.kind : MJ_NONE;
        item->language = j.language.str;
        if (j.source.present) {
            item->tuple.source = src;
        } else {
            item->source_file = src;
            item->source_off = j.source_file.key_off;   /* a column costs a pass: only for messages */
            r = check_source_file(&c, src);
        }
    }
    if (j.n_unknown) {
        char typo[64];
        size_t typo_off = 0;
        const char *guess = manifest_near_member(&j, typo, &typo_off);
        if (r && guess) {   /* the typo is likely the cause: say so in the error */
            size_t used = strlen(err);
            snprintf(err + used, err_len - used, " (\"%s\" is not a member; did you mean \"%s\"?)", typo, guess);
        } else if (guess) {
            manifest_warn_near_member(label, line_no, manifest_column_of(line, typo_off), typo, guess);
        }
    }
    if (r) *item = (manifest_item){.line = line_no};
    (void)base_dir;
    return r ? r : MANIFEST_ITEM;
}

int manifest_parse_line(const char *line, size_t len, const char *label, size_t line_no,
                        const char *base_dir, manifest_item *item, manifest_files *files,
                        char *err, size_t err_len)
{
    mj_parser ps = {0};
    char *out = malloc(len ? len : 1);
    if (!out) {
        *item = (manifest_item){.line = line_no};
        snprintf(err, err_len, "%s:%zu:1: out of memory", label, line_no);
        return MANIFEST_BAD;
    }
    int r = manifest_parse_into(&ps, out, line, len, label, line_no, base_dir, item, err, err_len);
    if (r == MANIFEST_ITEM && item->tuple.n_options) {
        /* The options live in the parser's scratch: give the item its own. */
        cckey_option *o = malloc(item->tuple.n_options * sizeof *o);
        if (!o) {
            *item = (manifest_item){.line = line_no};
            snprintf(err, err_len, "%s:%zu:1: out of memory", label, line_no);
            r = MANIFEST_BAD;
        } else {
            memcpy(o, item->tuple.options, item->tuple.n_options * sizeof *o);
            item->opts = o;
            item->tuple.options = o;
        }
    }
    mj_parser_free(&ps);
    if (r != MANIFEST_ITEM) {
        free(out);
        return r;
    }
    item->owned = out;
    if (item->source_file.ptr) item->source_col = manifest_column_of(line, item->source_off);
    if (item->source_file.ptr && !(item->source_path = manifest_join_path(base_dir, item->source_file))) {
        manifest_item_clear(item);
        snprintf(err, err_len, "%s:%zu:1: out of memory", label, line_no);
        return MANIFEST_BAD;
    }
    return files ? manifest_resolve(item, files, label, err, err_len) : MANIFEST_ITEM;
}

/* A blank line holds JSON whitespace only (space, tab, CR; the LF ended
 * it): the one rule for every reader. A form feed or vertical tab is no
 * JSON whitespace, so such a line is parsed, and refused with its column,
 * as it would be beside a tuple (6f74adb skipped both alone, yet refused
 * both before a '{'). */
static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') return false;
    return true;
}

/* Room to read more: unread bytes move to the front, and the buffer grows
 * (never past what the longest allowed line needs) only when a line in
 * progress fills it. 0, or -1 with errno ENOMEM. */
#define READ_BYTES ((size_t)1 << 20)

static int make_room(manifest *m)
{
    if (m->pinned && m->end == m->cap && m->start > 0) return MANIFEST_FULL;
    if (!m->pinned && m->start > 0 && (m->end == m->cap || m->start >= m->cap / 2)) {
        memmove(m->buf, m->buf + m->start, m->end - m->start);
        m->end -= m->start;
        m->start = 0;
    }
    if (m->end < m->cap) return 0;
    size_t most = m->max_line + 2 + READ_BYTES;   /* a full line, "\r\n", and a read's worth */
    size_t cap = m->cap ? m->cap * 2 : m->pinned ? MANIFEST_PINNED_BYTES : READ_BYTES;
    if (cap > most) cap = most;
    if (cap <= m->cap) cap = m->cap + READ_BYTES;
    char *buf = realloc(m->buf, cap);
    if (!buf) {
        errno = ENOMEM;
        return -1;
    }
    m->buf = buf;
    m->cap = cap;
    return 0;
}

/* One physical line, its ending still on: 1 with [*p, *p + *n), 0 at end of
 * input, or MANIFEST_IO with err set. The line counter is not advanced. */
/* The first '\n' in buf[from, end): from manifest_index_lines' index where
 * it covers from, else by memchr. */
static char *find_newline(manifest *m, size_t from)
{
    if (from >= m->nl_from && from < m->nl_to) {
        while (m->nl_next < m->nl_n && m->nl[m->nl_next] < from) m->nl_next++;
        if (m->nl_next < m->nl_n) return m->buf + m->nl[m->nl_next];
        from = m->nl_to;
    }
    /* No memchr on an empty range: buf is still NULL before the first read. */
    return m->end > from ? memchr(m->buf + from, '\n', m->end - from) : NULL;
}

/* At the end of a regular file: did it end where it did when opened? A
 * file cut short while read would otherwise end in a torn line (an
 * "invalid JSON" that is not the manifest's fault) or, cut at a line end,
 * lose its last tuples without a word. 0, or MANIFEST_IO with err set. */
static int check_whole(const manifest *m, char *err, size_t err_len)
{
    if (!m->opened_size) return 0;
    off_t at = m->mapped ? (off_t)(m->map_at + m->end) : lseek(fileno(m->f), 0, SEEK_CUR);
    if (at < 0 || (uint64_t)at >= m->opened_size) return 0;
    snprintf(err, err_len, "%s: the manifest shrank while it was being read (%llu bytes when opened, "
             "%llu at the end); stopped", m->label, (unsigned long long)m->opened_size, (unsigned long long)at);
    return MANIFEST_IO;
}

static int next_physical(manifest *m, char **p, size_t *n, char *err, size_t err_len)
{
    size_t scanned = m->start;   /* no '\n' in [start, scanned) */
    for (;;) {
        char *nl = find_newline(m, scanned);
        size_t len = nl ? (size_t)(nl - (m->buf + m->start)) : m->end - m->start;
        /* The ending is not part of the limit: a "\r" may still be one. */
        if (len > m->max_line + (!nl || (len && nl[-1] == '\r'))) {
            snprintf(err, err_len, "%s:%zu: line is longer than the limit of %zu bytes (raise it with --max-line)",
                     m->label, m->line + 1, m->max_line);
            return MANIFEST_IO;
        }
        if (!nl && m->eof && check_whole(m, err, err_len)) return MANIFEST_IO;
        if (nl || (m->eof && m->end > m->start)) {
            *p = m->buf + m->start;
            *n = nl ? len + 1 : len;
            m->start += *n;
            m->offset += *n;
            return 1;
        }
        if (m->eof) return 0;
        if (m->mapped) {
            size_t had = m->end;
            int more = manifest_window_more(m);
            if (more == MANIFEST_FULL) return MANIFEST_FULL;
            if (more != 0) {
                snprintf(err, err_len, "%s: cannot map it: %s", m->label, strerror(errno));
                return MANIFEST_IO;
            }
            scanned = had;   /* a window at the same place or larger: no '\n' in [start, had) */
            continue;
        }
        int room = make_room(m);
        if (room == MANIFEST_FULL) return MANIFEST_FULL;
        if (room != 0) {
            snprintf(err, err_len, "%s:%zu: out of memory holding a line of more than %zu bytes (a lower --max-line "
                     "refuses such lines sooner)", m->label, m->line + 1, m->end - m->start);
            return MANIFEST_IO;
        }
        scanned = m->end;   /* all of [start, end) held no '\n' */
        ssize_t got;
        size_t want = m->cap - m->end;
        if (m->pinned && want > READ_BYTES) want = READ_BYTES;   /* little unread at a swap */
        do got = read(fileno(m->f), m->buf + m->end, want);
        while (got < 0 && errno == EINTR);
        if (got < 0) {
            snprintf(err, err_len, "%s: read error: %s", m->label, strerror(errno));
            return MANIFEST_IO;
        }
        if (got == 0) m->eof = true;
        m->end += (size_t)got;
    }
}

int manifest_read_line(manifest *m, const char **line, size_t *len, char *err, size_t err_len)
{
    for (;;) {
        char *p;
        size_t l;
        int r = next_physical(m, &p, &l, err, err_len);
        if (r != 1) return r ? r : MANIFEST_EOF;   /* MANIFEST_FULL included */
        m->line++;
        if (l && p[l - 1] == '\n') l--;
        if (l && p[l - 1] == '\r') l--;   /* CRLF manifests */
        /* A byte order mark (editors on Windows add one) is not JSON; RFC 8259
         * lets a parser ignore it, and columns then count from after it. */
        size_t skip = m->line == 1 && l >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
        if (blank(p + skip, l - skip)) continue;
        *line = p + skip;
        *len = l - skip;
        return MANIFEST_ITEM;
    }
}

int manifest_swap(manifest *m, char **buf, size_t *cap)
{
    if (m->mapped) return manifest_window_swap(m, buf, cap);
    size_t left = m->end - m->start, want = left > MANIFEST_PINNED_BYTES ? left : MANIFEST_PINNED_BYTES;
    char *spare = *buf;
    size_t spare_cap = *cap;
    if (spare_cap < want || spare_cap > 2 * want + MANIFEST_PINNED_BYTES) {
        /* Too small for what is unread, or grown for a huge line once. */
        char *fresh = malloc(want ? want : 1);
        if (!fresh) return -1;
        free(spare);
        spare = fresh;
        spare_cap = want;
    }
    if (left) memcpy(spare, m->buf + m->start, left);
    *buf = m->buf;
    *cap = m->cap;
    m->nl_n = m->nl_next = m->nl_from = m->nl_to = 0;   /* the offsets were into the old buffer */
    m->buf = spare;
    m->cap = spare_cap;
    m->start = 0;
    m->end = left;
    return 0;
}

void manifest_trim(manifest *m)
{
    size_t left = m->end - m->start;
    if (m->cap <= 4 * READ_BYTES || left > READ_BYTES) return;
    char *buf = malloc(READ_BYTES);
    if (!buf) return;   /* keeping the large one is no error */
    memcpy(buf, m->buf + m->start, left);
    free(m->buf);
    m->buf = buf;
    m->cap = READ_BYTES;
    m->start = 0;
    m->end = left;
}

bool manifest_parse_max_line(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || *s == '-' || *s == ' ' || errno) return false;
    unsigned shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20 : *end == 'G' || *end == 'g' ? 30 : 0;
    if (shift) end++;
    if (*end || v > (SIZE_MAX >> 2 >> shift) || (v << shift) < 1024) return false;
    *out = (size_t)v << shift;
    return true;
}

int manifest_next(manifest *m, manifest_item *item, manifest_files *files, char *err, size_t err_len)
{
    const char *line;
    size_t len;
    int r = manifest_read_line(m, &line, &len, err, err_len);
    if (r != MANIFEST_ITEM) return r;
    r = manifest_parse_line(line, len, m->label, m->line, m->base_dir, item, files, err, err_len);
    manifest_trim(m);   /* the item holds its own copies now */
    return r;
}
