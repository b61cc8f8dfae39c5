/* Settings a cache folder carries for every writer: DIR/cckey.conf lines
 * "NAME = VALUE" ('#' comments), shared with the CLI's remote settings.
 * The store reads max_size, a size limit such as 10G, and max_age, an age
 * such as 30d, so that the limits belong to the cache rather than to one
 * run. A line it cannot read is ignored (cckey cache config says which). */
#include "store_internal.h"
#include "../core/internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cckey_status cckey_size_parse(const char *text, uint64_t *out)
{
    if (!text || !out) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL text or output");
    char *end;
    if (!isdigit((unsigned char)*text)) return cckey_fail(CCKEY_ERR_INVALID_ARG, "\"%s\" is not a size", text);
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: break;
    }
    if (shift && *end == 'i' && end[1] == 'B') end += 2;   /* KiB, MiB, ... */
    else if (*end == 'B') end++;
    if (errno || *end || (shift && v > (UINT64_MAX >> shift)))
        return cckey_fail(CCKEY_ERR_INVALID_ARG, "\"%s\" is not a size such as 500M or 10G", text);
    *out = (uint64_t)v << shift;
    return CCKEY_OK;
}

static char *trim(char *p)
{
    while (isspace((unsigned char)*p)) p++;
    char *e = p + strlen(p);
    while (e > p && isspace((unsigned char)e[-1])) *--e = '\0';
    return p;
}

/* The last value of setting name in DIR/cckey.conf, into buf; false when
 * the file or the setting is not there. */
static bool conf_value(const char *dir, const char *name, char *buf, size_t cap)
{
    char path[4200], line[512];
    snprintf(path, sizeof path, "%s/cckey.conf", dir);
    FILE *f = fopen(path, "r");
    if (!f) return false;
    bool found = false;
    while (fgets(line, sizeof line, f)) {
        char *p = trim(line), *eq = strchr(p, '=');
        if (*p == '#' || !eq) continue;
        *eq = '\0';
        if (strcmp(trim(p), name) == 0) found = true, snprintf(buf, cap, "%s", trim(eq + 1));   /* the last wins */
    }
    fclose(f);
    return found;
}

uint64_t cckey_store_conf_max_bytes(const char *dir)
{
    char v[512];
    uint64_t limit;
    if (!conf_value(dir, "max_size", v, sizeof v) || cckey_size_parse(v, &limit) != CCKEY_OK) return 0;
    return limit;
}

cckey_status cckey_age_parse(const char *text, int64_t *seconds)
{
    if (!text || !seconds) return cckey_fail(CCKEY_ERR_INVALID_ARG, "NULL text or output");
    static const struct { char unit; int64_t s; } units[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}, {'w', 604800}};
    char *end;
    errno = 0;
    unsigned long long v = isdigit((unsigned char)*text) ? strtoull(text, &end, 10) : 0;
    for (size_t i = 0; v && !errno && i < sizeof units / sizeof *units; i++)
        if (*end == units[i].unit && !end[1] && v <= (unsigned long long)(INT64_MAX / units[i].s)) {
            *seconds = (int64_t)v * units[i].s;
            return CCKEY_OK;
        }
    return cckey_fail(CCKEY_ERR_INVALID_ARG, "\"%s\" is not an age such as 30d, 12h, 90m, 45s or 2w", text);
}

int64_t cckey_store_conf_max_age(const char *dir)
{
    char v[512];
    int64_t age;
    if (!conf_value(dir, "max_age", v, sizeof v) || cckey_age_parse(v, &age) != CCKEY_OK) return 0;
    return age;
}

/* compression = zstd turns it on, with compression_level (a whole number
 * zstd has; else its default). Anything else, or nothing, is off: a folder
 * whose setting this release cannot read still works, uncompressed. */
bool cckey_store_conf_compression(const char *dir, int *level)
{
    char v[512];
    *level = 0;
    if (!conf_value(dir, "compression", v, sizeof v) || strcmp(v, "zstd") != 0) return false;
    char *end;
    long l = conf_value(dir, "compression_level", v, sizeof v) ? strtol(v, &end, 10) : 0;
    if (l && !*end && l >= INT32_MIN && l <= INT32_MAX && cckey_compress_level_ok((int)l)) *level = (int)l;
    return cckey_compress_level_ok(0);
}
