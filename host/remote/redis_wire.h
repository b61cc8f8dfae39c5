/* Entries on a hiredis connection without hiredis' copies (redis_wire.c). */
#ifndef CCKEY_REDIS_WIRE_H
#define CCKEY_REDIS_WIRE_H

#include "remote.h"

#include <hiredis/hiredis.h>

/* Send a command: argc short arguments, with the one at big_at (or none,
 * when big_at < 0) taken from e instead. false: the connection failed (err
 * filled) and must be dropped. */
bool cckey_redis_send(redisContext *c, int argc, const char **argv, const size_t *lens, int big_at,
                      const cckey_entry_parts *e, char *err, size_t err_len);

/* The reply to the command just sent. A bulk string: 1, its bytes in *e
 * (an entry's parts, unchecked). Any other reply: 0 and *rep (hiredis').
 * -1: the connection failed or broke the protocol (err filled; drop it). */
int cckey_redis_read_entry(redisContext *c, cckey_entry_got *e, redisReply **rep, char *err, size_t err_len);

#endif
