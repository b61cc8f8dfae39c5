/* Remote caches: one small interface, a Redis and an HTTP implementation,
 * and the layer that keeps their order, counters and warnings. They move
 * entry files by name and know nothing of a store folder: the store layers
 * them under itself (its layered.c) and calls only the layer
 * (cckey_remotes_*). */
#ifndef CCKEY_REMOTE_H
#define CCKEY_REMOTE_H

#include "cckey_store.h"
#include "../entry/entry.h"

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
    uint64_t max_entry;  /* the largest entry file taken from it */
    bool read_only;
} cckey_remote_url;

/* url as a message may show it: userinfo as ***, and the values of
 * attributes other than the known harmless ones (timeouts, ttl, retries,
 * max-entry, file paths) as ***. For URLs that fail to parse too. */
void cckey_remote_redact(const char *url, char *out, size_t cap);

/* Parse url with its attributes over settings (may be NULL). 0, or -1 with
 * why filled, or -2 with why filled when the URL needs a library this
 * process cannot load (libcurl for http). */
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

/* An entry file on its way in from a remote (receive.c). The backend says
 * how long the body is when the server said so (start), writes the bytes,
 * in order, where room says and reports them (took), or hands them over
 * (add), then says the body is over (end). Any of these may refuse (false,
 * err filled): the transfer must then stop and its connection be dropped.
 *
 * The fixed header is checked as soon as its 192 bytes are in (magic,
 * version, key, lengths against what the server announced, and the whole
 * entry against cap), before anything else is read or allocated: junk or
 * an oversized object costs 192 bytes. An entry of up to CCKEY_RX_MEMORY
 * bytes is then received into memory, split as a look-up wants it; a
 * larger one streams through a CCKEY_RX_CHUNK buffer into a temporary file:
 * the one spill opens where the asker gave one (the store: in the key's
 * shard folder, renamed into place once checked), else an unnamed one in
 * /tmp. So a request holds at most max(entry, CCKEY_RX_MEMORY) bytes in
 * memory while it receives. */
enum { CCKEY_RX_MEMORY = 8 << 20, CCKEY_RX_CHUNK = 1 << 20 };
/* Where a large entry for key spills: open(user, key, tmp) opens a new
 * temporary file for writing and names it in tmp (4200 bytes), or returns
 * -1. */
typedef struct cckey_spill {
    int (*open)(void *user, const char *key, char tmp[4200]);
    void *user;
} cckey_spill;
typedef struct cckey_rx {
    const char *key;
    uint64_t cap;
    cckey_spill spill;                /* open NULL: no place of the asker's */
    bool started;
    uint64_t announced, total, got;   /* announced: 0 when not said; total: from the header */
    uint8_t head[CCKEY_ENTRY_HEADER];
    cckey_entry_got e;                /* in memory (fd < 0) */
    int fd;                           /* spilled: the file (read-only once ended) */
    char tmp[4200];                   /* its name from spill; "" for an unnamed one */
    uint8_t *chunk;
    size_t chunk_len;
    bool local;                       /* refused for a local failure (a write), not the remote's */
    char err[256];
} cckey_rx;
void cckey_rx_init(cckey_rx *rx, const char *key, uint64_t cap, const cckey_spill *spill);   /* spill: may be NULL */
/* A new body (anything received before is dropped); announced: its length, 0: unknown. */
bool cckey_rx_start(cckey_rx *rx, uint64_t announced);
uint8_t *cckey_rx_room(cckey_rx *rx, size_t *room);
bool cckey_rx_took(cckey_rx *rx, size_t n);
bool cckey_rx_add(cckey_rx *rx, const void *p, size_t n);
bool cckey_rx_end(cckey_rx *rx);
/* Bytes still wanted before the body is whole (the header's, until it is in). */
uint64_t cckey_rx_left(const cckey_rx *rx);
void cckey_rx_free(cckey_rx *rx);

/* One backend. name is the entry's file name (the key with '-' for ':'),
 * shard its folder name. get receives a hit into rx (started, ended). err
 * receives the reason for ERROR and DOWN (rx->err, where rx refused).
 * Every request, connection and retries included, ends by the URL's
 * timeout. Thread-safe. */
typedef struct cckey_remote_ops {
    cckey_remote_result (*get)(void *impl, const char *shard, const char *name, cckey_rx *rx, char *err,
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

/* Ask the remotes for key's entry, each refused beyond min(its max-entry,
 * cap) bytes (cap 0: no further limit); large entries spill where spill
 * says (may be NULL; see cckey_rx). On a hit the entry file's bytes (unchecked) are in
 * rx; accept checks them (the signature too, where the remote has a secret)
 * and keeps them (it may take rx->e.payload, leaving NULL). TAKEN and
 * TAKEN_NOT_KEPT (served, but the folder could not keep it: a local
 * problem, said once, why filled) are hits; REFUSED is an error of that
 * remote (the next one is asked); LOCAL_FAIL a local problem (said once;
 * the look-up is a miss, and no remote is blamed). */
typedef enum { CCKEY_TAKEN, CCKEY_TAKEN_NOT_KEPT, CCKEY_REFUSED, CCKEY_LOCAL_FAIL } cckey_accept_result;
typedef cckey_accept_result (*cckey_remote_accept)(void *user, cckey_rx *rx, const void *secret, size_t secret_len,
                                                   char *why, size_t why_len);
bool cckey_remotes_fetch(cckey_remotes *set, const char *key, uint64_t cap, const cckey_spill *spill,
                         cckey_remote_accept accept, void *user);

/* How an entry that an import brings stands with the writable remotes that
 * sign: FOREIGN when it carries a signature one of their secrets did not
 * make (never sent, never kept), UNSIGNED when it carries none, else OK
 * (also where no remote signs). */
typedef enum { CCKEY_SIG_OK, CCKEY_SIG_UNSIGNED, CCKEY_SIG_FOREIGN } cckey_sig_state;
cckey_sig_state cckey_remotes_vouch(cckey_remotes *set, const char *key, const void *buf, size_t len);
/* Write an entry file's bytes to every writable remote, as an import does:
 * a remote that signs is sent an entry its secret signed as it is, an
 * unsigned one only with CCKEY_PUSH_SIGN_UNSIGNED (signed here, vouched for
 * by whoever asked), never a foreign-signed one. CCKEY_PUSH_SKIP_PRESENT:
 * HEAD first and send nothing where the remote has the entry. Returns how
 * many remotes were not sent it for want of a signature. */
enum { CCKEY_PUSH_SKIP_PRESENT = 1, CCKEY_PUSH_SIGN_UNSIGNED = 2 };
unsigned cckey_remotes_push(cckey_remotes *set, const char *key, const void *buf, size_t len, unsigned flags);
/* The same without HEAD, in two halves around the caller's own work (put's
 * local write): begin sends what each remote can take before it answers;
 * end (always called, NULL is a no-op) waits for the answers, counts and
 * reports. e must stay valid until end. NULL from begin: nothing pending. */
typedef struct cckey_push cckey_push;
cckey_push *cckey_remotes_push_begin(cckey_remotes *set, const char *key, const cckey_entry_parts *e);
void cckey_remotes_push_end(cckey_remotes *set, cckey_push *p);

/* This handle's counters. */
void cckey_remotes_counters(const cckey_remotes *set, cckey_remote_counters *out);

/* One remote's own traffic: what it was asked and how it answered. */
enum { CCKEY_RC_HITS, CCKEY_RC_MISSES, CCKEY_RC_ERRORS, CCKEY_RC_PUTS, CCKEY_RC_BYTES_IN, CCKEY_RC_BYTES_OUT,
       CCKEY_RC_TIME_US, CCKEY_RC_N };
typedef void (*cckey_remote_each_fn)(void *user, const char *display, const uint64_t count[CCKEY_RC_N]);
/* Each remote of the set, in order, with its counts (display: its URL, no secrets). */
void cckey_remotes_each(const cckey_remotes *set, cckey_remote_each_fn fn, void *user);

/* Sleep for ms milliseconds (retry backoff). */
void cckey_remote_sleep_ms(unsigned ms);
/* Milliseconds on a clock that only goes forward: requests' deadlines. */
uint64_t cckey_remote_now_ms(void);

#endif
