/* The Redis remote (hiredis): GET and SET of "cckey:NAME", whole entry files
 * as values. A hiredis context serves one caller at a time, so idle
 * connections wait in a pool and each request takes one (or opens one).
 * The entries themselves cross the socket through redis_wire.c. */
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

/* Run a command; NULL with err filled when the connection failed (and c
 * must be dropped). */
static redisReply *command(redisContext *c, int argc, const char **argv, const size_t *lens, char *err, size_t err_len)
{
    redisReply *r = redisCommandArgv(c, argc, argv, lens);
    if (!r) snprintf(err, err_len, "%s", c->err == REDIS_ERR_IO ? "connection lost or timed out" : c->errstr);
    return r;
}

/* A ready connection: AUTH and SELECT done. NULL with err filled. */
static redisContext *connect_one(redis_remote *r, char *err, size_t err_len)
{
    redisContext *c = redisConnectWithTimeout(r->url.host, r->url.port, tv_of(r->url.connect_timeout_ms));
    if (!c || c->err) {
        snprintf(err, err_len, "cannot connect: %s", c ? c->errstr : "out of memory");
        if (c) redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, tv_of(r->url.timeout_ms));
    char db[16];
    snprintf(db, sizeof db, "%d", r->url.db);
    const char *auth[3] = {"AUTH", r->url.user ? r->url.user : r->url.password, r->url.password};
    const char *select[2] = {"SELECT", db};
    for (int step = r->url.password ? 0 : 1; step < 2; step++) {
        redisReply *rep = step == 0 ? command(c, r->url.user ? 3 : 2, auth, NULL, err, err_len)
                                    : command(c, 2, select, NULL, err, err_len);
        bool bad = !rep || rep->type == REDIS_REPLY_ERROR;
        if (rep && bad) snprintf(err, err_len, "%s refused: %.200s", step == 0 ? "AUTH" : "SELECT", rep->str);
        if (rep) freeReplyObject(rep);
        if (bad) {
            redisFree(c);
            return NULL;
        }
    }
    return c;
}

static redisContext *take(redis_remote *r, char *err, size_t err_len)
{
    pthread_mutex_lock(&r->lock);
    redisContext *c = r->n_idle ? r->idle[--r->n_idle] : NULL;
    pthread_mutex_unlock(&r->lock);
    return c ? c : connect_one(r, err, err_len);
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

/* One request: the reply, or NULL with the result to return. */
static redisReply *request(redis_remote *r, int argc, const char **argv, const size_t *lens, cckey_remote_result *res,
                           char *err, size_t err_len)
{
    redisContext *c = take(r, err, err_len);
    if (!c) {
        *res = CCKEY_R_DOWN;
        return NULL;
    }
    redisReply *rep = command(c, argc, argv, lens, err, err_len);
    if (!rep) {
        /* A server that stops answering ends here after the op timeout. */
        redisFree(c);
        *res = CCKEY_R_DOWN;
        return NULL;
    }
    give_back(r, c);
    if (rep->type == REDIS_REPLY_ERROR) {
        *res = error_reply(rep, err, err_len);
        return NULL;
    }
    return rep;
}

static void key_of(char key[200], const char *name) { snprintf(key, 200, "cckey:%s", name); }

static cckey_remote_result r_get(void *impl, const char *shard, const char *name, cckey_entry_got *e, char *err,
                                 size_t err_len)
{
    (void)shard;
    redis_remote *r = impl;
    char key[200];
    key_of(key, name);
    const char *argv[2] = {"GET", key};
    size_t lens[2] = {3, strlen(key)};
    redisContext *c = take(r, err, err_len);
    if (!c) return CCKEY_R_DOWN;
    redisReply *rep = NULL;
    int got = cckey_redis_send(c, 2, argv, lens, -1, NULL, err, err_len)
                  ? cckey_redis_read_entry(c, e, &rep, err, err_len)
                  : -1;
    if (got < 0) {
        redisFree(c);   /* timed out, gone, or out of step: a new connection next time */
        return CCKEY_R_DOWN;
    }
    give_back(r, c);
    if (got == 1) return CCKEY_R_HIT;
    if (rep->type == REDIS_REPLY_ERROR) return error_reply(rep, err, err_len);
    cckey_remote_result res = CCKEY_R_MISS;
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
    char key[200];
    key_of(key, name);
    const char *argv[2] = {"EXISTS", key};
    cckey_remote_result res;
    redisReply *rep = request(impl, 2, argv, NULL, &res, err, err_len);
    if (!rep) return res;
    res = rep->type == REDIS_REPLY_INTEGER && rep->integer > 0 ? CCKEY_R_HIT : CCKEY_R_MISS;
    freeReplyObject(rep);
    return res;
}

/* SET's request, sent on a connection of the pool: *token is that
 * connection, whose reply r_put_end reads. */
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
    redisContext *c = take(r, err, err_len);
    if (!c) return CCKEY_R_DOWN;
    if (!cckey_redis_send(c, r->url.ttl_s ? 5 : 3, argv, lens, 2, e, err, err_len)) {
        redisFree(c);
        return CCKEY_R_DOWN;
    }
    *token = c;
    return CCKEY_R_HIT;
}

static cckey_remote_result r_put_end(void *impl, void *token, char *err, size_t err_len)
{
    redisContext *c = token;
    void *rep = NULL;
    if (redisGetReply(c, &rep) != REDIS_OK || !rep) {
        snprintf(err, err_len, "%s", c->err == REDIS_ERR_IO ? "connection lost or timed out" : c->errstr);
        redisFree(c);
        return CCKEY_R_DOWN;
    }
    give_back(impl, c);
    if (((redisReply *)rep)->type == REDIS_REPLY_ERROR) return error_reply(rep, err, err_len);
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
