/* cckey cache config: every setting of a cache folder with its value and
 * where that comes from (command line, environment, cckey.conf, default),
 * as ccache -p shows them; one set or unset, as ccache -o does. The values
 * are checked here as their readers check them (the store reads max_size,
 * max_age, compression and compression_level; warm and cache the remote
 * settings), and a URL or a secret's file is shown with its secrets
 * masked. */
#include "cache_config.h"

#include "json_out.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct setting {
    const char *name;   /* as the command line spells it */
    const char *key;    /* as cckey.conf spells it */
    const char *def;    /* its default, as shown */
    /* NULL when value is good, else why not (a static text) */
    const char *(*check)(const char *value);
} setting;

static const char *check_size(const char *v)
{
    uint64_t b;
    return cckey_size_parse(v, &b) == CCKEY_OK ? NULL : "wants a size such as 500M or 10G";
}

static const char *check_entry_size(const char *v)
{
    uint64_t b;
    return cckey_size_parse(v, &b) == CCKEY_OK && b >= 192 ? NULL : "wants a size such as 64M";
}

static const char *check_age(const char *v)
{
    int64_t s;
    return cckey_age_parse(v, &s) == CCKEY_OK ? NULL : "wants an age such as 30d, 12h, 90m, 45s or 2w";
}

static const char *check_bool(const char *v)
{
    return strcmp(v, "true") == 0 || strcmp(v, "false") == 0 ? NULL : "wants true or false";
}

static const char *check_path(const char *v) { return *v ? NULL : "wants a file's path"; }

static const char *check_compression(const char *v)
{
    return strcmp(v, "none") == 0 || strcmp(v, "zstd") == 0 ? NULL : "wants none or zstd";
}

static const char *check_level(const char *v)
{
    unsigned long l;
    bool neg = *v == '-';
    bool ok = cli_parse_uint(v + neg, 0, neg ? 7 : 22, &l);
    return ok ? NULL : "wants a whole number from -7 to 22 (0: zstd's default)";
}

/* A remote URL as cckey_store_add_remote reads it (syntax only: no
 * connection is made). */
static const char *check_url(const char *v)
{
    cckey_store *s;
    if (cckey_store_open_read_only(&s, "/nonexistent/cckey-config-check") != CCKEY_OK) return "cannot be checked";
    cckey_status st = cckey_store_add_remote(s, v, NULL);
    /* The library's reason (the URL redacted in it), read before close. */
    static char unavailable[700];
    if (st == CCKEY_ERR_UNAVAILABLE)
        snprintf(unavailable, sizeof unavailable, "names a kind of remote this cckey cannot reach: %s",
                 cckey_last_error());
    cckey_store_close(s);
    if (st == CCKEY_ERR_UNAVAILABLE) return unavailable;
    return st == CCKEY_OK ? NULL : "is not a remote URL (redis://HOST[:PORT][/DB] or http(s)://HOST/PATH)";
}

static const setting settings[] = {
    {"max-size", "max_size", "none", check_size},
    {"max-age", "max_age", "none", check_age},
    {"remote", "remote", "none", check_url},
    {"remote-only-read", "remote_only_read", "false", check_bool},
    {"remote-key-file", "remote_key_file", "none", check_path},
    {"remote-max-entry", "remote_max_entry", "256M", check_entry_size},
    {"compression", "compression", "none", check_compression},
    {"compression-level", "compression_level", "0", check_level},
};
enum { N_SETTINGS = sizeof settings / sizeof *settings };

/* The setting called name (either spelling), or NULL. */
static const setting *find(const char *name)
{
    for (size_t i = 0; i < N_SETTINGS; i++)
        if (strcmp(name, settings[i].name) == 0 || strcmp(name, settings[i].key) == 0) return &settings[i];
    return NULL;
}

static void unknown(const char *name)
{
    const char *names[N_SETTINGS];
    for (size_t i = 0; i < N_SETTINGS; i++) names[i] = settings[i].name;
    const char *guess = cli_suggest(name, names, N_SETTINGS);
    bool plain = strlen(name) <= 40 && strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") == strlen(name);
    cli_error("cache config: unknown setting%s%s%s%s%s%s (settings: max-size, max-age, remote, remote-only-read, "
              "remote-key-file, remote-max-entry, compression, compression-level)", plain ? " \"" : "",
              plain ? name : "", plain ? "\"" : "", guess ? "; did you mean \"" : "", guess ? guess : "",
              guess ? "\"?" : "");
}

/* v with the secrets of a remote URL masked: a password before '@', a
 * bearer= or bearer_file's token. */
static void mask(const char *v, char *out, size_t cap)
{
    snprintf(out, cap, "%s", v);
    char *scheme = strstr(out, "://"), *bar = strchr(out, '|');
    if (scheme && (!bar || scheme < bar)) {
        char *user = scheme + 3, *at = NULL;
        for (char *p = user; *p && (!bar || p < bar); p++)
            if (*p == '@') at = p;
        char *colon = at ? memchr(user, ':', (size_t)(at - user)) : NULL;
        char *from = colon ? colon + 1 : user;
        if (at) memmove(from + 3, at, strlen(at) + 1), memcpy(from, "***", 3);
    }
    for (char *b = strstr(out, "|bearer="); b; b = strstr(b + 1, "|bearer=")) {
        char *end = strchr(b + 8, '|');
        memmove(b + 11, end ? end : "", strlen(end ? end : "") + 1);
        memcpy(b + 8, "***", 3);
    }
}

/* One setting's values and where they came from. */
typedef struct shown {
    const char *origin;
    const char *vals[64];
    size_t n;
} shown;

static void from_conf(const setting *st, const conf_file *f, shown *out)
{
    for (size_t i = 0; i < f->n; i++) {
        const conf_line *l = &f->l[i];
        if (!l->name || find(l->name) != st || st->check(l->value)) continue;   /* bad lines: warned about */
        if (strcmp(st->key, "remote") != 0 || strcmp(out->origin, "default") == 0) out->n = 0;   /* the last wins */
        if (out->n < 64) out->vals[out->n++] = l->value;
        out->origin = "cckey.conf";
    }
}

/* The remote list: --remote, else $CCKEY_REMOTE's words, else cckey.conf. */
static void remotes_of(const cli_remotes *r, char *env_copy, shown *out)
{
    if (r->none) {
        *out = (shown){"command line", {"none"}, 1};
    } else if (r->n) {
        out->origin = "command line", out->n = 0;
        for (size_t i = 0; i < r->n && i < 64; i++) out->vals[out->n++] = r->urls[i];
    } else if (env_copy) {
        out->origin = "environment", out->n = 0;
        for (char *save = NULL, *w = strtok_r(env_copy, " \t\n", &save); w && out->n < 64;
             w = strtok_r(NULL, " \t\n", &save))
            out->vals[out->n++] = w;
    }
}

/* Where setting st's value comes from. */
static void resolve(const setting *st, const conf_file *f, const cli_remotes *r, char *env_remote, shown *out)
{
    *out = (shown){"default", {st->def}, 1};
    from_conf(st, f, out);
    if (strcmp(st->key, "remote") == 0) remotes_of(r, env_remote, out);
    if (strcmp(st->key, "remote_only_read") == 0 && r->only_read) *out = (shown){"command line", {"true"}, 1};
    const char *key = getenv("CCKEY_REMOTE_KEY");
    if (strcmp(st->key, "remote_key_file") == 0 && key && *key)
        *out = (shown){"environment", {"(the secret in $CCKEY_REMOTE_KEY, not shown)"}, 1};
}

/* Each line of f that its readers cannot use, said once. */
static void warn_bad_lines(const char *dir, const conf_file *f)
{
    for (size_t i = 0; i < f->n; i++) {
        const conf_line *l = &f->l[i];
        const setting *st = l->name ? find(l->name) : NULL;
        const char *why = l->garbage ? "not NAME = VALUE" : !l->name ? NULL : !st ? "unknown setting" : st->check(l->value);
        bool plain = l->name && strlen(l->name) <= 40 && strspn(l->name, "abcdefghijklmnopqrstuvwxyz0123456789_-") == strlen(l->name);
        if (why) cli_warn("cache config: %s/cckey.conf:%zu: %s%s%s (ignored; its value is not shown)", dir, i + 1,
                          plain ? l->name : "", plain ? " " : "", why);
    }
}

static void print_text(const char *origin, const char *name, const char *value)
{
    char masked[8192];
    mask(value, masked, sizeof masked);
    printf("(%s) %s = %s\n", origin, name, masked);
}

/* {"setting", "value", "origin"}: the value a string, or for remote the
 * list of them. */
static void add_json(cli_json *w, const char *origin, const char *name, const shown *v)
{
    char masked[8192];
    bool list = strcmp(name, "remote") == 0;
    cli_json_object(w);
    cli_json_kstr(w, "setting", name);
    cli_json_key(w, "value");
    if (list) cli_json_array(w);
    for (size_t i = 0; i < v->n && (list || i == 0); i++) mask(v->vals[i], masked, sizeof masked), cli_json_str(w, masked);
    if (list) cli_json_end(w);
    else if (!v->n) cli_json_null(w);
    cli_json_kstr(w, "origin", origin);
    cli_json_end(w);
}

/* cache config [SETTING]: every setting, or one. */
static int show(const char *dir, const char *dir_origin, const setting *only, cli_format fmt, const cli_remotes *r)
{
    conf_file f;
    if (!conf_file_read(dir, &f)) return CLI_FAIL;
    warn_bad_lines(dir, &f);
    const char *env = getenv("CCKEY_REMOTE");
    char *env_remote = env && *env ? strdup(env) : NULL;
    cli_json w, *arr = fmt == CLI_TEXT ? NULL : &w;
    if (arr) cli_json_init(arr, fmt == CLI_JSON ? CLI_JSON_INDENT : CLI_JSON_COMPACT, false), cli_json_array(arr);
    shown d = {dir_origin, {dir}, 1};
    if (!only && arr) add_json(arr, dir_origin, "cache-dir", &d);
    else if (!only) print_text(dir_origin, "cache-dir", dir);
    for (size_t i = 0; i < N_SETTINGS; i++) {
        if (only && only != &settings[i]) continue;
        shown v;
        resolve(&settings[i], &f, r, env_remote, &v);
        if (arr) add_json(arr, v.origin, settings[i].name, &v);
        for (size_t k = 0; !arr && k < v.n; k++) print_text(v.origin, settings[i].name, v.vals[k]);
    }
    int rc = CLI_OK;
    if (arr) {
        cli_json_end(arr);
        if (cli_json_put(arr, stdout, "\n") != 0) cli_error("cache config: out of memory"), rc = CLI_FAIL;
        cli_json_free(arr);
    }
    free(env_remote);
    conf_file_free(&f);
    return rc;
}

/* Every value good for st, or a usage error said. */
static bool values_ok(const setting *st, char *const *vals, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *why = st->check(vals[i]);
        if (!why) continue;
        bool secret = strcmp(st->key, "remote") == 0;   /* a URL may hold a password: not echoed */
        cli_error("cache config: %s %s%s%s%s", st->name, why, secret ? "" : " (not \"", secret ? "" : vals[i],
                  secret ? "" : "\")");
        return false;
    }
    return true;
}

/* Whether f lists value under key already (said: adding it twice would
 * ask the same remote twice). */
static bool listed(const conf_file *f, const char *key, const char *value)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->l[i].name && strcmp(f->l[i].name, key) == 0 && strcmp(f->l[i].value, value) == 0) {
            cli_error("cache config: cckey.conf:%zu has this remote already", i + 1);
            return true;
        }
    return false;
}

/* cache config remote add|remove URL, remote URL..., or any other setting's VALUE. */
static int set(const char *dir, const setting *st, char **vals, size_t n)
{
    bool list = strcmp(st->key, "remote") == 0;
    int mode = CONF_REPLACE;
    if (list && n == 2 && (strcmp(vals[0], "add") == 0 || strcmp(vals[0], "remove") == 0))
        mode = strcmp(vals[0], "add") == 0 ? CONF_ADD : CONF_REMOVE, vals++, n--;
    if (!list && n != 1) {
        cli_error("cache config: %s takes one value (or none to unset it)", st->name);
        return CLI_USAGE;
    }
    bool none = n == 1 && mode == CONF_REPLACE && strcmp(vals[0], "none") == 0;
    if (none) n = 0;
    else if (mode != CONF_REMOVE && !values_ok(st, vals, n)) return CLI_USAGE;
    /* Setting a value may create the cache; opening tags it as one. */
    cckey_store *s;
    if (cckey_store_open(&s, dir, 0) != CCKEY_OK) {
        cli_error("cache config: %s", cckey_last_error());
        return CLI_FAIL;
    }
    cckey_store_close(s);
    conf_file f;
    if (!conf_file_read(dir, &f)) return CLI_FAIL;
    int rc = mode == CONF_ADD && listed(&f, st->key, vals[0]) ? CLI_USAGE : conf_file_update(dir, &f, st->key, vals, n, mode);
    conf_file_free(&f);
    return rc;
}

int cli_cache_config(int n, char **argv, const char *dir, const char *dir_origin, cli_format fmt,
                     const cli_remotes *r)
{
    const setting *st = n ? find(argv[0]) : NULL;
    if (n && !st) {
        unknown(argv[0]);
        return CLI_USAGE;
    }
    if (!dir) {
        cli_error("cache config: no cache folder: give --cache-dir DIR (or set CCKEY_CACHE_DIR or HOME)");
        return CLI_USAGE;
    }
    if (n >= 2) return set(dir, st, argv + 1, (size_t)n - 1);
    if (access(dir, F_OK) != 0)   /* showing creates nothing */
        cli_warn("cache config: %s: no cache folder here yet: these are the settings it would have", dir);
    return show(dir, dir_origin, st, fmt, r);
}
