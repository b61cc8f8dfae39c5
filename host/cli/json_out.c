/* JSON text written by hand where no document is built (batch and warm
 * write one object a line, as they go). */
#include "cli.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* A JSON string: quotes, backslashes and control bytes escaped; a byte
 * that is not part of valid UTF-8 (a file name can hold any) becomes U+FFFD,
 * so the line stays valid JSON. len bytes (a NUL is \u0000). */
void cli_put_json_string(FILE *out, const char *s, size_t len)
{
    fputc('"', out);
    if (!s) s = "";   /* an empty field may have no bytes at all */
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end) {
        unsigned char c = *p;
        if (c == '"' || c == '\\') {
            fputc('\\', out);
            fputc(c, out);
            p++;
        } else if (c < 0x20) {
            fprintf(out, "\\u%04x", c);
            p++;
        } else if (c < 0x80) {
            fputc(c, out);
            p++;
        } else {
            size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
            uint32_t cp = n ? c & (0x7f >> n) : 0;
            size_t k = 1;
            for (; k < n && p + k < end && (p[k] & 0xc0) == 0x80; k++) cp = cp << 6 | (p[k] & 0x3f);
            bool ok = n && k == n && cp >= (n == 2 ? 0x80u : n == 3 ? 0x800u : 0x10000u) && cp <= 0x10ffff &&
                      !(cp >= 0xd800 && cp <= 0xdfff);
            if (ok) fwrite(p, 1, n, out);
            else fputs("\xef\xbf\xbd", out);
            p += ok ? n : 1;
        }
    }
    fputc('"', out);
}


void cli_put_json_strings(FILE *out, const char *before, const char *const *v, size_t n)
{
    fputs(before, out);
    fputc('[', out);
    for (size_t i = 0; i < n; i++) {
        if (i) fputs(", ", out);
        cli_put_json_string(out, v[i], strlen(v[i]));
    }
    fputc(']', out);
}
