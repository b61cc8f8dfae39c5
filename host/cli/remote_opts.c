/* Which remote caches a command uses, and what it says about them. */
#include "remote_opts.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ps shows a command line as the process holds it: once the URL is
 * copied, its user, password and bearer tokens are overwritten in place
 * (as curl does with -u), so they show only while the process starts.
 * Over-masking (an '@' in a path) hides more of ps' view, nothing else. */
static void mask_in_place(char *arg)
{
    char *from = strstr(arg, "://"), *at = from ? strrchr(from, '@') : NULL;
    if (at) memset(from + 3, '*', (size_t)(at - from - 3));
    for (char *b = strstr(arg, "bearer="); b; b = strstr(b + 7, "bearer=")) memset(b + 7, '*', strcspn(b + 7, "|"));
}

int cli_remotes_option(cli_remotes *r, int c, char *arg)
{
    switch (c) {
    case CLI_OPT_REMOTE: {
        char **u = realloc(r->urls, (r->n + 1) * sizeof *u);
        if (!u) return -1;
        r->urls = u;
        if (!(u[r->n] = strdup(arg))) return -1;
        mask_in_place(arg);
        r->n++;
        return 1;
    }
    case CLI_OPT_NO_REMOTE: r->none = true; return 1;
    case CLI_OPT_REMOTE_ONLY_READ: r->only_read = true; return 1;
    default: return 0;
    }
}

void cli_remotes_free(cli_remotes *r)
{
    for (size_t i = 0; i < r->n; i++) free(r->urls[i]);
    free(r->urls);
    memset(r, 0, sizeof *r);
}

static void warn(void *user, const char *message)
{
    cli_warn("%s: %s", (const char *)user, message);
}

static int add(cckey_store *s, const char *url, const cckey_remote_settings *set, const char *who, const char *from)
{
    if (cckey_store_add_remote(s, url, set) == CCKEY_OK) return 0;
    cli_error("%s: %s%s", who, from, cckey_last_error());
    return CLI_USAGE;
}

static char *trim(char *p)
{
    while (isspace((unsigned char)*p)) p++;
    size_t n = strlen(p);
    while (n && isspace((unsigned char)p[n - 1])) p[--n] = '\0';
    return p;
}

/* The folder's remote settings that apply whichever way the remotes are
 * named: the signing secret's file and the entry cap. */
typedef struct conf_settings {
    char key_file[4096];
    uint64_t max_entry;
} conf_settings;

/* A remote setting of cckey.conf other than the remotes themselves: taken
 * into conf, or said (file and line, never the value) and ignored. */
static int first_pass(const char *name, const char *value, const char *who, const char *from, conf_settings *conf)
{
    bool plain = strlen(name) <= 40 && strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") == strlen(name);
    const char *why = NULL;
    if (!value) why = "expected NAME = VALUE";
    else if (strcmp(name, "remote_key_file") == 0 && *value) snprintf(conf->key_file, sizeof conf->key_file, "%s", value);
    else if (strcmp(name, "remote_max_entry") == 0 && (cckey_size_parse(value, &conf->max_entry) != CCKEY_OK ||
                                                        conf->max_entry < 192))
        why = "remote_max_entry wants a size such as 64M", conf->max_entry = 0;
    else if (strcmp(name, "remote_only_read") == 0 && strcmp(value, "true") && strcmp(value, "false"))
        why = "remote_only_read wants true or false";
    else if (strncmp(name, "remote", 6) == 0 && strcmp(name, "remote") && strcmp(name, "remote_key_file") &&
             strcmp(name, "remote_max_entry") && strcmp(name, "remote_only_read"))
        why = "unknown setting (remote, remote_only_read, remote_key_file, remote_max_entry)";
    if (why) cli_warn("%s: %s%s%s%s%s (ignored; its value is not shown)", who, from, why, plain && value ? " \"" : "",
                      plain && value ? name : "", plain && value ? "\"" : "");
    return 0;
}

/* One "NAME = VALUE" line of cckey.conf split (trimmed); false for a
 * blank line or a comment. *eq is NULL when the line has no '='. */
static bool conf_line(char *line, char **name, char **value)
{
    char *p = trim(line), *eq = strchr(p, '=');
    if (!*p || *p == '#') return false;
    *name = p, *value = NULL;
    if (eq) *eq = '\0', *name = trim(p), *value = trim(eq + 1);
    return true;
}

/* DIR/cckey.conf: "remote = URL" (repeatable), "remote_only_read =
 * true|false", "remote_key_file = PATH", "remote_max_entry = SIZE"; '#'
 * comments. A missing file is no config. A line that cannot be read (no
 * NAME = VALUE, an unknown remote setting, a bad value: a damaged or
 * truncated file) is said and ignored, so it never fails a look-up; a
 * remote URL that does not parse is a usage error. Values are never
 * echoed: a mistyped "remote_key = SECRET" must not print the secret. */
static int scan_config(const char *dir, const char *who, cckey_store *s, cckey_remote_settings *set,
                       conf_settings *conf)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/cckey.conf", dir);
    FILE *f = fopen(path, "r");
    if (!f) return errno == ENOENT || errno == ENOTDIR ? 0 : (cli_error("%s: %s: %s", who, path, strerror(errno)), CLI_FAIL);
    char line[8192], from[4400];
    int rc = 0;
    for (unsigned no = 1; rc == 0 && fgets(line, sizeof line, f); no++) {
        char *name, *value;
        if (!conf_line(line, &name, &value)) continue;
        snprintf(from, sizeof from, "%s:%u: ", path, no);
        if (!s) {   /* the first pass: settings only, and what is wrong said once */
            rc = first_pass(name, value, who, from, conf);
        } else if (value && strcmp(name, "remote") == 0) {
            rc = add(s, value, set, who, from);
        } else if (value && strcmp(name, "remote_only_read") == 0) {
            set->read_only = set->read_only || strcmp(value, "true") == 0;
        }
        /* Other settings belong to other parts of cckey. */
    }
    fclose(f);
    return rc;
}

/* The signing secret: $CCKEY_REMOTE_KEY, else the file that cckey.conf's
 * remote_key_file names (its bytes, less a final newline). 0, or an exit
 * status. */
static int secret_of(const char *dir, const char *who, const char *file, char **secret, size_t *len)
{
    *secret = NULL, *len = 0;
    const char *env = getenv("CCKEY_REMOTE_KEY");
    if (env && *env) {
        *len = strlen(env);
        return (*secret = strdup(env)) ? 0 : CLI_FAIL;
    }
    if (!*file) return 0;
    FILE *k = fopen(file, "rb");
    char buf[4096];
    size_t n = k ? fread(buf, 1, sizeof buf, k) : 0;
    if (k) fclose(k);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) n--;
    if (!n) {
        cli_error("%s: %s/cckey.conf: remote_key_file %s: %s", who, dir, file, k ? "empty" : strerror(errno));
        return CLI_USAGE;
    }
    *len = n;
    if (!(*secret = malloc(n))) return CLI_FAIL;
    memcpy(*secret, buf, n);
    memset(buf, 0, sizeof buf);
    return 0;
}

static int attach_all(cli_remotes *r, cckey_store *s, const char *dir, const char *who, cckey_remote_settings *set);

int cli_remotes_attach(cli_remotes *r, cckey_store *s, const char *dir, const char *who)
{
    if (r->none) return 0;
    conf_settings conf = {"", 0};
    char *secret = NULL;
    size_t secret_len = 0;
    int rc = scan_config(dir, who, NULL, NULL, &conf);
    if (rc == 0) rc = secret_of(dir, who, conf.key_file, &secret, &secret_len);
    cckey_remote_settings set = {.read_only = r->only_read, .warn = warn, .warn_user = (void *)who,
                                 .secret = secret, .secret_len = secret_len, .max_entry_bytes = conf.max_entry};
    if (rc == 0) rc = attach_all(r, s, dir, who, &set);
    if (secret) memset(secret, 0, secret_len);
    free(secret);
    return rc;
}

static int attach_all(cli_remotes *r, cckey_store *s, const char *dir, const char *who, cckey_remote_settings *set)
{
    if (r->n) {
        for (size_t i = 0; i < r->n; i++)
            if (add(s, r->urls[i], set, who, "--remote: ")) return CLI_USAGE;
        return 0;
    }
    const char *env = getenv("CCKEY_REMOTE");
    if (env && *env) {
        char *copy = strdup(env);
        if (!copy) return CLI_FAIL;
        int rc = 0;
        for (char *save = NULL, *w = strtok_r(copy, " \t\n", &save); w && !rc; w = strtok_r(NULL, " \t\n", &save))
            rc = add(s, w, set, who, "CCKEY_REMOTE: ");
        memset(copy, 0, strlen(env));
        free(copy);
        return rc;
    }
    return scan_config(dir, who, s, set, NULL);
}

static void human(char *buf, size_t len, uint64_t b)
{
    if (b >= 10u << 20) snprintf(buf, len, "%.1f MiB", b / 1048576.0);
    else if (b >= 10u << 10) snprintf(buf, len, "%.1f KiB", b / 1024.0);
    else snprintf(buf, len, "%llu B", (unsigned long long)b);
}

void cli_remotes_report(cckey_store *s, const char *who)
{
    cckey_remote_counters c;
    if (cckey_store_remote_counters(s, 1, &c) != CCKEY_OK) return;
    if (!c.hits && !c.misses && !c.errors && !c.puts) return;
    char in[32], out[32];
    human(in, sizeof in, c.bytes_in);
    human(out, sizeof out, c.bytes_out);
    printf("%s: remote: %llu hit%s, %llu miss%s, %llu error%s, %llu written; %s in, %s out\n", who,
           (unsigned long long)c.hits, c.hits == 1 ? "" : "s", (unsigned long long)c.misses, c.misses == 1 ? "" : "es",
           (unsigned long long)c.errors, c.errors == 1 ? "" : "s", (unsigned long long)c.puts, in, out);
}
