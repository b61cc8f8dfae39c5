/* The remotes a cache folder's cckey.conf names, read here once for every
 * client (the cckey command, the bindings), so that a folder means the
 * same shared cache whoever opens it. The lines, '#' comments:
 *   remote = URL              repeatable, asked in order
 *   remote_only_read = true   never write the remotes
 *   remote_key_file = PATH    the signing secret: the file's bytes
 *   remote_max_entry = SIZE   the largest entry taken from a remote
 * Values are never echoed: a mistyped "remote_key = SECRET" must not print
 * the secret. Other names belong to other parts of cckey (max_size). */
#include "store_internal.h"
#include "../core/internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *trim(char *p)
{
    while (isspace((unsigned char)*p)) p++;
    size_t n = strlen(p);
    while (n && isspace((unsigned char)p[n - 1])) p[--n] = '\0';
    return p;
}

/* One "NAME = VALUE" line split (trimmed); false for a blank line or a
 * comment. *value is NULL when the line has no '='. */
static bool conf_line(char *line, char **name, char **value)
{
    char *p = trim(line), *eq = strchr(p, '=');
    if (!*p || *p == '#') return false;
    *name = p, *value = NULL;
    if (eq) *eq = '\0', *name = trim(p), *value = trim(eq + 1);
    return true;
}

/* The settings that apply whichever way the remotes are named. */
typedef struct conf_settings {
    char key_file[4096];
    uint64_t max_entry;
} conf_settings;

static cckey_status settings_line(const char *name, const char *value, const char *from, conf_settings *conf)
{
    if (!value) return CCKEY_OK;   /* said by the remotes' pass, when it runs */
    if (strcmp(name, "remote_key_file") == 0 && *value)
        snprintf(conf->key_file, sizeof conf->key_file, "%s", value);
    else if (strcmp(name, "remote_max_entry") == 0 &&
             (cckey_size_parse(value, &conf->max_entry) != CCKEY_OK || conf->max_entry < 192))
        return cckey_fail(CCKEY_ERR_INVALID_ARG, "%sremote_max_entry wants a size such as 64M", from);
    return CCKEY_OK;
}

static cckey_status remotes_line(cckey_store *s, const char *name, const char *value, const char *from,
                                 cckey_remote_settings *set)
{
    if (!value) return cckey_fail(CCKEY_ERR_INVALID_ARG, "%sexpected NAME = VALUE", from);
    if (strcmp(name, "remote") == 0) {
        cckey_status st = cckey_store_add_remote(s, value, set);
        if (st == CCKEY_OK) return st;
        char why[1024];   /* cckey_fail writes where cckey_last_error points */
        snprintf(why, sizeof why, "%s", cckey_last_error());
        return cckey_fail(st, "%s%s", from, why);
    }
    if (strcmp(name, "remote_only_read") == 0) {
        if (strcmp(value, "true") && strcmp(value, "false"))
            return cckey_fail(CCKEY_ERR_INVALID_ARG, "%sremote_only_read wants true or false", from);
        set->read_only = set->read_only || strcmp(value, "true") == 0;
        return CCKEY_OK;
    }
    if (strncmp(name, "remote", 6) == 0 && strcmp(name, "remote_key_file") && strcmp(name, "remote_max_entry")) {
        bool plain = strlen(name) <= 40 && strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") == strlen(name);
        return cckey_fail(CCKEY_ERR_INVALID_ARG,
                          "%sunknown setting%s%s%s (remote, remote_only_read, remote_key_file, remote_max_entry; "
                          "its value is not shown)", from, plain ? " \"" : "", plain ? name : "", plain ? "\"" : "");
    }
    return CCKEY_OK;
}

/* One pass over DIR/cckey.conf: the settings (s NULL) or the remotes. A
 * missing file is no config. */
static cckey_status scan_conf(const char *dir, cckey_store *s, cckey_remote_settings *set, conf_settings *conf)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/cckey.conf", dir);
    FILE *f = fopen(path, "r");
    if (!f) return errno == ENOENT || errno == ENOTDIR ? CCKEY_OK : cckey_fail(CCKEY_ERR_IO, "%s: %s", path, strerror(errno));
    char line[8192], from[4400];
    cckey_status st = CCKEY_OK;
    for (unsigned no = 1; st == CCKEY_OK && fgets(line, sizeof line, f); no++) {
        char *name, *value;
        if (!conf_line(line, &name, &value)) continue;
        snprintf(from, sizeof from, "%s:%u: ", path, no);
        st = s ? remotes_line(s, name, value, from, set) : settings_line(name, value, from, conf);
    }
    fclose(f);
    return st;
}

/* The secret in remote_key_file: its bytes, less a final newline. */
static cckey_status read_secret(const char *dir, const char *file, char **secret, size_t *len)
{
    FILE *k = fopen(file, "rb");
    char buf[4096];
    size_t n = k ? fread(buf, 1, sizeof buf, k) : 0;
    int err = errno;
    if (k) fclose(k);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) n--;
    if (!n) return cckey_fail(CCKEY_ERR_INVALID_ARG, "%s/cckey.conf: remote_key_file %s: %s", dir, file,
                              k ? "empty" : strerror(err));
    if (!(*secret = malloc(n))) return cckey_fail(CCKEY_ERR_NO_MEMORY, "out of memory");
    memcpy(*secret, buf, n);
    memset(buf, 0, sizeof buf);
    *len = n;
    return CCKEY_OK;
}

static cckey_status add_urls(cckey_store *s, const char *const *urls, size_t n, const cckey_remote_settings *set)
{
    cckey_status st = CCKEY_OK;
    for (size_t i = 0; i < n && st == CCKEY_OK; i++) st = cckey_store_add_remote(s, urls[i], set);
    return st;
}

cckey_status cckey_store_add_conf_remotes(cckey_store *s, const char *const *urls, size_t n_urls,
                                          const cckey_remote_settings *settings)
{
    if (!s || (n_urls && !urls)) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL store or URL list");
    cckey_remote_settings set = {0};
    if (settings) set = *settings;
    conf_settings conf = {"", 0};
    char *secret = NULL;
    size_t secret_len = 0;
    cckey_status st = scan_conf(s->dir, NULL, NULL, &conf);
    if (st == CCKEY_OK && !set.secret && conf.key_file[0]) st = read_secret(s->dir, conf.key_file, &secret, &secret_len);
    if (secret) set.secret = secret, set.secret_len = secret_len;
    if (!set.max_entry_bytes) set.max_entry_bytes = conf.max_entry;
    if (st == CCKEY_OK) st = urls ? add_urls(s, urls, n_urls, &set) : scan_conf(s->dir, s, &set, NULL);
    if (secret) memset(secret, 0, secret_len);
    free(secret);
    return st;
}
