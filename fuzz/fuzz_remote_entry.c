/* libFuzzer target: the remote entry reader, on bytes as a remote sends
 * them.
 *
 * Input layout: byte 0 chooses the way in, the rest is what the server
 * sends.
 *   bit 0 set: a Redis server's reply to GET, read by the wire reader
 *              (redis_wire.c) from a socket, first line and bulk included;
 *   bit 0 clear: an HTTP body fed to the receiver (receive.c) in chunks of
 *              1 + (byte 0 >> 3) bytes, with its length announced when
 *              bit 1 is set (Content-Length) and left unsaid otherwise;
 *   bit 2: a cap of 4 KiB instead of 1 MiB.
 * Then, as a look-up would, an entry that came in whole is checked in its
 * parts and its signature checked. The oracle: the checks on the parts as
 * received agree with the checks on the same bytes in one buffer, and a
 * refused entry never reaches the checks. */
#include "remote/remote.h"
#ifdef CCKEY_WITH_REDIS
#include "remote/redis_wire.h"
#endif
#include "entry/sign.h"
#include "entry/entry.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char KEY[] = "00112233445566778899aabbccddeeff:00112233445566778899aabbccddeeff:"
                          "00112233445566778899aabbccddeeff:00112233445566778899aabbccddeeff";

/* Fed as an HTTP body would be: in chunks, as curl's write callback gets it. */
static bool feed_http(cckey_rx *rx, const uint8_t *data, size_t size, uint8_t how)
{
    if (!cckey_rx_start(rx, how & 2 ? size : 0)) return false;
    size_t step = 1 + (how >> 3);
    for (size_t at = 0; at < size; at += step)
        if (!cckey_rx_add(rx, data + at, size - at < step ? size - at : step)) return false;
    return cckey_rx_end(rx);
}

#ifdef CCKEY_WITH_REDIS
/* Read as a Redis reply from a socket whose other end wrote the bytes and
 * closed: a short reply ends at the close, never in a wait. */
static bool feed_redis(cckey_rx *rx, const uint8_t *data, size_t size)
{
    int sv[2];
    if (size > 64 * 1024 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return false;
    int big = 256 * 1024;
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    bool sent = write(sv[0], data, size) == (ssize_t)size;
    close(sv[0]);
    redisContext *c = sent ? redisConnectFd(sv[1]) : NULL;
    if (!c) {
        close(sv[1]);
        return false;
    }
    redisReply *rep = NULL;
    char err[256];
    cckey_wire w = cckey_redis_read_entry(c, rx, cckey_remote_now_ms() + 5000, &rep, err, sizeof err);
    if (rep) freeReplyObject(rep);
    redisFree(c);
    if (w == WIRE_OK && (!rx->started || rx->got != rx->total)) abort();   /* WIRE_OK: a whole entry */
    return w == WIRE_OK;
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint8_t how = data[0];
    data++, size--;
    cckey_rx rx;
    cckey_rx_init(&rx, KEY, how & 4 ? 4096 : 1u << 20, NULL);
    bool whole;
#ifdef CCKEY_WITH_REDIS
    whole = how & 1 ? feed_redis(&rx, data, size) : feed_http(&rx, data, size, how);
#else
    whole = feed_http(&rx, data, size, how);
#endif
    if (whole) {
        if (rx.total > rx.cap || rx.fd >= 0) abort();
        /* The parts as received, against the same bytes joined. */
        size_t n = rx.e.front_len + rx.e.len;
        uint8_t *joined = malloc(n ? n : 1);
        memcpy(joined, rx.e.front, rx.e.front_len);
        if (rx.e.len) memcpy(joined + rx.e.front_len, rx.e.payload, rx.e.len);
        cckey_entry_view v;
        cckey_status parts = cckey_entry_check_parts(&rx.e, KEY, &v);
        if (parts != cckey_entry_check(joined, n, KEY, NULL)) abort();
        if (parts == CCKEY_OK) {
            static const char secret[] = "fuzz secret";
            cckey_status a = cckey_records_check_signature(KEY, v.rec, v.rec_len, v.payload, v.len, secret, 11);
            cckey_status b = cckey_entry_check_signature(joined, n, KEY, secret, 11);
            if (a != b) abort();
        }
        free(joined);
    }
    cckey_rx_free(&rx);
    return 0;
}
