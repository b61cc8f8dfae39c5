/* Remote URLs: redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] and
 * http(s)://[USER:PASSWORD@]HOST[:PORT]/PATH, each with |NAME[=VALUE]
 * attributes after it (see cckey_store_add_remote in cckey.h). */
#include "remote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DEFAULT_CONNECT_MS = 2000, DEFAULT_TIMEOUT_MS = 10000, DEFAULT_RETRIES = 2 };

static bool parse_u32(const char *s, uint32_t max, uint32_t *out)
{
    char *end;
    if (!*s || *s == '-' || *s == '+') return false;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || v > max) return false;
    *out = (uint32_t)v;
    return true;
}

static int attribute(cckey_remote_url *u, char *attr, char *why, size_t why_len)
{
    char *eq = strchr(attr, '=');
    const char *val = eq ? eq + 1 : NULL;
    if (eq) *eq = '\0';
    bool ok = true;
    if (strcmp(attr, "read-only") == 0 && !val) u->read_only = true;
    else if (strcmp(attr, "ttl") == 0 && val) ok = parse_u32(val, UINT32_MAX, &u->ttl_s);
    else if (strcmp(attr, "connect-timeout") == 0 && val) ok = parse_u32(val, 3600000, &u->connect_timeout_ms) && u->connect_timeout_ms;
    else if (strcmp(attr, "timeout") == 0 && val) ok = parse_u32(val, 3600000, &u->timeout_ms) && u->timeout_ms;
    else if (strcmp(attr, "retries") == 0 && val) ok = parse_u32(val, 10, &u->retries);
    else if (strcmp(attr, "bearer") == 0 && val && *val) ok = (u->bearer = strdup(val)) != NULL;
    else {
        snprintf(why, why_len, "unknown remote attribute \"%s\" (ttl=S, bearer=TOKEN, read-only, "
                               "connect-timeout=MS, timeout=MS, retries=N)", attr);
        return -1;
    }
    if (!ok) {
        snprintf(why, why_len, "bad value \"%s\" for remote attribute %s", val ? val : "", attr);
        return -1;
    }
    return 0;
}

/* USER:PASSWORD@ at the front of rest (up to the first '/'): split off. */
static int userinfo(cckey_remote_url *u, char **rest)
{
    char *slash = strchr(*rest, '/');
    char *at = strrchr(*rest, '@');
    if (!at || (slash && at > slash)) return 0;
    *at = '\0';
    char *colon = strchr(*rest, ':');
    if (colon) {
        *colon = '\0';
        if (!(u->password = strdup(colon + 1))) return -1;
    }
    if (**rest && !(u->user = strdup(*rest))) return -1;
    *rest = at + 1;
    return 0;
}

static int parse_redis(cckey_remote_url *u, char *rest, char *why, size_t why_len)
{
    u->kind = CCKEY_REMOTE_REDIS;
    u->port = 6379;
    char *slash = strchr(rest, '/');
    if (slash) {
        *slash = '\0';
        uint32_t db = 0;
        if (slash[1] && !parse_u32(slash + 1, 1000000, &db)) {
            snprintf(why, why_len, "redis URL: the database must be a number, not \"%s\"", slash + 1);
            return -1;
        }
        u->db = (int)db;
    }
    char *colon = strrchr(rest, ':');
    if (colon && !strchr(rest, ']')) {
        uint32_t port;
        if (!parse_u32(colon + 1, 65535, &port) || !port) {
            snprintf(why, why_len, "redis URL: bad port \"%s\"", colon + 1);
            return -1;
        }
        u->port = (int)port;
        *colon = '\0';
    }
    if (!*rest) {
        snprintf(why, why_len, "redis URL without a host");
        return -1;
    }
    u->host = strdup(rest);
    return u->host ? 0 : -1;
}

static int parse_body(cckey_remote_url *u, char *url, char *why, size_t why_len)
{
    const char *scheme = NULL;
    if (strncmp(url, "redis://", 8) == 0) scheme = "redis://";
    else if (strncmp(url, "http://", 7) == 0) scheme = "http://";
    else if (strncmp(url, "https://", 8) == 0) scheme = "https://";
    if (!scheme) {
        snprintf(why, why_len, "remote \"%.200s\": the URL must start with redis://, http:// or https://", url);
        return -1;
    }
    char *rest = url + strlen(scheme);
    if (userinfo(u, &rest) != 0) return -1;
    if (scheme[0] == 'r') {
        if (parse_redis(u, rest, why, why_len) != 0) return -1;
    } else {
        u->kind = CCKEY_REMOTE_HTTP;
        size_t n = strlen(rest);
        while (n && rest[n - 1] == '/') rest[--n] = '\0';
        if (!*rest || *rest == '/') {
            snprintf(why, why_len, "http URL without a host");
            return -1;
        }
        if (!(u->base = malloc(strlen(scheme) + n + 1))) return -1;
        sprintf(u->base, "%s%s", scheme, rest);
    }
    size_t cap = strlen(url) + 64;
    if (!(u->display = malloc(cap))) return -1;
    if (u->kind == CCKEY_REMOTE_HTTP) snprintf(u->display, cap, "%s", u->base);
    else snprintf(u->display, cap, "redis://%s:%d/%d", u->host, u->port, u->db);
    return 0;
}

int cckey_remote_url_parse(cckey_remote_url *u, const char *url, const cckey_remote_settings *settings, char *why,
                           size_t why_len)
{
    memset(u, 0, sizeof *u);
    if (why_len) why[0] = '\0';
    u->connect_timeout_ms = settings && settings->connect_timeout_ms ? settings->connect_timeout_ms : DEFAULT_CONNECT_MS;
    u->timeout_ms = settings && settings->timeout_ms ? settings->timeout_ms : DEFAULT_TIMEOUT_MS;
    u->retries = settings && settings->retries ? settings->retries : DEFAULT_RETRIES;
    u->ttl_s = settings ? settings->ttl_s : 0;
    u->read_only = settings && settings->read_only;
    char *copy = strdup(url);
    if (!copy) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    /* Attributes first, so the URL proper ends at the first '|'. */
    char *bar = strchr(copy, '|');
    if (bar) *bar++ = '\0';
    int rc = parse_body(u, copy, why, why_len);
    while (rc == 0 && bar) {
        char *next = strchr(bar, '|');
        if (next) *next++ = '\0';
        if (*bar) rc = attribute(u, bar, why, why_len);
        bar = next;
    }
    if (rc == 0 && u->bearer && u->kind != CCKEY_REMOTE_HTTP) {
        snprintf(why, why_len, "bearer= is for http remotes");
        rc = -1;
    }
    if (rc != 0 && !*why) snprintf(why, why_len, "out of memory");
    free(copy);
    if (rc != 0) cckey_remote_url_free(u);
    return rc;
}

void cckey_remote_url_free(cckey_remote_url *u)
{
    free(u->base), free(u->host), free(u->user), free(u->display);
    if (u->password) memset(u->password, 0, strlen(u->password));
    if (u->bearer) memset(u->bearer, 0, strlen(u->bearer));
    free(u->password), free(u->bearer);
    memset(u, 0, sizeof *u);
}
