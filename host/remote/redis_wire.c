/* Requests on a hiredis connection with hiredis' parser but not its I/O.
 *
 * Time: hiredis sets its timeout once (SO_RCVTIMEO), and the kernel counts
 * it per socket call, so a server that sends a byte a second never times
 * out. Here each send and receive is given what is left of the request's
 * deadline, so a request ends by its timeout however the server drips its
 * bytes (a call returns what it got when its time is up). A reply already
 * received when the deadline passes is still read.
 *
 * Memory: hiredis buffers a whole reply before it hands it over. Here a
 * GET's bulk reply goes from the socket into the entry's receiver
 * (cckey_rx), which checks the announced length against the cap and the
 * entry's header before it makes room for the rest; other replies go
 * through hiredis' parser, at most 64 KiB of them, and never an array.
 *
 * Copies: a SET's value goes from the entry's parts to the socket in one
 * sendmsg, and a GET's bulk from the socket straight into the buffers the
 * entry is kept in: the only copy is the kernel's. Only whole
 * request/reply exchanges are made, so the parser holds nothing between
 * them. */
#include "redis_wire.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

enum { REPLY_MAX = 64 << 10 };

/* Let the next blocking call on fd (opt: SO_RCVTIMEO or SO_SNDTIMEO) wait
 * at most until the deadline; false once it has passed (errno ETIMEDOUT).
 * Set before every call, as the kernel counts a timeout per call. */
static bool arm(int fd, int opt, uint64_t deadline)
{
    uint64_t now = cckey_remote_now_ms();
    if (now >= deadline) {
        errno = ETIMEDOUT;
        return false;
    }
    uint64_t left = deadline - now;   /* > 0: a zero timeout would mean none */
    struct timeval tv = {(time_t)(left / 1000), (suseconds_t)(left % 1000) * 1000};
    return setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof tv) == 0;
}

static cckey_wire io_error(char *err, size_t err_len, const char *what)
{
    int e = errno;
    if (e == ETIMEDOUT) snprintf(err, err_len, "timed out");
    else if (e == 0) snprintf(err, err_len, "connection closed by the server%s", what);
    else snprintf(err, err_len, "connection lost%s: %s", what, strerror(e));
    return WIRE_BROKEN;
}

/* Up to n bytes (flags: MSG_WAITALL to wait for all n, as far as the
 * deadline allows): how many (> 0), or -1 (errno: ETIMEDOUT, 0 when the
 * server closed the connection). Bytes already received are taken even
 * after the deadline. */
static ssize_t recv_some(int fd, void *p, size_t n, int flags, uint64_t deadline)
{
    for (;;) {
        bool armed = arm(fd, SO_RCVTIMEO, deadline);
        if (!armed && errno != ETIMEDOUT) return -1;
        ssize_t r = recv(fd, p, n, armed ? flags : MSG_DONTWAIT);
        if (r > 0) return r;
        if (r == 0) {
            errno = 0;
            return -1;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) errno = ETIMEDOUT;
        return -1;
    }
}

static bool send_all(int fd, struct iovec *iov, int n, uint64_t deadline)
{
    while (n) {
        if (!arm(fd, SO_SNDTIMEO, deadline)) return false;
        /* MSG_NOSIGNAL: a server gone away is an error here, not SIGPIPE. */
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t w = sendmsg(fd, &m, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) errno = ETIMEDOUT;
        if (w <= 0) return false;
        for (; n && (size_t)w >= iov->iov_len; iov++, n--) w -= (ssize_t)iov->iov_len;
        if (n) iov->iov_base = (char *)iov->iov_base + w, iov->iov_len -= (size_t)w;
    }
    return true;
}

/* "$LEN\r\n" or "*N\r\n" into p; the bytes written. */
static size_t put_len(char *p, size_t cap, char kind, size_t n)
{
    int w = snprintf(p, cap, "%c%zu\r\n", kind, n);
    return w > 0 && (size_t)w < cap ? (size_t)w : cap;
}

/* Short arguments [from, to) in RESP, after what p holds (at). */
static size_t put_args(char *p, size_t cap, size_t at, const char **argv, const size_t *lens, int from, int to)
{
    for (int i = from; i < to && at < cap; i++) {
        size_t n = lens ? lens[i] : strlen(argv[i]);
        at += put_len(p + at, cap - at, '$', n);
        if (at + n + 2 > cap) return cap;
        memcpy(p + at, argv[i], n);
        memcpy(p + at + n, "\r\n", 2);
        at += n + 2;
    }
    return at;
}

cckey_wire cckey_redis_send(redisContext *c, int argc, const char **argv, const size_t *lens, int big_at,
                            const cckey_entry_parts *e, uint64_t deadline, char *err, size_t err_len)
{
    enum { SHORT = 1024 };   /* the short arguments: a command name, a key, a TTL, a password */
    char head[SHORT], tail[SHORT];
    int split = big_at < 0 ? argc : big_at;
    size_t h = put_len(head, SHORT, '*', (size_t)argc);
    h = put_args(head, SHORT, h, argv, lens, 0, split);
    size_t t = 0;
    if (big_at >= 0) {
        h = h < SHORT ? h + put_len(head + h, SHORT - h, '$', cckey_entry_parts_len(e)) : h;
        memcpy(tail, "\r\n", 2);
        t = put_args(tail, SHORT, 2, argv, lens, big_at + 1, argc);
    }
    if (h >= SHORT || t >= SHORT) {
        snprintf(err, err_len, "command too long");
        return WIRE_BROKEN;
    }
    struct iovec iov[CCKEY_PARTS + 2];
    int n = 0;
    iov[n++] = (struct iovec){head, h};
    for (int i = 0; big_at >= 0 && i < CCKEY_PARTS; i++)
        if (e->n[i]) iov[n++] = (struct iovec){(void *)e->p[i], e->n[i]};
    if (t) iov[n++] = (struct iovec){tail, t};
    bool ok = send_all(c->fd, iov, n, deadline);
    memset(head, 0, sizeof head);   /* it may hold AUTH's password */
    return ok ? WIRE_OK : io_error(err, err_len, " while sending");
}

/* None of our commands is answered with an array: refusing them keeps the
 * parser from allocating what a hostile "*N" line asks for. */
static bool simple_reply(const char *p, size_t n, char *err, size_t err_len)
{
    if (!n || p[0] == '+' || p[0] == '-' || p[0] == ':' || p[0] == '$') return true;
    snprintf(err, err_len, "protocol error: a reply starting with byte %u", (unsigned char)p[0]);
    return false;
}

/* A reply through hiredis' parser, from the bytes already read (have) on. */
static cckey_wire parse_reply(redisContext *c, const char *have, size_t n, uint64_t deadline, redisReply **rep,
                              char *err, size_t err_len)
{
    if (!simple_reply(have, n, err, err_len)) return WIRE_BROKEN;
    size_t fed = n;
    if (n && redisReaderFeed(c->reader, have, n) != REDIS_OK) goto protocol;
    for (;;) {
        void *r = NULL;
        if (redisReaderGetReply(c->reader, &r) != REDIS_OK) goto protocol;
        if (r) {
            *rep = r;
            return WIRE_OK;
        }
        if (fed >= REPLY_MAX) {
            snprintf(err, err_len, "protocol error: a reply of more than %d bytes", REPLY_MAX);
            return WIRE_BROKEN;
        }
        char buf[4096];
        ssize_t k = recv_some(c->fd, buf, sizeof buf, 0, deadline);
        if (k < 0) return io_error(err, err_len, "");
        if (!fed && !simple_reply(buf, (size_t)k, err, err_len)) return WIRE_BROKEN;
        if (redisReaderFeed(c->reader, buf, (size_t)k) != REDIS_OK) goto protocol;
        fed += (size_t)k;
    }
protocol:
    snprintf(err, err_len, "protocol error: %s", c->reader->errstr);
    return WIRE_BROKEN;
}

cckey_wire cckey_redis_reply(redisContext *c, uint64_t deadline, redisReply **rep, char *err, size_t err_len)
{
    return parse_reply(c, NULL, 0, deadline, rep, err, err_len);
}

/* Exactly n bytes into p: those read with the first line first. */
typedef struct stream {
    int fd;
    const char *have;
    size_t have_n;
    uint64_t deadline;
} stream;

static ssize_t next_bytes(stream *s, void *p, size_t n)
{
    if (!s->have_n) return recv_some(s->fd, p, n, MSG_WAITALL, s->deadline);
    size_t k = n < s->have_n ? n : s->have_n;
    memcpy(p, s->have, k);
    s->have += k, s->have_n -= k;
    return (ssize_t)k;
}

/* A bulk string of n bytes: each part read straight where rx wants it,
 * then the closing CRLF. */
static cckey_wire read_bulk(stream *s, uint64_t n, cckey_rx *rx, char *err, size_t err_len)
{
    if (n < CCKEY_ENTRY_HEADER) {
        snprintf(err, err_len, "entry refused: %llu bytes, less than an entry's header", (unsigned long long)n);
        return WIRE_REFUSED;
    }
    if (!cckey_rx_start(rx, n)) return WIRE_REFUSED;
    while (rx->got < n) {
        size_t room;
        uint8_t *at = cckey_rx_room(rx, &room);
        ssize_t k = next_bytes(s, at, room);
        if (k < 0) return io_error(err, err_len, " in the middle of an entry");
        if (!cckey_rx_took(rx, (size_t)k)) return WIRE_REFUSED;
    }
    char crlf[2];
    for (size_t got = 0; got < 2;) {
        ssize_t k = next_bytes(s, crlf + got, 2 - got);
        if (k < 0) return io_error(err, err_len, "");
        got += (size_t)k;
    }
    if (crlf[0] != '\r' || crlf[1] != '\n' || s->have_n) {
        snprintf(err, err_len, "protocol error: a bulk reply not ended as it said");
        return WIRE_BROKEN;
    }
    return cckey_rx_end(rx) ? WIRE_OK : WIRE_REFUSED;
}

cckey_wire cckey_redis_read_entry(redisContext *c, cckey_rx *rx, uint64_t deadline, redisReply **rep, char *err,
                                  size_t err_len)
{
    /* The first line, and whatever followed it in the same reads. */
    char first[4096];
    size_t got = 0;
    char *eol = NULL;
    while (!eol && got < 64) {
        ssize_t r = recv_some(c->fd, first + got, sizeof first - got, 0, deadline);
        if (r < 0) return io_error(err, err_len, "");
        got += (size_t)r;
        eol = memchr(first, '\n', got);
    }
    if (eol && first[0] == '$' && eol > first + 1 && eol[-1] == '\r') {
        char *end;
        errno = 0;
        long long n = strtoll(first + 1, &end, 10);
        if (end == eol - 1 && !errno && n >= 0) {
            stream s = {c->fd, eol + 1, got - (size_t)(eol + 1 - first), deadline};
            cckey_wire w = read_bulk(&s, (uint64_t)n, rx, err, err_len);
            if (w == WIRE_REFUSED && !*err) snprintf(err, err_len, "%s", rx->err);
            return w;
        }
    }
    /* Not a bulk string of ours ($-1, an error, ...): hiredis parses it. */
    cckey_wire w = parse_reply(c, first, got, deadline, rep, err, err_len);
    return w == WIRE_OK ? WIRE_OTHER : w;
}
