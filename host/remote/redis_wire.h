/* Requests on a hiredis connection with hiredis' parser but not its I/O
 * (redis_wire.c): each ends by its deadline, and no reply can make it hold
 * more than its cap in memory. */
#ifndef CCKEY_REDIS_WIRE_H
#define CCKEY_REDIS_WIRE_H

#include "remote.h"

#include <hiredis/hiredis.h>

/* How a call on the connection ended. Anything but WIRE_OK (and, for
 * read_entry, WIRE_OTHER) leaves the connection out of step: drop it. */
typedef enum {
    WIRE_OK,       /* done: an entry received, a command sent, a reply read */
    WIRE_OTHER,    /* read_entry: a reply that is not a bulk string, in *rep */
    WIRE_REFUSED,  /* the entry was refused (rx->err): the server is fine */
    WIRE_BROKEN,   /* timed out, connection lost, or a protocol error */
} cckey_wire;

/* Send a command: argc short arguments, with the one at big_at (or none,
 * when big_at < 0) taken from e instead, straight from its parts. */
cckey_wire cckey_redis_send(redisContext *c, int argc, const char **argv, const size_t *lens, int big_at,
                            const cckey_entry_parts *e, uint64_t deadline, char *err, size_t err_len);

/* The reply to the command just sent (status, integer, error, nil or a
 * short string; at most 64 KiB of it): WIRE_OK and *rep (hiredis'). */
cckey_wire cckey_redis_reply(redisContext *c, uint64_t deadline, redisReply **rep, char *err, size_t err_len);

/* GET's reply: a bulk string received into rx (WIRE_OK, rx ended), or
 * another reply in *rep (WIRE_OTHER). */
cckey_wire cckey_redis_read_entry(redisContext *c, cckey_rx *rx, uint64_t deadline, redisReply **rep, char *err,
                                  size_t err_len);

#endif
