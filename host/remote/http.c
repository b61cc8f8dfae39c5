/* The HTTP remote (libcurl): GET, PUT and HEAD of BASE/xy/NAME, the plain
 * protocol of nginx's WebDAV module and bazel-remote-style servers. Easy
 * handles wait in a pool between requests, so each keeps its connection. */
#include "remote.h"
#include "curl_api.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { POOL_MAX = 64 };

typedef struct http_remote {
    const cckey_curl_api *cu;   /* libcurl, loaded */
    cckey_remote_url url;
    struct curl_slist *headers;
    pthread_mutex_t lock;
    CURL *idle[POOL_MAX];
    size_t n_idle;
} http_remote;

/* A response body: a GET's entry, fed to its receiver as it arrives (the
 * one copy is from curl's buffer); any other body (a PUT's answer, an
 * error page) is dropped. */
typedef struct sink {
    const cckey_curl_api *cu;
    CURL *c;
    cckey_rx *rx;   /* NULL: nothing is kept */
} sink;

/* The length the server announced, or 0 when it said none. */
static uint64_t announced(const cckey_curl_api *cu, CURL *c)
{
    curl_off_t n = -1;
    if (cu->easy_getinfo(c, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &n) != CURLE_OK || n <= 0) n = 0;
    return (uint64_t)n;
}

static size_t on_data(char *data, size_t size, size_t n, void *user)
{
    sink *s = user;
    size_t add = size * n;
    long code = 0;
    s->cu->easy_getinfo(s->c, CURLINFO_RESPONSE_CODE, &code);
    if (!s->rx || code < 200 || code >= 300) return add;   /* a 404's or 500's page: not an entry */
    if (!s->rx->started && !cckey_rx_start(s->rx, announced(s->cu, s->c))) return 0;
    /* 0: curl stops the transfer (CURLE_WRITE_ERROR), and rx says why. */
    return cckey_rx_add(s->rx, data, add) ? add : 0;
}

/* An upload's bytes: the entry's parts in turn, each copied once, into
 * curl's upload buffer. */
typedef struct source {
    cckey_entry_parts e;
    int part;
    size_t at;
} source;

static size_t on_read(char *out, size_t size, size_t n, void *user)
{
    source *s = user;
    size_t room = size * n, put = 0;
    while (put < room && s->part < CCKEY_PARTS) {
        size_t left = s->e.n[s->part] - s->at, take = room - put < left ? room - put : left;
        if (take) memcpy(out + put, (const uint8_t *)s->e.p[s->part] + s->at, take);
        put += take, s->at += take;
        if (s->at == s->e.n[s->part]) s->part++, s->at = 0;
    }
    return put;
}

static CURL *take(http_remote *r)
{
    pthread_mutex_lock(&r->lock);
    CURL *c = r->n_idle ? r->idle[--r->n_idle] : NULL;
    pthread_mutex_unlock(&r->lock);
    if (c) r->cu->easy_reset(c);   /* keeps the connection, forgets the options */
    else c = r->cu->easy_init();
    return c;
}

static void give_back(http_remote *r, CURL *c)
{
    pthread_mutex_lock(&r->lock);
    if (r->n_idle < POOL_MAX) r->idle[r->n_idle++] = c, c = NULL;
    pthread_mutex_unlock(&r->lock);
    if (c) r->cu->easy_cleanup(c);
}

/* One attempt's options; left: what remains of the request's time. */
static void setup(http_remote *r, CURL *c, const char *url, uint64_t left)
{
    r->cu->easy_setopt(c, CURLOPT_URL, url);
    r->cu->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);   /* threads: no SIGALRM for timeouts */
    uint64_t connect = r->url.connect_timeout_ms < left ? r->url.connect_timeout_ms : left;
    r->cu->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)connect);
    r->cu->easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)left);
    r->cu->easy_setopt(c, CURLOPT_HTTPHEADER, r->headers);
    r->cu->easy_setopt(c, CURLOPT_USERAGENT, "cckey");
    /* Entries are often hundreds of KiB: fewer, larger socket reads and
     * writes than the 16 KiB and 64 KiB defaults. */
    r->cu->easy_setopt(c, CURLOPT_BUFFERSIZE, 256L * 1024);
    r->cu->easy_setopt(c, CURLOPT_UPLOAD_BUFFERSIZE, 512L * 1024);
    if (r->url.user || r->url.password) {
        r->cu->easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        r->cu->easy_setopt(c, CURLOPT_USERNAME, r->url.user ? r->url.user : "");
        r->cu->easy_setopt(c, CURLOPT_PASSWORD, r->url.password ? r->url.password : "");
    }
}

/* Transport failures a retry may cure; the others (cannot connect, timed
 * out) mean the remote is down. */
static bool transient(CURLcode e)
{
    return e == CURLE_RECV_ERROR || e == CURLE_SEND_ERROR || e == CURLE_GOT_NOTHING || e == CURLE_PARTIAL_FILE;
}

/* What a finished attempt came to: the result, err filled, and whether a
 * retry may cure it. */
static cckey_remote_result outcome(const cckey_curl_api *cu, CURLcode e, long code, const char *method,
                                   const char *what, const sink *in, bool *retry, char *err, size_t err_len)
{
    *retry = false;
    if (e == CURLE_WRITE_ERROR && in && in->rx && in->rx->err[0]) {
        snprintf(err, err_len, "GET %s: %s", what, in->rx->err);   /* the receiver refused the entry */
        return CCKEY_R_ERROR;
    }
    if (e == CURLE_FILESIZE_EXCEEDED) {
        snprintf(err, err_len, "GET %s: the remote offers an entry larger than max-entry (%llu bytes)", what,
                 (unsigned long long)in->rx->cap);
        return CCKEY_R_ERROR;
    }
    if (e != CURLE_OK) {
        snprintf(err, err_len, "%s %s: %s", method, what, cu->easy_strerror(e));
        *retry = transient(e);
        return *retry ? CCKEY_R_ERROR : CCKEY_R_DOWN;
    }
    if (code >= 200 && code < 300) return CCKEY_R_HIT;
    if (code == 404) return CCKEY_R_MISS;
    if (code == 401 || code == 403) {
        snprintf(err, err_len, "%s: HTTP %ld (credentials refused)", method, code);
        return CCKEY_R_DOWN;
    }
    snprintf(err, err_len, "%s %s: HTTP %ld", method, what, code);
    *retry = code >= 500 || code == 429;
    return CCKEY_R_ERROR;
}

/* One request with retries, all within the URL's timeout: method
 * GET/HEAD/PUT. 2xx is a HIT, 404 a MISS. */
static cckey_remote_result perform(http_remote *r, const char *method, const char *shard, const char *name, sink *in,
                                   const cckey_entry_parts *out, char *err, size_t err_len)
{
    char url[8192], what[200];
    snprintf(url, sizeof url, "%s/%s/%s", r->url.base, shard, name);
    snprintf(what, sizeof what, "%s/%s", shard, name);
    uint64_t deadline = cckey_remote_now_ms() + r->url.timeout_ms;
    for (uint32_t attempt = 0;; attempt++) {
        CURL *c = take(r);
        if (!c) {
            snprintf(err, err_len, "curl_easy_init failed");
            return CCKEY_R_ERROR;
        }
        uint64_t now = cckey_remote_now_ms();
        setup(r, c, url, deadline > now ? deadline - now : 1);
        source src = {out ? *out : (cckey_entry_parts){{0}, {0}}, 0, 0};
        if (strcmp(method, "HEAD") == 0) r->cu->easy_setopt(c, CURLOPT_NOBODY, 1L);
        if (out) {
            r->cu->easy_setopt(c, CURLOPT_UPLOAD, 1L);
            r->cu->easy_setopt(c, CURLOPT_READFUNCTION, on_read);
            r->cu->easy_setopt(c, CURLOPT_READDATA, &src);
            r->cu->easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)cckey_entry_parts_len(out));
        }
        if (in) {
            in->cu = r->cu, in->c = c;
            if (in->rx) {
                cckey_rx_free(in->rx);   /* a retry starts the body again */
                in->rx->started = false;
                r->cu->easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)in->rx->cap);
            }
            r->cu->easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
            r->cu->easy_setopt(c, CURLOPT_WRITEDATA, in);
        }
        CURLcode e = r->cu->easy_perform(c);
        long code = 0;
        r->cu->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
        bool retry;
        cckey_remote_result res = outcome(r->cu, e, code, method, what, in, &retry, err, err_len);
        if (e != CURLE_OK) r->cu->easy_cleanup(c);   /* its connection is suspect */
        else give_back(r, c);
        unsigned backoff = 100u << (attempt < 6 ? attempt : 6);   /* 100 ms, 200 ms, 400 ms, ... */
        now = cckey_remote_now_ms();
        if (!retry || attempt >= r->url.retries || now + backoff >= deadline) return res;
        cckey_remote_sleep_ms(backoff);
    }
}

static cckey_remote_result h_get(void *impl, const char *shard, const char *name, cckey_rx *rx, char *err,
                                 size_t err_len)
{
    sink in = {NULL, NULL, rx};
    cckey_remote_result res = perform(impl, "GET", shard, name, &in, NULL, err, err_len);
    if (res == CCKEY_R_HIT && !cckey_rx_end(rx)) {
        snprintf(err, err_len, "GET %s/%s: %s", shard, name, rx->err);
        res = CCKEY_R_ERROR;
    }
    return res;
}

static cckey_remote_result h_head(void *impl, const char *shard, const char *name, char *err, size_t err_len)
{
    return perform(impl, "HEAD", shard, name, NULL, NULL, err, err_len);
}

static cckey_remote_result h_put(void *impl, const char *shard, const char *name, const cckey_entry_parts *e,
                                 char *err, size_t err_len)
{
    sink in = {NULL, NULL, NULL};   /* the server's reply body, dropped */
    cckey_remote_result res = perform(impl, "PUT", shard, name, &in, e, err, err_len);
    if (res == CCKEY_R_MISS) {   /* 404 on PUT: the server does not create the folders */
        snprintf(err, err_len, "PUT %s/%s: HTTP 404 (does the server create folders on PUT?)", shard, name);
        res = CCKEY_R_ERROR;
    }
    return res;
}

static void h_close(void *impl)
{
    http_remote *r = impl;
    while (r->n_idle) r->cu->easy_cleanup(r->idle[--r->n_idle]);
    r->cu->slist_free_all(r->headers);
    pthread_mutex_destroy(&r->lock);
    cckey_remote_url_free(&r->url);
    free(r);
}

static const cckey_remote_ops http_ops = {h_get, h_head, h_put, NULL, NULL, h_close};

void *cckey_remote_http_open(cckey_remote_url *u, const cckey_remote_ops **ops)
{
    /* url.c loaded libcurl when it parsed u (cckey_curl_load). */
    const cckey_curl_api *cu = cckey_curl_load(NULL);
    if (!cu) return NULL;
    http_remote *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->cu = cu;
    /* No "Expect: 100-continue": it costs a round trip (or a second's wait)
     * per upload. */
    r->headers = r->cu->slist_append(NULL, "Expect:");
    if (r->headers && u->bearer) {
        size_t n = strlen(u->bearer) + 32;
        char *h = malloc(n);
        if (h) {
            snprintf(h, n, "Authorization: Bearer %s", u->bearer);
            struct curl_slist *l = r->cu->slist_append(r->headers, h);
            memset(h, 0, n);
            free(h);
            if (l) r->headers = l;
        }
    }
    r->url = *u;
    memset(u, 0, sizeof *u);
    pthread_mutex_init(&r->lock, NULL);
    *ops = &http_ops;
    return r;
}
