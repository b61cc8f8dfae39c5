/* The Redis remote (hiredis): GET and SET of "cckey:NAME", whole entry files
 * as values. A hiredis context serves one caller at a time, so idle
 * connections wait in a pool and each request takes one (or opens one).
 * hiredis connects and parses; every byte crosses the socket through
 * redis_wire.c, which holds each request, connecting included, to one
 * deadline (the URL's timeout). */
#include "remote.h"
#include "redis_wire.h"

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { POOL_MAX = 64 };

typedef struct redis_remote {
    cckey_remote_url url;
    pthread_mutex_t lock;
    redisContext *idle[POOL_MAX];
    size_t n_idle;
} redis_remote;

static struct timeval tv_of(uint32_t ms) { return (struct timeval){ms / 1000, (ms % 1000) * 1000}; }

/* A short command and its reply, by the deadline (WIRE_OK: *rep). */
static cckey_wire exchange(redisContext *c, int argc, const char **argv, uint64_t deadline, redisReply **rep,
                           char *err, size_t err_len)
{
    cckey_wire w = cckey_redis_send(c, argc, argv, NULL, -1, NULL, deadline, err, err_len);
    return w == WIRE_OK ? cckey_redis_reply(c, deadline, rep, err, err_len) : w;
}

/* A ready connection: AUTH and SELECT done, by the deadline. NULL with err
 * filled. */
static redisContext *connect_one(redis_remote *r, uint64_t deadline, char *err, size_t err_len)
{
    uint64_t now = cckey_remote_now_ms(), left = deadline > now ? deadline - now : 1;
    redisContext *c = redisConnectWithTimeout(r->url.host, r->url.port,
                                              tv_of(r->url.connect_timeout_ms < left ? r->url.connect_timeout_ms
                                                                                     : (uint32_t)left));
    if (!c || c->err) {
        snprintf(err, err_len, "cannot connect: %s", c ? c->errstr : "out of memory");
        if (c) redisFree(c);
        return NULL;
    }
    char db[16];
    snprintf(db, sizeof db, "%d", r->url.db);
    const char *auth[3] = {"AUTH", r->url.user ? r->url.user : r->url.password, r->url.password};
    const char *select[2] = {"SELECT", db};
    /* A new connection is on database 0: SELECT only another one. */
    for (int step = r->url.password ? 0 : 1; step < (r->url.db ? 2 : 1); step++) {
        redisReply *rep = NULL;
        cckey_wire w = step == 0 ? exchange(c, r->url.user ? 3 : 2, auth, deadline, &rep, err, err_len)
                                 : exchange(c, 2, select, deadline, &rep, err, err_len);
        bool bad = w != WIRE_OK || rep->type == REDIS_REPLY_ERROR;
        if (rep && bad) snprintf(err, err_len, "%s refused: %.200s", step == 0 ? "AUTH" : "SELECT", rep->str);
        if (rep) freeReplyObject(rep);
        if (bad) {
            redisFree(c);
            return NULL;
        }
    }
    return c;
}

static redisContext *take(redis_remote *r, uint64_t deadline, char *err, size_t err_len)
{
    pthread_mutex_lock(&r->lock);
    redisContext *c = r->n_idle ? r->idle[--r->n_idle] : NULL;
    pthread_mutex_unlock(&r->lock);
    return c ? c : connect_one(r, deadline, err, err_len);
}

static void give_back(redis_remote *r, redisContext *c)
{
    pthread_mutex_lock(&r->lock);
    if (r->n_idle < POOL_MAX) r->idle[r->n_idle++] = c, c = NULL;
    pthread_mutex_unlock(&r->lock);
    if (c) redisFree(c);
}

/* What a reply that is an error comes to, with err filled; frees it.
 * Credentials missing or refused: DOWN, as every request would fail alike. */
static cckey_remote_result error_reply(redisReply *rep, char *err, size_t err_len)
{
    snprintf(err, err_len, "error reply: %.200s", rep->str);
    bool auth = strncmp(rep->str, "NOAUTH", 6) == 0 || strncmp(rep->str, "WRONGPASS", 9) == 0 ||
                strncmp(rep->str, "NOPERM", 6) == 0;
    freeReplyObject(rep);
    return auth ? CCKEY_R_DOWN : CCKEY_R_ERROR;
}

/* The connection after a call: back to the pool when it is still in step,
 * dropped otherwise (a new one next time). Timed out, gone or talking
 * nonsense: the remote is down for this run; an entry refused: an error. */
static cckey_remote_result after(redis_remote *r, redisContext *c, cckey_wire w)
{
    if (w == WIRE_OK || w == WIRE_OTHER) {
        give_back(r, c);
        return CCKEY_R_HIT;
    }
    redisFree(c);
    return w == WIRE_REFUSED ? CCKEY_R_ERROR : CCKEY_R_DOWN;
}

static uint64_t deadline_of(const redis_remote *r) { return cckey_remote_now_ms() + r->url.timeout_ms; }

static void key_of(char key[200], const char *name) { snprintf(key, 200, "cckey:%s", name); }

static cckey_remote_result r_get(void *impl, const char *shard, const char *name, cckey_rx *rx, char *err,
                                 size_t err_len)
{
    (void)shard;
    redis_remote *r = impl;
    char key[200];
    key_of(key, name);
    const char *argv[2] = {"GET", key};
    uint64_t deadline = deadline_of(r);
    redisContext *c = take(r, deadline, err, err_len);
    if (!c) return CCKEY_R_DOWN;
    redisReply *rep = NULL;
    cckey_wire w = cckey_redis_send(c, 2, argv, NULL, -1, NULL, deadline, err, err_len);
    if (w == WIRE_OK) w = cckey_redis_read_entry(c, rx, deadline, &rep, err, err_len);
    cckey_remote_result res = after(r, c, w);
    if (w != WIRE_OTHER) return res;
    if (rep->type == REDIS_REPLY_ERROR) return error_reply(rep, err, err_len);
    res = CCKEY_R_MISS;
    if (rep->type != REDIS_REPLY_NIL) {
        snprintf(err, err_len, "GET gave a reply of type %d", rep->type);
        res = CCKEY_R_ERROR;
    }
    freeReplyObject(rep);
    return res;
}

static cckey_remote_result r_head(void *impl, const char *shard, const char *name, char *err, size_t err_len)
{
    (void)shard;
    redis_remote *r = impl;
    char key[200];
    key_of(key, name);
    const char *argv[2] = {"EXISTS", key};
    uint64_t deadline = deadline_of(r);
    redisContext *c = take(r, deadline, err, err_len);
    if (!c) return CCKEY_R_DOWN;
    redisReply *rep = NULL;
    cckey_remote_result res = after(r, c, exchange(c, 2, argv, deadline, &rep, err, err_len));
    if (res != CCKEY_R_HIT) return res;
    if (rep->type == REDIS_REPLY_ERROR) return error_reply(rep, err, err_len);
    res = rep->type == REDIS_REPLY_INTEGER && rep->integer > 0 ? CCKEY_R_HIT : CCKEY_R_MISS;
    freeReplyObject(rep);
    return res;
}

/* A SET under way: its connection, whose reply r_put_end reads, and the
 * request's deadline. */
typedef struct put_token {
    redisContext *c;
    uint64_t deadline;
} put_token;

static cckey_remote_result r_put_begin(void *impl, const char *shard, const char *name, const cckey_entry_parts *e,
                                       void **token, char *err, size_t err_len)
{
    (void)shard;
    redis_remote *r = impl;
    char key[200], ttl[16];
    key_of(key, name);
    snprintf(ttl, sizeof ttl, "%u", r->url.ttl_s);
    const char *argv[5] = {"SET", key, NULL, "EX", ttl};
    size_t lens[5] = {3, strlen(key), 0, 2, strlen(ttl)};
    put_token *t = malloc(sizeof *t);
    if (!t) {
        snprintf(err, err_len, "out of memory");
        return CCKEY_R_ERROR;
    }
    t->deadline = deadline_of(r);
    if (!(t->c = take(r, t->deadline, err, err_len))) {
        free(t);
        return CCKEY_R_DOWN;
    }
    cckey_wire w = cckey_redis_send(t->c, r->url.ttl_s ? 5 : 3, argv, lens, 2, e, t->deadline, err, err_len);
    if (w != WIRE_OK) {
        redisFree(t->c);
        free(t);
        return CCKEY_R_DOWN;
    }
    *token = t;
    return CCKEY_R_HIT;
}

static cckey_remote_result r_put_end(void *impl, void *token, char *err, size_t err_len)
{
    put_token *t = token;
    redisReply *rep = NULL;
    cckey_remote_result res = after(impl, t->c, cckey_redis_reply(t->c, t->deadline, &rep, err, err_len));
    free(t);
    if (res != CCKEY_R_HIT) return res;
    if (rep->type == REDIS_REPLY_ERROR) return error_reply(rep, err, err_len);
    freeReplyObject(rep);
    return CCKEY_R_HIT;
}

static cckey_remote_result r_put(void *impl, const char *shard, const char *name, const cckey_entry_parts *e,
                                 char *err, size_t err_len)
{
    void *token;
    cckey_remote_result res = r_put_begin(impl, shard, name, e, &token, err, err_len);
    return res == CCKEY_R_HIT ? r_put_end(impl, token, err, err_len) : res;
}

static void r_close(void *impl)
{
    redis_remote *r = impl;
    while (r->n_idle) redisFree(r->idle[--r->n_idle]);
    pthread_mutex_destroy(&r->lock);
    cckey_remote_url_free(&r->url);
    free(r);
}

static const cckey_remote_ops redis_ops = {r_get, r_head, r_put, r_put_begin, r_put_end, r_close};

void *cckey_remote_redis_open(cckey_remote_url *u, const cckey_remote_ops **ops)
{
    redis_remote *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->url = *u;
    memset(u, 0, sizeof *u);
    pthread_mutex_init(&r->lock, NULL);
    *ops = &redis_ops;
    return r;
}
