/* Remote URLs: redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] and
 * http(s)://[USER:PASSWORD@]HOST[:PORT]/PATH, each with |NAME[=VALUE]
 * attributes after it (see cckey_store_add_remote in cckey.h).
 *
 * Secrets never reach a message: every error shows the URL as
 * cckey_remote_redact writes it, and says what is wrong without quoting the
 * parts it could not make sense of (a '/' left unencoded in a password
 * would otherwise put the rest of the password into a "bad port" message). */
#include "remote.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#ifdef CCKEY_WITH_HTTP
#include "curl_api.h"
#endif

enum { DEFAULT_CONNECT_MS = 2000, DEFAULT_TIMEOUT_MS = 10000, DEFAULT_RETRIES = 2, SECRET_MAX = 4096 };

/* Attributes whose values messages may show; bearer's never is. */
static const char *const shown_attrs[] = {"ttl", "read-only", "connect-timeout", "timeout", "retries",
                                          "max-entry", "password_file", "bearer_file"};
enum { N_SHOWN = sizeof shown_attrs / sizeof *shown_attrs };

static bool is_named(const char *p, size_t n, const char *name) { return strlen(name) == n && !memcmp(p, name, n); }

static bool shown_attr(const char *p, size_t n)
{
    for (size_t i = 0; i < N_SHOWN; i++)
        if (is_named(p, n, shown_attrs[i])) return true;
    return false;
}

static bool known_attr(const char *p, size_t n) { return shown_attr(p, n) || is_named(p, n, "bearer"); }

/* Where the attributes surely start: the first '|' before a known
 * attribute's name. A password's '@' is searched for only before it, so a
 * '|' in a password is read as part of it. */
static const char *attrs_bound(const char *s)
{
    for (const char *p = strchr(s, '|'); p; p = strchr(p + 1, '|'))
        if (known_attr(p + 1, strcspn(p + 1, "=|"))) return p;
    return s + strlen(s);
}

static const char *last_at(const char *from, const char *to)
{
    const char *at = NULL;
    for (const char *p = from; p < to; p++)
        if (*p == '@') at = p;
    return at;
}

typedef struct text {
    char *p;
    size_t cap, len;
} text;

static void put(text *t, const char *s, size_t n)
{
    if (!t->cap) return;
    size_t room = t->cap - 1 - t->len;
    if (n > room) n = room;
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

static void puts_(text *t, const char *s) { put(t, s, strlen(s)); }

/* One attribute as messages show it: known values, names that look like
 * names, and nothing else. */
static void put_attr(text *t, const char *seg, size_t n)
{
    size_t name = strcspn(seg, "=|");
    if (name > n) name = n;
    bool plain = name && name <= 32 && strspn(seg, "abcdefghijklmnopqrstuvwxyz0123456789_-") >= name;
    puts_(t, "|");
    if (shown_attr(seg, name)) put(t, seg, n);
    else if (plain) put(t, seg, name), puts_(t, name < n ? "=***" : "");
    else puts_(t, "***");
}

void cckey_remote_redact(const char *url, char *out, size_t cap)
{
    text t = {out, cap, 0};
    if (cap) out[0] = '\0';
    if (!url) return;
    const char *bound = attrs_bound(url), *scheme = strstr(url, "://");
    const char *from = scheme && scheme < bound ? scheme + 3 : url;
    const char *at = last_at(from, bound);
    put(&t, url, (size_t)(from - url));
    if (at) puts_(&t, "***@"), from = at + 1;
    size_t body = strcspn(from, "|");
    put(&t, from, body);
    for (const char *p = from + body; *p == '|';) {
        size_t n = strcspn(p + 1, "|");
        put_attr(&t, p + 1, n);
        p += 1 + n;
    }
}

static bool parse_u32(const char *s, uint32_t max, uint32_t *out)
{
    char *end;
    if (!*s || *s == '-' || *s == '+') return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > max) return false;
    *out = (uint32_t)v;
    return true;
}

/* A secret from a file (its first line, without the line end): what `ps`
 * cannot show, unlike a command line. */
static int read_secret(const char *path, char **out, char *why, size_t why_len)
{
    char buf[SECRET_MAX + 1];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf) : -1;
    int err = errno;
    if (fd >= 0) close(fd);
    size_t len = 0;
    while (n > 0 && len < (size_t)n && buf[len] != '\n' && buf[len] != '\r') len++;
    const char *bad = n < 0 ? strerror(err) : n > SECRET_MAX ? "longer than 4096 bytes"
                    : !len || memchr(buf, '\0', len) ? "empty, or holds a NUL byte" : NULL;
    if (!bad && !(*out = strndup(buf, len))) bad = "out of memory";
    memset(buf, 0, sizeof buf);
    if (bad) snprintf(why, why_len, "%.300s: %s", path, bad);
    return bad ? -1 : 0;
}

/* Where an attribute's value goes. Each setter: 1 set, 0 a bad value,
 * -1 not this form (a value missing or given where none belongs, or a
 * repeat of one given once). */
typedef struct attr_dst {
    cckey_remote_url *u;
    char **pw_file, **bearer_file;
} attr_dst;

static int set_read_only(attr_dst *d, const char *v)
{
    if (v) return -1;
    d->u->read_only = true;
    return 1;
}

static int set_ttl(attr_dst *d, const char *v) { return parse_u32(v, UINT32_MAX, &d->u->ttl_s); }
static int set_connect_timeout(attr_dst *d, const char *v)
{
    return parse_u32(v, 3600000, &d->u->connect_timeout_ms) && d->u->connect_timeout_ms;
}
static int set_timeout(attr_dst *d, const char *v) { return parse_u32(v, 3600000, &d->u->timeout_ms) && d->u->timeout_ms; }
static int set_retries(attr_dst *d, const char *v) { return parse_u32(v, 10, &d->u->retries); }

static int set_max_entry(attr_dst *d, const char *v)
{
    uint64_t size;
    return cckey_size_parse(v, &size) == CCKEY_OK && size >= CCKEY_ENTRY_HEADER && (d->u->max_entry = size);
}

/* A text value given once: the token itself, or a file to read it from. */
static int set_once(char **slot, const char *v, bool copy)
{
    if (!*v || *slot) return -1;
    *slot = copy ? strdup(v) : (char *)v;
    return *slot != NULL;
}
static int set_bearer(attr_dst *d, const char *v) { return set_once(&d->u->bearer, v, true); }
static int set_pw_file(attr_dst *d, const char *v) { return set_once(d->pw_file, v, false); }
static int set_bearer_file(attr_dst *d, const char *v) { return set_once(d->bearer_file, v, false); }

static const struct attr_kind {
    const char *name;
    bool valued;   /* NAME=VALUE; else a bare NAME */
    int (*set)(attr_dst *d, const char *v);
} attr_kinds[] = {
    {"read-only", false, set_read_only},     {"ttl", true, set_ttl},
    {"connect-timeout", true, set_connect_timeout}, {"timeout", true, set_timeout},
    {"retries", true, set_retries},          {"max-entry", true, set_max_entry},
    {"bearer", true, set_bearer},            {"password_file", true, set_pw_file},
    {"bearer_file", true, set_bearer_file},
};

/* An attribute that is unknown, repeated or ill-formed: named when its
 * name looks like one (never its value). */
static int attr_refused(const char *attr, char *why, size_t why_len)
{
    size_t n = strlen(attr);
    bool plain = n && n <= 32 && strspn(attr, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n;
    snprintf(why, why_len, "%s remote attribute%s%s%s (ttl=S, bearer=TOKEN, bearer_file=PATH, password_file=PATH, "
                           "read-only, connect-timeout=MS, timeout=MS, retries=N, max-entry=SIZE; each once)",
             known_attr(attr, n) ? "a repeated or ill-formed" : "an unknown", plain ? " \"" : "", plain ? attr : "",
             plain ? "\"" : "");
    return -1;
}

/* One attribute; on a bad one, why says which (never its value). */
static int attribute(cckey_remote_url *u, char *attr, char **pw_file, char **bearer_file, char *why, size_t why_len)
{
    char *eq = strchr(attr, '=');
    const char *val = eq ? eq + 1 : NULL;
    if (eq) *eq = '\0';
    attr_dst d = {u, pw_file, bearer_file};
    const struct attr_kind *k = NULL;
    for (size_t i = 0; i < sizeof attr_kinds / sizeof *attr_kinds && !k; i++)
        if (strcmp(attr, attr_kinds[i].name) == 0) k = &attr_kinds[i];
    int ok = k && (val != NULL) == k->valued ? k->set(&d, val) : -1;
    if (ok < 0) return attr_refused(attr, why, why_len);
    if (!ok) {
        if (k->set == set_bearer) snprintf(why, why_len, "out of memory");
        else snprintf(why, why_len, "bad value \"%.40s\" for remote attribute %s", val ? val : "", attr);
        return -1;
    }
    return 0;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* n bytes at p with %XX decoded; NULL with why filled. */
static char *decode(const char *p, size_t n, char *why, size_t why_len)
{
    char *out = malloc(n + 1);
    if (!out) {
        snprintf(why, why_len, "out of memory");
        return NULL;
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != '%') {
            out[o++] = p[i];
            continue;
        }
        int hi = i + 2 < n ? hex_digit(p[i + 1]) : -1, lo = i + 2 < n ? hex_digit(p[i + 2]) : -1;
        if (hi < 0 || lo < 0 || (hi | lo) == 0) {
            snprintf(why, why_len, "bad %%-encoding in the user name or password (%%XX, not %%00; write %% as %%25)");
            memset(out, 0, n + 1);
            free(out);
            return NULL;
        }
        out[o++] = (char)(hi << 4 | lo);
        i += 2;
    }
    out[o] = '\0';
    return out;
}

/* USER:PASSWORD@ at the front of *rest: split off and decoded. Its '@' is
 * the last one before the path and the attributes. */
static int userinfo(cckey_remote_url *u, char **rest, char *why, size_t why_len)
{
    const char *bound = attrs_bound(*rest);
    const char *slash = memchr(*rest, '/', (size_t)(bound - *rest));
    const char *at = last_at(*rest, slash ? slash : bound);
    if (!at) return 0;
    const char *colon = memchr(*rest, ':', (size_t)(at - *rest));
    const char *user_end = colon ? colon : at;
    if (user_end > *rest && !(u->user = decode(*rest, (size_t)(user_end - *rest), why, why_len))) return -1;
    if (colon && !(u->password = decode(colon + 1, (size_t)(at - colon - 1), why, why_len))) return -1;
    *rest = (char *)at + 1;
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
            snprintf(why, why_len, "redis URL: the database after the host must be a number");
            return -1;
        }
        u->db = (int)db;
    }
    char *colon = strrchr(rest, ':');
    if (colon && !strchr(rest, ']')) {
        uint32_t port;
        if (!parse_u32(colon + 1, 65535, &port) || !port) {
            snprintf(why, why_len, "redis URL: the port after the host must be a number from 1 to 65535");
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

#ifdef CCKEY_WITH_HTTP
/* The base URL as libcurl reads it (curl_url, RFC 3986: the host, a port
 * from 1 to 65535, the path), so that a URL libcurl could not use is
 * refused here, with libcurl's reason, rather than at the first request;
 * *base becomes libcurl's own spelling of it, without a trailing '/'. The
 * user name and password are split off before (see userinfo), so neither
 * reaches libcurl's parser or its messages. */
static int curl_checked(char **base, char *why, size_t why_len)
{
    const char *no_curl = NULL;
    const cckey_curl_api *cu = cckey_curl_load(&no_curl);
    if (!cu) {
        snprintf(why, why_len, "HTTP remotes need libcurl: %s", no_curl);
        return -2;   /* a good URL this process cannot use */
    }
    CURLU *h = cu->url();
    char *host = NULL, *port = NULL, *full = NULL;
    CURLUcode rc = h ? cu->url_set(h, CURLUPART_URL, *base, 0) : CURLUE_OUT_OF_MEMORY;
    if (rc == CURLUE_OK) rc = cu->url_get(h, CURLUPART_HOST, &host, 0);
    bool port0 = rc == CURLUE_OK && cu->url_get(h, CURLUPART_PORT, &port, 0) == CURLUE_OK && !strcmp(port, "0");
    if (rc == CURLUE_OK) rc = cu->url_get(h, CURLUPART_URL, &full, 0);
    if (rc == CURLUE_OK && !*host) rc = CURLUE_NO_HOST;
    char *own = rc == CURLUE_OK && !port0 ? strdup(full) : NULL;
    if (port0) snprintf(why, why_len, "http URL: the port must be a number from 1 to 65535");
    else if (rc != CURLUE_OK) snprintf(why, why_len, "http URL: %s", cu->url_strerror(rc));
    cu->free_part(host), cu->free_part(port), cu->free_part(full);
    cu->url_cleanup(h);
    if (!own) return -1;
    size_t n = strlen(own);
    while (n && own[n - 1] == '/') own[--n] = '\0';
    free(*base);
    *base = own;
    return 0;
}
#endif

static int parse_http(cckey_remote_url *u, const char *scheme, char *rest, char *why, size_t why_len)
{
    u->kind = CCKEY_REMOTE_HTTP;
    size_t n = strlen(rest);
    while (n && rest[n - 1] == '/') rest[--n] = '\0';
    if (!*rest || *rest == '/') {
        snprintf(why, why_len, "http URL without a host");
        return -1;
    }
    if (!(u->base = malloc(strlen(scheme) + n + 1))) return -1;
    sprintf(u->base, "%s%s", scheme, rest);
#ifdef CCKEY_WITH_HTTP
    return curl_checked(&u->base, why, why_len);
#else
    return 0;   /* refused when added: no HTTP remotes in this build */
#endif
}

/* The URL proper and its attributes, in url (a copy, cut up here). */
static int parse_all(cckey_remote_url *u, char *url, char *why, size_t why_len)
{
    static const char *const schemes[] = {"redis://", "http://", "https://"};
    const char *scheme = NULL;
    for (int i = 0; i < 3 && !scheme; i++)
        if (strncasecmp(url, schemes[i], strlen(schemes[i])) == 0) scheme = schemes[i];
    if (!scheme) {
        snprintf(why, why_len, "the URL must start with redis://, http:// or https://");
        return -1;
    }
    char *rest = url + strlen(scheme), *pw_file = NULL, *bearer_file = NULL;
    if (userinfo(u, &rest, why, why_len) != 0) return -1;
    char *bar = strchr(rest, '|');
    if (bar) *bar++ = '\0';
    int rc = scheme[0] == 'r' ? parse_redis(u, rest, why, why_len) : parse_http(u, scheme, rest, why, why_len);
    if (rc != 0) return rc;
    while (bar) {
        char *next = strchr(bar, '|');
        if (next) *next++ = '\0';
        if (*bar && attribute(u, bar, &pw_file, &bearer_file, why, why_len) != 0) return -1;
        bar = next;
    }
    if ((pw_file && u->password) || (bearer_file && u->bearer)) {
        snprintf(why, why_len, "give the %s once: in the URL or in a file", pw_file && u->password ? "password" : "token");
        return -1;
    }
    if (pw_file && read_secret(pw_file, &u->password, why, why_len) != 0) return -1;
    if (bearer_file && read_secret(bearer_file, &u->bearer, why, why_len) != 0) return -1;
    if (u->bearer && u->kind != CCKEY_REMOTE_HTTP) {
        snprintf(why, why_len, "bearer= is for http remotes");
        return -1;
    }
    size_t cap = strlen(url) + 64;
    if (!(u->display = malloc(cap))) return -1;
    /* Redacted too: an unencoded '/' in a password leaves it in base. */
    if (u->kind == CCKEY_REMOTE_HTTP) cckey_remote_redact(u->base, u->display, cap);
    else snprintf(u->display, cap, "redis://%s:%d/%d", u->host, u->port, u->db);
    return 0;
}

/* A parse that failed: "remote URL: why", the URL redacted, with a hint
 * where an '@' after a '/' suggests an unencoded '/' in a password. */
static void explain(const char *url, const char *reason, char *why, size_t why_len)
{
    char shown[600];
    cckey_remote_redact(url, shown, sizeof shown);
    const char *scheme = strstr(url, "://"), *from = scheme ? scheme + 3 : url, *bound = attrs_bound(from);
    const char *slash = memchr(from, '/', (size_t)(bound - from));
    bool hint = slash && last_at(slash, bound);
    snprintf(why, why_len, "remote \"%s\": %s%s", shown, reason,
             hint ? " (a '/', '@', '|' or '%' in a user name or password must be percent-encoded: "
                    "%2F, %40, %7C, %25)" : "");
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
    u->max_entry = settings && settings->max_entry_bytes ? settings->max_entry_bytes : CCKEY_REMOTE_MAX_ENTRY;
    char *copy = strdup(url);
    char reason[512] = "";
    int rc = copy ? parse_all(u, copy, reason, sizeof reason) : -1;
    if (rc != 0) explain(url, *reason ? reason : "out of memory", why, why_len);
    if (copy) memset(copy, 0, strlen(url));
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
