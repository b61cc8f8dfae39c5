/* Remote caches under the local store: one small interface, a Redis and an
 * HTTP implementation, and the layer that keeps their order, counters and
 * warnings. The store calls only the layer (cckey_remotes_*). */
#ifndef CCKEY_REMOTE_H
#define CCKEY_REMOTE_H

#include "cckey.h"
#include "../store/store_internal.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What one request came to. DOWN: the remote cannot be used any more this
 * run (unreachable, timed out, credentials refused); ERROR: this request
 * failed but others may work. */
typedef enum { CCKEY_R_HIT, CCKEY_R_MISS, CCKEY_R_ERROR, CCKEY_R_DOWN } cckey_remote_result;

/* A parsed remote URL with its attributes and effective settings. */
typedef struct cckey_remote_url {
    enum { CCKEY_REMOTE_REDIS, CCKEY_REMOTE_HTTP } kind;
    char *base;        /* HTTP: scheme://host[:port]/path without userinfo or a trailing '/' */
    char *host;        /* Redis */
    int port;          /* Redis */
    int db;            /* Redis; 0 by default */
    char *user, *password;   /* NULL when not given */
    char *bearer;      /* HTTP */
    char *display;     /* the URL as messages show it: no password, no token */
    uint32_t connect_timeout_ms, timeout_ms, retries, ttl_s;
    bool read_only;
} cckey_remote_url;

/* Parse url with its attributes over settings (may be NULL). 0, or -1 with
 * why filled. */
int cckey_remote_url_parse(cckey_remote_url *out, const char *url, const cckey_remote_settings *settings, char *why,
                           size_t why_len);
void cckey_remote_url_free(cckey_remote_url *u);

/* An entry file to send, in the pieces it is made of where put has them
 * (header, records, payload): they go to the socket from there, never
 * joined into one buffer first. */
enum { CCKEY_PARTS = 3 };
typedef struct cckey_entry_parts {
    const void *p[CCKEY_PARTS];
    size_t n[CCKEY_PARTS];
} cckey_entry_parts;
size_t cckey_entry_parts_len(const cckey_entry_parts *e);

/* cckey_entry_got (store/store_internal.h): an entry as a get receives it. */
void cckey_entry_got_free(cckey_entry_got *e);

/* One backend. name is the entry's file name (the key with '-' for ':'),
 * shard its folder name. get fills *e on a hit. err receives the reason
 * for ERROR and DOWN. Thread-safe. */
typedef struct cckey_remote_ops {
    cckey_remote_result (*get)(void *impl, const char *shard, const char *name, cckey_entry_got *e, char *err,
                               size_t err_len);
    /* HIT: there, MISS: not there. */
    cckey_remote_result (*head)(void *impl, const char *shard, const char *name, char *err, size_t err_len);
    /* HIT: stored. */
    cckey_remote_result (*put)(void *impl, const char *shard, const char *name, const cckey_entry_parts *e, char *err,
                               size_t err_len);
    /* Optional (NULL: put does it all): a put in two halves, so that the
     * local write runs while the server takes the entry. put_begin sends the
     * whole request (e is not used after it) and, on HIT, leaves *token for
     * put_end, which waits for the answer; each begun put is ended. */
    cckey_remote_result (*put_begin)(void *impl, const char *shard, const char *name, const cckey_entry_parts *e,
                                     void **token, char *err, size_t err_len);
    cckey_remote_result (*put_end)(void *impl, void *token, char *err, size_t err_len);
    void (*close)(void *impl);
} cckey_remote_ops;

/* The backends; impl takes over u (and frees it in close). NULL when out of
 * memory. */
void *cckey_remote_redis_open(cckey_remote_url *u, const cckey_remote_ops **ops);
void *cckey_remote_http_open(cckey_remote_url *u, const cckey_remote_ops **ops);

/* The ordered set of remotes of one store handle. */
typedef struct cckey_remotes cckey_remotes;

cckey_status cckey_remotes_add(cckey_remotes **set, const char *url, const cckey_remote_settings *settings);
void cckey_remotes_free(cckey_remotes *set);
/* Whether any remote takes writes. */
bool cckey_remotes_writable(const cckey_remotes *set);

/* Ask the remotes for key's entry. On a hit the entry file's bytes
 * (unchecked) are in *e; accept(user, e) checks and keeps them (it may take
 * e->payload, leaving NULL) and returns true, or false when the entry is
 * bad (an error of that remote; the next one is asked). */
typedef bool (*cckey_remote_accept)(void *user, cckey_entry_got *e, char *why, size_t why_len);
bool cckey_remotes_fetch(cckey_remotes *set, const char *key, cckey_remote_accept accept, void *user);
/* Write an entry file's bytes to every writable remote. skip_present: HEAD
 * first and send nothing where the remote has the entry. */
void cckey_remotes_push(cckey_remotes *set, const char *key, const void *buf, size_t len, bool skip_present);
/* The same without HEAD, in two halves around the caller's own work (put's
 * local write): begin sends what each remote can take before it answers;
 * end (always called, NULL is a no-op) waits for the answers, counts and
 * reports. e must stay valid until end. NULL from begin: nothing pending. */
typedef struct cckey_push cckey_push;
cckey_push *cckey_remotes_push_begin(cckey_remotes *set, const char *key, const cckey_entry_parts *e);
void cckey_remotes_push_end(cckey_remotes *set, cckey_push *p);

/* This handle's counters. */
void cckey_remotes_counters(const cckey_remotes *set, cckey_remote_counters *out);

/* Folder totals in DIR/remote-stats: add c to them (under a lock), or read them. */
void cckey_remote_totals_add(const char *dir, const cckey_remote_counters *c);
void cckey_remote_totals_read(const char *dir, cckey_remote_counters *out);

/* Sleep for ms milliseconds (retry backoff). */
void cckey_remote_sleep_ms(unsigned ms);

#endif
