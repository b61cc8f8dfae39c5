/* The HTTP remote (libcurl): GET, PUT and HEAD of BASE/xy/NAME, the plain
 * protocol of nginx's WebDAV module and bazel-remote-style servers. Easy
 * handles wait in a pool between requests, so each keeps its connection. */
#include "remote.h"
#include "../store/store_internal.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { POOL_MAX = 64 };

typedef struct http_remote {
    cckey_remote_url url;
    struct curl_slist *headers;
    pthread_mutex_t lock;
    CURL *idle[POOL_MAX];
    size_t n_idle;
} http_remote;

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static void global_init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

/* A response body. A GET's entry, when the server said its length, goes
 * into its parts' own buffers as it arrives (cckey_entry_got: the one copy
 * is from curl's buffer); any other body into one growing buffer. */
typedef struct sink {
    CURL *c;
    bool entry;                           /* a GET: split when the length is known */
    size_t total;                         /* that length, once known; 0: grow */
    uint8_t head[CCKEY_ENTRY_HEADER];     /* the first bytes, until the split is known */
    cckey_entry_got e;
    size_t got;
    uint8_t *p;                           /* a body that is not split */
    size_t len, cap;
} sink;

static void sink_reset(sink *s, CURL *c)
{
    cckey_entry_got_free(&s->e);
    free(s->p);
    *s = (sink){.c = c, .entry = s->entry};
}

/* The length the server announced (within reason), or 0. */
static size_t announced(CURL *c)
{
    curl_off_t n = -1;
    if (curl_easy_getinfo(c, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &n) != CURLE_OK || n <= 0 || n > (1 << 30)) n = 0;
    return (size_t)n;
}

static bool grow(sink *s, const char *data, size_t add)
{
    if (s->len + add > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : add;
        while (cap < s->len + add) cap *= 2;
        uint8_t *p = realloc(s->p, cap);
        if (!p) return false;
        s->p = p, s->cap = cap;
    }
    memcpy(s->p + s->len, data, add);
    s->len += add;
    return true;
}

/* The next bytes of a split entry: the head, then front, then payload. */
static bool place(sink *s, const uint8_t *data, size_t add)
{
    if (add > s->total - s->got) return false;   /* more than announced */
    size_t h = s->total < sizeof s->head ? s->total : sizeof s->head;
    while (add) {
        uint8_t *dst;
        size_t room;
        if (!s->e.front && s->got < h) {
            dst = s->head + s->got, room = h - s->got;
        } else if (s->got < s->e.front_len) {
            dst = s->e.front + s->got, room = s->e.front_len - s->got;
        } else {
            dst = s->e.payload + (s->got - s->e.front_len), room = s->total - s->got;
        }
        size_t take = add < room ? add : room;
        memcpy(dst, data, take);
        s->got += take, data += take, add -= take;
        if (!s->e.front && s->got == h) {   /* the split is known now */
            s->e.front_len = cckey_entry_front_len(s->head, s->total);
            s->e.len = s->total - s->e.front_len;
            s->e.front = malloc(s->e.front_len ? s->e.front_len : 1);
            s->e.payload = s->e.len ? malloc(s->e.len) : NULL;
            if (!s->e.front || (s->e.len && !s->e.payload)) return false;
            memcpy(s->e.front, s->head, h);
        }
    }
    return true;
}

static size_t on_data(char *data, size_t size, size_t n, void *user)
{
    sink *s = user;
    size_t add = size * n;
    if (s->entry && !s->got && !s->len) s->total = announced(s->c);
    bool ok = s->total ? place(s, (const uint8_t *)data, add) : grow(s, data, add);
    return ok ? add : 0;   /* 0: curl fails the transfer (CURLE_WRITE_ERROR) */
}

/* The entry a GET received, handed over from s. */
static bool sink_take(sink *s, cckey_entry_got *e)
{
    if (s->total) {
        if (s->got != s->total || !s->e.front) return false;
        *e = s->e;
        s->e = (cckey_entry_got){0};
        return true;
    }
    *e = (cckey_entry_got){s->p ? s->p : malloc(1), s->len, NULL, 0};
    s->p = NULL;
    return e->front != NULL;
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
    if (c) curl_easy_reset(c);   /* keeps the connection, forgets the options */
    else c = curl_easy_init();
    return c;
}

static void give_back(http_remote *r, CURL *c)
{
    pthread_mutex_lock(&r->lock);
    if (r->n_idle < POOL_MAX) r->idle[r->n_idle++] = c, c = NULL;
    pthread_mutex_unlock(&r->lock);
    if (c) curl_easy_cleanup(c);
}

static void setup(http_remote *r, CURL *c, const char *url)
{
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);   /* threads: no SIGALRM for timeouts */
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)r->url.connect_timeout_ms);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)r->url.timeout_ms);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, r->headers);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "cckey");
    /* Entries are often hundreds of KiB: fewer, larger socket reads and
     * writes than the 16 KiB and 64 KiB defaults. */
    curl_easy_setopt(c, CURLOPT_BUFFERSIZE, 256L * 1024);
    curl_easy_setopt(c, CURLOPT_UPLOAD_BUFFERSIZE, 512L * 1024);
    if (r->url.user || r->url.password) {
        curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        curl_easy_setopt(c, CURLOPT_USERNAME, r->url.user ? r->url.user : "");
        curl_easy_setopt(c, CURLOPT_PASSWORD, r->url.password ? r->url.password : "");
    }
}

/* Transport failures a retry may cure; the others (cannot connect, timed
 * out) mean the remote is down. */
static bool transient(CURLcode e)
{
    return e == CURLE_RECV_ERROR || e == CURLE_SEND_ERROR || e == CURLE_GOT_NOTHING || e == CURLE_PARTIAL_FILE;
}

/* One request with retries: method GET/HEAD/PUT. ok_codes: what is a HIT;
 * 404 is a MISS. */
static cckey_remote_result perform(http_remote *r, const char *method, const char *shard, const char *name, sink *in,
                                   const cckey_entry_parts *out, char *err, size_t err_len)
{
    char url[8192];
    snprintf(url, sizeof url, "%s/%s/%s", r->url.base, shard, name);
    cckey_remote_result res = CCKEY_R_ERROR;
    for (uint32_t attempt = 0;; attempt++) {
        CURL *c = take(r);
        if (!c) {
            snprintf(err, err_len, "curl_easy_init failed");
            return CCKEY_R_ERROR;
        }
        setup(r, c, url);
        source src = {out ? *out : (cckey_entry_parts){{0}, {0}}, 0, 0};
        if (strcmp(method, "HEAD") == 0) curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
        if (out) {
            curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
            curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
            curl_easy_setopt(c, CURLOPT_READDATA, &src);
            curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)cckey_entry_parts_len(out));
        }
        if (in) {
            sink_reset(in, c);
            curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
            curl_easy_setopt(c, CURLOPT_WRITEDATA, in);
        }
        CURLcode e = curl_easy_perform(c);
        long code = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
        bool retry = false;
        if (e != CURLE_OK) {
            snprintf(err, err_len, "%s %s/%s: %s", method, shard, name, curl_easy_strerror(e));
            res = transient(e) ? CCKEY_R_ERROR : CCKEY_R_DOWN;
            retry = transient(e);
            curl_easy_cleanup(c);   /* its connection is suspect */
            c = NULL;
        } else if (code >= 200 && code < 300) {
            res = CCKEY_R_HIT;
        } else if (code == 404) {
            res = CCKEY_R_MISS;
        } else if (code == 401 || code == 403) {
            snprintf(err, err_len, "%s: HTTP %ld (credentials refused)", method, code);
            res = CCKEY_R_DOWN;
        } else {
            snprintf(err, err_len, "%s %s/%s: HTTP %ld", method, shard, name, code);
            res = CCKEY_R_ERROR;
            retry = code >= 500 || code == 429;
        }
        if (c) give_back(r, c);
        if (!retry || attempt >= r->url.retries) return res;
        cckey_remote_sleep_ms(100u << (attempt < 6 ? attempt : 6));   /* 100 ms, 200 ms, 400 ms, ... */
    }
}

static cckey_remote_result h_get(void *impl, const char *shard, const char *name, cckey_entry_got *e, char *err,
                                 size_t err_len)
{
    sink in = {.entry = true};
    cckey_remote_result res = perform(impl, "GET", shard, name, &in, NULL, err, err_len);
    if (res == CCKEY_R_HIT && !sink_take(&in, e)) {
        snprintf(err, err_len, "GET %s/%s: body not as long as announced, or no memory", shard, name);
        res = CCKEY_R_ERROR;
    }
    sink_reset(&in, NULL);
    return res;
}

static cckey_remote_result h_head(void *impl, const char *shard, const char *name, char *err, size_t err_len)
{
    return perform(impl, "HEAD", shard, name, NULL, NULL, err, err_len);
}

static cckey_remote_result h_put(void *impl, const char *shard, const char *name, const cckey_entry_parts *e,
                                 char *err, size_t err_len)
{
    sink in = {0};   /* the server's reply body, unused */
    cckey_remote_result res = perform(impl, "PUT", shard, name, &in, e, err, err_len);
    sink_reset(&in, NULL);
    if (res == CCKEY_R_MISS) {   /* 404 on PUT: the server does not create the folders */
        snprintf(err, err_len, "PUT %s/%s: HTTP 404 (does the server create folders on PUT?)", shard, name);
        res = CCKEY_R_ERROR;
    }
    return res;
}

static void h_close(void *impl)
{
    http_remote *r = impl;
    while (r->n_idle) curl_easy_cleanup(r->idle[--r->n_idle]);
    curl_slist_free_all(r->headers);
    pthread_mutex_destroy(&r->lock);
    cckey_remote_url_free(&r->url);
    free(r);
}

static const cckey_remote_ops http_ops = {h_get, h_head, h_put, NULL, NULL, h_close};

void *cckey_remote_http_open(cckey_remote_url *u, const cckey_remote_ops **ops)
{
    pthread_once(&global_once, global_init);
    http_remote *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    /* No "Expect: 100-continue": it costs a round trip (or a second's wait)
     * per upload. */
    r->headers = curl_slist_append(NULL, "Expect:");
    if (r->headers && u->bearer) {
        size_t n = strlen(u->bearer) + 32;
        char *h = malloc(n);
        if (h) {
            snprintf(h, n, "Authorization: Bearer %s", u->bearer);
            struct curl_slist *l = curl_slist_append(r->headers, h);
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
