/* UTF-8 checks for the text the CLI prints as JSON (cli.h). On their own,
 * so that the JSON writer and its test need nothing else of the CLI. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

/* The length of the well-formed UTF-8 sequence at s (n bytes left), or 0. */
size_t cli_utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    if (!len || len > n) return 0;
    unsigned cp = len == 1 ? c : c & (0x7f >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    static const unsigned least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return len;
}

bool cli_utf8_okn(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    for (size_t k; n; p += k, n -= k)
        if (!(k = cli_utf8_len(p, n))) return false;
    return true;
}

bool cli_utf8_ok(const char *s) { return cli_utf8_okn(s, strlen(s)); }

const char *cli_utf8_escape(const char *s, char *buf, size_t cap)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), used = 0;
    while (n && used + 5 < cap) {
        size_t k = cli_utf8_len(p, n);
        if (k) {
            if (used + k >= cap) break;
            memcpy(buf + used, p, k);
            used += k;
        } else {
            used += (size_t)snprintf(buf + used, cap - used, "\\x%02x", *p);
            k = 1;
        }
        p += k, n -= k;
    }
    buf[used] = '\0';
    return buf;
}
