/* Entries on a hiredis connection without hiredis' copies. hiredis joins a
 * command into one buffer (a copy of a 100 KiB entry), and reads a reply in
 * 16 KiB steps into a buffer it grows, then copies the string out of it.
 * Here a SET's value goes from the entry's parts to the socket in one
 * sendmsg, and a GET's bulk reply from the socket straight into the
 * buffers the entry's parts are kept in (cckey_entry_got): the only copy is
 * the kernel's. Other replies (status, nil,
 * errors) still go through hiredis' reader, fed with what was read.
 *
 * The socket is hiredis' blocking one, with its timeouts (SO_SNDTIMEO and
 * SO_RCVTIMEO from redisSetTimeout): a server that stops answering ends a
 * call with an error after the op timeout, as in hiredis. Only whole
 * request/reply exchanges are made, so hiredis' own buffers are empty
 * before and after each. */
#include "redis_wire.h"
#include "../store/store_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static void io_error(char *err, size_t err_len, const char *what)
{
    bool timeout = errno == EAGAIN || errno == EWOULDBLOCK;
    snprintf(err, err_len, "%s", timeout ? "connection lost or timed out" : what);
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
        at += put_len(p + at, cap - at, '$', lens[i]);
        if (at + lens[i] + 2 > cap) return cap;
        memcpy(p + at, argv[i], lens[i]);
        memcpy(p + at + lens[i], "\r\n", 2);
        at += lens[i] + 2;
    }
    return at;
}

static bool send_all(int fd, struct iovec *iov, int n, char *err, size_t err_len)
{
    while (n) {
        /* MSG_NOSIGNAL: a server gone away is an error here, not SIGPIPE. */
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t w = sendmsg(fd, &m, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            io_error(err, err_len, "connection lost");
            return false;
        }
        for (; n && (size_t)w >= iov->iov_len; iov++, n--) w -= (ssize_t)iov->iov_len;
        if (n) iov->iov_base = (char *)iov->iov_base + w, iov->iov_len -= (size_t)w;
    }
    return true;
}

bool cckey_redis_send(redisContext *c, int argc, const char **argv, const size_t *lens, int big_at,
                      const cckey_entry_parts *e, char *err, size_t err_len)
{
    enum { SHORT = 1024 };   /* the short arguments: a command name, a key, a TTL */
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
        return false;
    }
    struct iovec iov[CCKEY_PARTS + 2];
    int n = 0;
    iov[n++] = (struct iovec){head, h};
    for (int i = 0; big_at >= 0 && i < CCKEY_PARTS; i++)
        if (e->n[i]) iov[n++] = (struct iovec){(void *)e->p[i], e->n[i]};
    if (t) iov[n++] = (struct iovec){tail, t};
    return send_all(c->fd, iov, n, err, err_len);
}

/* A reply's bytes: those read with its first line first, then the socket. */
typedef struct stream {
    int fd;
    const char *have;
    size_t have_n;
} stream;

static bool fill(stream *s, void *dst, size_t n, char *err, size_t err_len)
{
    uint8_t *p = dst;
    size_t k = n < s->have_n ? n : s->have_n;
    if (k) memcpy(p, s->have, k);
    s->have += k, s->have_n -= k, p += k, n -= k;
    while (n) {
        ssize_t r = recv(s->fd, p, n, MSG_WAITALL);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            if (r == 0) errno = 0;
            io_error(err, err_len, "connection lost");
            return false;
        }
        p += r, n -= (size_t)r;
    }
    return true;
}

/* A bulk string of n bytes, an entry: split as cckey_entry_front_len says,
 * each part read straight into its own buffer, then the closing CRLF. */
static int read_entry(stream *s, size_t n, cckey_entry_got *e, char *err, size_t err_len)
{
    uint8_t head[CCKEY_ENTRY_HEADER], crlf[2];
    size_t h = n < sizeof head ? n : sizeof head;
    if (!fill(s, head, h, err, err_len)) return -1;
    size_t front = cckey_entry_front_len(head, n);
    e->front = malloc(front ? front : 1);
    e->payload = n > front ? malloc(n - front) : NULL;
    if (!e->front || (n > front && !e->payload)) {
        cckey_entry_got_free(e);
        snprintf(err, err_len, "no memory for a %zu-byte entry", n);
        return -1;
    }
    memcpy(e->front, head, h);
    e->front_len = front, e->len = n - front;
    bool ok = fill(s, e->front + h, front - h, err, err_len) && fill(s, e->payload, e->len, err, err_len) &&
              fill(s, crlf, 2, err, err_len);
    if (ok && (crlf[0] != '\r' || crlf[1] != '\n' || s->have_n)) {
        snprintf(err, err_len, "protocol error: a bulk reply not ended as it said");
        ok = false;
    }
    if (!ok) cckey_entry_got_free(e);
    return ok ? 1 : -1;
}

int cckey_redis_read_entry(redisContext *c, cckey_entry_got *e, redisReply **rep, char *err, size_t err_len)
{
    /* The first line, and whatever followed it in the same reads. */
    char first[4096];
    size_t got = 0;
    char *eol = NULL;
    while (!eol && got < sizeof first) {
        ssize_t r = recv(c->fd, first + got, sizeof first - got, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            if (r == 0) errno = 0;
            io_error(err, err_len, "connection lost");
            return -1;
        }
        got += (size_t)r;
        eol = memchr(first, '\n', got);
    }
    if (eol && first[0] == '$' && eol > first + 1 && eol[-1] == '\r') {
        char *end;
        long long n = strtoll(first + 1, &end, 10);
        if (end == eol - 1 && n >= 0 && (unsigned long long)n < SIZE_MAX / 2) {
            stream s = {c->fd, eol + 1, got - (size_t)(eol + 1 - first)};
            return read_entry(&s, (size_t)n, e, err, err_len);
        }
    }
    /* Not a bulk string of ours: hiredis reads it, from these bytes on. */
    void *r = NULL;
    if (redisReaderFeed(c->reader, first, got) != REDIS_OK || redisGetReply(c, &r) != REDIS_OK || !r) {
        snprintf(err, err_len, "%s", c->err == REDIS_ERR_IO ? "connection lost or timed out" : c->errstr);
        return -1;
    }
    *rep = r;
    return 0;
}
