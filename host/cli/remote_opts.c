/* Which remote caches a command uses, and what it says about them. */
#include "remote_opts.h"

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

/* The signing secret from $CCKEY_REMOTE_KEY, which wins over the folder's
 * remote_key_file (read by the library). */
static void secret_from_env(cckey_remote_settings *set)
{
    const char *env = getenv("CCKEY_REMOTE_KEY");
    if (env && *env) set->secret = env, set->secret_len = strlen(env);
}

/* The words of $CCKEY_REMOTE, split in place in copy (a list of none when
 * it has no word: then the folder's remote lines are not read either). */
static char **env_urls(char *copy, size_t *n, bool *oom)
{
    char **v = malloc(sizeof *v);
    *n = 0;
    if (!v) *oom = true;
    for (char *save = NULL, *w = strtok_r(copy, " \t\n", &save); v && w; w = strtok_r(NULL, " \t\n", &save)) {
        char **u = realloc(v, (*n + 1) * sizeof *u);
        if (!u) {
            *oom = true;
            break;
        }
        (v = u)[(*n)++] = w;
    }
    return v;
}

int cli_remotes_attach(cli_remotes *r, cckey_store *s, const char *dir, const char *who)
{
    (void)dir;   /* the store's own folder: the library reads its cckey.conf */
    if (r->none) return 0;
    cckey_remote_settings set = {.read_only = r->only_read, .warn = warn, .warn_user = (void *)who};
    secret_from_env(&set);
    const char *env = getenv("CCKEY_REMOTE");
    char *copy = !r->n && env && *env ? strdup(env) : NULL;
    size_t copy_len = copy ? strlen(copy) : 0;
    bool oom = !r->n && env && *env && !copy;
    size_t n = r->n;
    char **urls = r->n ? r->urls : copy ? env_urls(copy, &n, &oom) : NULL;
    cckey_status st = oom ? CCKEY_ERR_NO_MEMORY : cckey_store_add_conf_remotes(s, (const char *const *)urls, n, &set);
    if (st != CCKEY_OK)
        cli_error("%s: %s%s", who, r->n ? "--remote: " : copy ? "CCKEY_REMOTE: " : "",
                  oom ? "out of memory" : cckey_last_error());
    if (copy) memset(copy, 0, copy_len);
    if (urls != r->urls) free(urls);
    free(copy);
    return st == CCKEY_OK ? 0 : st == CCKEY_ERR_INVALID_ARG || st == CCKEY_ERR_UNAVAILABLE ? CLI_USAGE : CLI_FAIL;
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
