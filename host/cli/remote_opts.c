/* Which remote caches a command uses, and what it says about them. */
#include "remote_opts.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cli_remotes_option(cli_remotes *r, int c, const char *arg)
{
    switch (c) {
    case CLI_OPT_REMOTE: {
        char **u = realloc(r->urls, (r->n + 1) * sizeof *u);
        if (!u) return -1;
        r->urls = u;
        if (!(u[r->n] = strdup(arg))) return -1;
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

/* DIR/cckey.conf: "remote = URL" (repeatable) and "remote_only_read =
 * true|false" lines, '#' comments. A missing file is no config. */
static int attach_all(cli_remotes *r, cckey_store *s, const char *dir, const char *who, const char *secret,
                      size_t secret_len);

static int from_config(cckey_store *s, const char *dir, cckey_remote_settings *set, const char *who)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/cckey.conf", dir);
    FILE *f = fopen(path, "r");
    if (!f) return errno == ENOENT || errno == ENOTDIR ? 0 : (cli_error("%s: %s: %s", who, path, strerror(errno)), CLI_FAIL);
    char line[8192], from[4400];
    int rc = 0;
    for (unsigned no = 1; rc == 0 && fgets(line, sizeof line, f); no++) {
        char *p = trim(line), *eq = strchr(p, '=');
        if (!*p || *p == '#') continue;
        snprintf(from, sizeof from, "%s:%u: ", path, no);
        if (!eq) {
            cli_error("%s: %sexpected NAME = VALUE", who, from);
            rc = CLI_USAGE;
            break;
        }
        *eq = '\0';
        char *name = trim(p), *value = trim(eq + 1);
        if (strcmp(name, "remote") == 0) rc = add(s, value, set, who, from);
        else if (strcmp(name, "remote_key_file") == 0 && *value) continue;   /* read first: see secret_of */
        else if (strcmp(name, "remote_only_read") == 0 && (!strcmp(value, "true") || !strcmp(value, "false")))
            set->read_only = set->read_only || strcmp(value, "true") == 0;
        else if (strncmp(name, "remote", 6) == 0) {
            cli_error("%s: %sunknown setting or bad value: %s = %s", who, from, name, value);
            rc = CLI_USAGE;
        }
        /* Other settings belong to other parts of cckey. */
    }
    fclose(f);
    return rc;
}

/* The signing secret: $CCKEY_REMOTE_KEY, else the file that cckey.conf's
 * remote_key_file names (its bytes, less a final newline). 0, or an exit
 * status. */
static int secret_of(const char *dir, const char *who, char **secret, size_t *len)
{
    *secret = NULL, *len = 0;
    const char *env = getenv("CCKEY_REMOTE_KEY");
    if (env && *env) {
        *len = strlen(env);
        return (*secret = strdup(env)) ? 0 : CLI_FAIL;
    }
    char path[4200], line[8192], file[8192] = "";
    snprintf(path, sizeof path, "%s/cckey.conf", dir);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    while (fgets(line, sizeof line, f)) {
        char *p = trim(line), *eq = strchr(p, '=');
        if (!eq || *p == '#') continue;
        *eq = '\0';
        if (strcmp(trim(p), "remote_key_file") == 0) snprintf(file, sizeof file, "%s", trim(eq + 1));
    }
    fclose(f);
    if (!*file) return 0;
    FILE *k = fopen(file, "rb");
    char buf[4096];
    size_t n = k ? fread(buf, 1, sizeof buf, k) : 0;
    if (k) fclose(k);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) n--;
    if (!n) {
        cli_error("%s: %s: remote_key_file %s: %s", who, path, file, k ? "empty" : strerror(errno));
        return CLI_USAGE;
    }
    *len = n;
    if (!(*secret = malloc(n))) return CLI_FAIL;
    memcpy(*secret, buf, n);
    memset(buf, 0, sizeof buf);
    return 0;
}

int cli_remotes_attach(cli_remotes *r, cckey_store *s, const char *dir, const char *who)
{
    if (r->none) return 0;
    char *secret;
    size_t secret_len;
    int rc = secret_of(dir, who, &secret, &secret_len);
    if (rc == 0) rc = attach_all(r, s, dir, who, secret, secret_len);
    if (secret) memset(secret, 0, secret_len);
    free(secret);
    return rc;
}

static int attach_all(cli_remotes *r, cckey_store *s, const char *dir, const char *who, const char *secret,
                      size_t secret_len)
{
    cckey_remote_settings set = {.read_only = r->only_read, .warn = warn, .warn_user = (void *)who,
                                 .secret = secret, .secret_len = secret_len};
    if (r->n) {
        for (size_t i = 0; i < r->n; i++)
            if (add(s, r->urls[i], &set, who, "--remote: ")) return CLI_USAGE;
        return 0;
    }
    const char *env = getenv("CCKEY_REMOTE");
    if (env && *env) {
        char *copy = strdup(env);
        if (!copy) return CLI_FAIL;
        int rc = 0;
        for (char *save = NULL, *w = strtok_r(copy, " \t\n", &save); w && !rc; w = strtok_r(NULL, " \t\n", &save))
            rc = add(s, w, &set, who, "CCKEY_REMOTE: ");
        free(copy);
        return rc;
    }
    return from_config(s, dir, &set, who);
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
