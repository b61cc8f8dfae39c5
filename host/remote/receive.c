/* Entries on their way in from a remote (see cckey_rx in remote.h): the
 * header checked first, the cap enforced before anything is allocated, and
 * large entries streamed to a file instead of memory. Both backends feed
 * the same receiver, so Redis and HTTP refuse the same things alike. */
#include "remote.h"
#include "../core/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cckey_rx_init(cckey_rx *rx, const char *key, uint64_t cap, const cckey_spill *spill)
{
    memset(rx, 0, sizeof *rx);
    rx->key = key, rx->cap = cap;
    if (spill) rx->spill = *spill;
    rx->fd = -1;
}

void cckey_rx_free(cckey_rx *rx)
{
    cckey_entry_got_free(&rx->e);
    free(rx->chunk);
    rx->chunk = NULL, rx->chunk_len = 0;
    if (rx->fd >= 0) close(rx->fd);
    rx->fd = -1;
    if (rx->tmp[0]) unlink(rx->tmp);
    rx->tmp[0] = '\0';
}

static bool refuse(cckey_rx *rx, bool local, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool refuse(cckey_rx *rx, bool local, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rx->err, sizeof rx->err, fmt, ap);
    va_end(ap);
    rx->local = local;
    return false;
}

bool cckey_rx_start(cckey_rx *rx, uint64_t announced)
{
    cckey_rx_free(rx);
    rx->started = true, rx->local = false, rx->err[0] = '\0';
    rx->announced = announced, rx->total = 0, rx->got = 0;
    if (announced > rx->cap)
        return refuse(rx, false, "the remote offers an entry of %llu bytes, more than max-entry (%llu)",
                      (unsigned long long)announced, (unsigned long long)rx->cap);
    return true;
}

/* A file for an entry too large for memory: the asker's (the store: a
 * temporary file in the shard folder), else an unnamed one in P_tmpdir
 * (/tmp; a folder that cannot take it). Not $TMPDIR: the library reads no
 * environment but CCKEY_FORCE_ISA. */
static int spill_open(cckey_rx *rx)
{
    if (rx->spill.open) {
        int fd = rx->spill.open(rx->spill.user, rx->key, rx->tmp);
        if (fd >= 0) return fd;
        rx->tmp[0] = '\0';
    }
    char name[4200];
    snprintf(name, sizeof name, "%s/cckey-rx-XXXXXX", P_tmpdir);
    int fd = mkostemp(name, O_CLOEXEC);
    if (fd >= 0) unlink(name);
    return fd;
}

/* The header is in: check it, then make room for the rest. */
static bool head_done(cckey_rx *rx)
{
    uint64_t total;
    if (cckey_entry_check_head(rx->head, rx->key, &total) != CCKEY_OK) {
        snprintf(rx->err, sizeof rx->err, "entry refused: %s", cckey_last_error());
        return false;
    }
    if (total > rx->cap)
        return refuse(rx, false, "the entry's header says %llu bytes, more than max-entry (%llu)",
                      (unsigned long long)total, (unsigned long long)rx->cap);
    if (rx->announced && total != rx->announced)
        return refuse(rx, false, "the entry's header says %llu bytes, the remote sends %llu",
                      (unsigned long long)total, (unsigned long long)rx->announced);
    rx->total = total;
    if (total > CCKEY_RX_MEMORY) {
        if ((rx->fd = spill_open(rx)) < 0 || !(rx->chunk = malloc(CCKEY_RX_CHUNK)))
            return refuse(rx, true, "no room for a %llu-byte entry (a temporary file and %d bytes): %s",
                          (unsigned long long)total, CCKEY_RX_CHUNK, strerror(errno));
        memcpy(rx->chunk, rx->head, CCKEY_ENTRY_HEADER);
        rx->chunk_len = CCKEY_ENTRY_HEADER;
        return true;
    }
    size_t front = cckey_entry_front_len(rx->head, (size_t)total);
    rx->e.front = malloc(front);
    rx->e.payload = total > front ? malloc((size_t)(total - front)) : NULL;
    if (!rx->e.front || (total > front && !rx->e.payload))
        return refuse(rx, true, "no memory for a %llu-byte entry", (unsigned long long)total);
    memcpy(rx->e.front, rx->head, CCKEY_ENTRY_HEADER);
    rx->e.front_len = front, rx->e.len = (size_t)(total - front);
    return true;
}

static bool flush(cckey_rx *rx)
{
    if (!rx->chunk_len) return true;
    if (!cckey_entry_write_all(rx->fd, rx->chunk, rx->chunk_len))
        return refuse(rx, true, "writing a %llu-byte entry to a temporary file: %s",
                      (unsigned long long)rx->total, strerror(errno));
    rx->chunk_len = 0;
    return true;
}

uint64_t cckey_rx_left(const cckey_rx *rx)
{
    return rx->got < CCKEY_ENTRY_HEADER ? CCKEY_ENTRY_HEADER - rx->got : rx->total - rx->got;
}

uint8_t *cckey_rx_room(cckey_rx *rx, size_t *room)
{
    uint64_t left = cckey_rx_left(rx);
    uint8_t *at;
    size_t n;
    if (rx->got < CCKEY_ENTRY_HEADER) at = rx->head + rx->got, n = (size_t)left;
    else if (rx->fd >= 0) at = rx->chunk + rx->chunk_len, n = CCKEY_RX_CHUNK - rx->chunk_len;
    else if (rx->got < rx->e.front_len) at = rx->e.front + rx->got, n = rx->e.front_len - (size_t)rx->got;
    else if (rx->e.payload) at = rx->e.payload + (rx->got - rx->e.front_len), n = (size_t)left;
    else at = NULL, n = 0;   /* no payload buffer: an empty payload, nothing left to take */
    *room = n < left ? n : (size_t)left;
    return at;
}

bool cckey_rx_took(cckey_rx *rx, size_t n)
{
    bool header = rx->got < CCKEY_ENTRY_HEADER;
    rx->got += n;
    if (header) return rx->got < CCKEY_ENTRY_HEADER || head_done(rx);
    if (rx->fd < 0) return true;
    rx->chunk_len += n;
    return rx->chunk_len < CCKEY_RX_CHUNK || flush(rx);
}

bool cckey_rx_add(cckey_rx *rx, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n) {
        size_t room;
        uint8_t *at = cckey_rx_room(rx, &room);
        if (!room)
            return refuse(rx, false, "the remote sends more than the %llu bytes its entry's header says",
                          (unsigned long long)rx->total);
        size_t k = n < room ? n : room;
        memcpy(at, b, k);
        b += k, n -= k;
        if (!cckey_rx_took(rx, k)) return false;
    }
    return true;
}

bool cckey_rx_end(cckey_rx *rx)
{
    if (!rx->started || rx->got < CCKEY_ENTRY_HEADER)
        return refuse(rx, false, "entry refused: %llu bytes, less than an entry's header (%u)",
                      (unsigned long long)rx->got, CCKEY_ENTRY_HEADER);
    if (rx->got != rx->total)
        return refuse(rx, false, "entry cut short: %llu of %llu bytes", (unsigned long long)rx->got,
                      (unsigned long long)rx->total);
    if (rx->fd < 0) return true;
    if (!flush(rx)) return false;
    free(rx->chunk);
    rx->chunk = NULL;
    if (rx->tmp[0]) {   /* read back through a descriptor that cannot write */
        close(rx->fd);
        rx->fd = open(rx->tmp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (rx->fd < 0)
            return refuse(rx, true, "reopening a received entry: %s", strerror(errno));
    }
    return true;
}
