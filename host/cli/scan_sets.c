/* scan's option sets: -O's text and --options-file's lines, into the
 * [KEY, VALUE] pairs a manifest holds (see scan_sets.h). */
#include "scan_sets.h"
#include "warm/warm.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int push_set(scan_sets *s, json_t *pairs)
{
    json_t **v = realloc(s->v, (s->n + 1) * sizeof *v);
    if (!v) {
        json_decref(pairs);
        return -1;
    }
    s->v = v;
    s->v[s->n++] = pairs;
    return 0;
}

void scan_sets_free(scan_sets *s)
{
    for (size_t i = 0; i < s->n; i++) json_decref(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

cckey_option *scan_set_options(json_t *pairs)
{
    cckey_option *opts = calloc(json_array_size(pairs) + 1, sizeof *opts);
    size_t i;
    json_t *p;
    json_array_foreach(pairs, i, p) {
        if (!opts) break;
        json_t *k = json_array_get(p, 0), *v = json_array_get(p, 1);
        opts[i] = (cckey_option){{json_string_value(k), json_string_length(k)},
                                 {json_string_value(v), json_string_length(v)}};
    }
    return opts;
}

/* pairs as a JSON array [[k, v], ...]; NULL when out of memory. */
static json_t *pairs_json(const cli_opts *set)
{
    json_t *pairs = json_array();
    for (size_t i = 0; pairs && i < set->n; i++) {
        const cckey_option *p = &set->v[i];
        json_t *pair = json_pack("[s#,s#]", p->key.ptr, (int)p->key.len, p->value.ptr, (int)p->value.len);
        if (!pair || json_array_append_new(pairs, pair) != 0) {
            json_decref(pairs);
            return NULL;
        }
    }
    return pairs;
}

/* One option set from its text form (see usage): 0, -1 out of memory, or
 * CLI_USAGE once a bad quote, a flag missing its argument or flags whose
 * order the key cannot keep are reported (where names the text's origin). */
int scan_sets_add(scan_sets *s, const char *text, const char *where)
{
    char why[512];
    cli_opts set = {0};
    int rc = cli_opts_parse(text, &set, why, sizeof why);
    if (rc == CLI_OK && warm_options_check(set.v, set.n, why, sizeof why) != 0) rc = CLI_USAGE;
    json_t *pairs = rc == CLI_OK ? pairs_json(&set) : NULL;
    cli_opts_free(&set);
    if (rc == CLI_USAGE) cli_error("scan: %s: %s", where, why);
    if (rc == CLI_USAGE) return CLI_USAGE;
    return pairs ? push_set(s, pairs) : -1;
}

/* The pairs of a JSON set checked as warm would check them. */
static int check_json_set(json_t *pairs, char *why, size_t why_len)
{
    cckey_option *opts = scan_set_options(pairs);
    if (!opts) return snprintf(why, why_len, "out of memory"), -1;
    int rc = warm_options_check(opts, json_array_size(pairs), why, why_len);
    free(opts);
    return rc;
}

/* An --options-file line holding a JSON array of [KEY, VALUE] pairs. */
static int add_json_set(scan_sets *s, const char *text, const char *path, size_t line_no)
{
    json_error_t e;
    json_t *pairs = json_loads(text, JSON_REJECT_DUPLICATES, &e);
    const char *bad = NULL;
    if (!pairs) {
        cli_error("%s:%zu:%d: %s", path, line_no, e.column, e.text);
        return CLI_USAGE;
    }
    if (!json_is_array(pairs)) bad = "expected a JSON array of [KEY, VALUE] pairs";
    size_t i;
    json_t *p;
    json_array_foreach(pairs, i, p) {
        if (bad) break;
        if (!json_is_array(p) || json_array_size(p) != 2 || !json_is_string(json_array_get(p, 0)) ||
            !json_is_string(json_array_get(p, 1)))
            bad = "each option is a [KEY, VALUE] pair of strings";
    }
    char why[512];
    if (!bad && check_json_set(pairs, why, sizeof why) != 0) bad = why;
    if (bad) {
        cli_error("%s:%zu:1: %s", path, line_no, bad);
        json_decref(pairs);
        return CLI_USAGE;
    }
    return push_set(s, pairs);
}

int scan_sets_read(scan_sets *s, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        cli_error("scan: %s: %s", path, strerror(errno));
        return CLI_USAGE;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = CLI_OK;
    for (size_t line_no = 1; (n = getline(&line, &cap, f)) >= 0; line_no++) {
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
        const char *p = line;
        while (isspace((unsigned char)*p)) p++;
        if (!*p || *p == '#') continue;
        char where[4200];
        snprintf(where, sizeof where, "%s:%zu", path, line_no);
        int r = *p == '[' ? add_json_set(s, p, path, line_no) : scan_sets_add(s, p, where);
        if (r == CLI_USAGE) {
            rc = CLI_USAGE;
            break;
        }
        if (r != 0) {
            cli_error("scan: out of memory");
            rc = CLI_FAIL;
            break;
        }
    }
    free(line);
    fclose(f);
    return rc;
}
