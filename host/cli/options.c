/* Option sets as people write them (-O of key and scan, scan's
 * --options-file lines), into pairs: split as sh splits a command line,
 * then flags that take an argument paired with it (warm/warm_args.c). */
#include "cli.h"
#include "warm/warm.h"

#include <stdlib.h>
#include <string.h>

void cli_opts_free(cli_opts *o)
{
    for (size_t i = 0; i < o->n; i++) free((void *)o->v[i].key.ptr), free((void *)o->v[i].value.ptr);
    free(o->v);
    memset(o, 0, sizeof *o);
}

static char *copy(const char *s, size_t n)
{
    char *c = malloc(n + 1);
    if (c) memcpy(c, s, n), c[n] = '\0';
    return c;
}

int cli_opts_add(void *user, const char *k, size_t kl, const char *v, size_t vl)
{
    cli_opts *o = user;
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 8;
        cckey_option *p = realloc(o->v, cap * sizeof *p);
        if (!p) return -1;
        o->v = p, o->cap = cap;
    }
    char *kc = copy(k, kl), *vc = copy(v, vl);
    if (!kc || !vc) {
        free(kc), free(vc);
        return -1;
    }
    o->v[o->n++] = (cckey_option){{kc, kl}, {vc, vl}};
    return 0;
}

typedef struct words {
    char **w;
    size_t *len, n, cap;
} words;

static int add_word(void *user, const char *word, size_t len)
{
    words *ws = user;
    if (ws->n == ws->cap) {
        size_t cap = ws->cap ? ws->cap * 2 : 8;
        char **w = realloc(ws->w, cap * sizeof *w);
        if (w) ws->w = w;
        size_t *l = w ? realloc(ws->len, cap * sizeof *l) : NULL;
        if (!l) return -1;
        ws->len = l, ws->cap = cap;
    }
    if (!(ws->w[ws->n] = copy(word, len))) return -1;
    ws->len[ws->n++] = len;
    return 0;
}

int cli_opts_parse(const char *text, cli_opts *out, char *why, size_t why_len)
{
    /* '-' alone (blanks around it allowed) is the empty set, as "" is. */
    size_t a = strspn(text, " \t"), b = a < strlen(text) ? strspn(text + a + 1, " \t") : 0;
    if (text[a] == '-' && a + 1 + b == strlen(text)) return CLI_OK;
    words ws = {0};
    int rc = cli_split_flags(text, add_word, &ws, why, why_len);
    if (rc == 0) {
        rc = warm_flags_tokenize((const char *const *)ws.w, ws.len, ws.n, cli_opts_add, out, why, why_len);
        rc = rc == CCKEY_FLAGS_OOM ? -1 : rc;
    }
    for (size_t i = 0; i < ws.n; i++) free(ws.w[i]);
    free(ws.w), free(ws.len);
    if (rc == 0) return CLI_OK;
    return strcmp(why, "out of memory") == 0 ? CLI_FAIL : CLI_USAGE;
}
