/* Languages on scan's command line: --language NAMES, and the LANGS: that
 * ties a -d device to the languages it compiles. */
#include "scan_langs.h"

#include <string.h>

/* A backend's languages under one name. A member this build does not know
 * is left out, and a group with no known member is no name at all: the
 * Vulkan backend's languages (GLSL and HLSL, both to SPIR-V) join here by
 * being named in scan/files.c. */
static const struct {
    const char *name;
    const char *members[4];
} groups[] = {
    {"vulkan", {"glsl", "hlsl", NULL}},
};

/* The languages one name stands for, or 0. */
static unsigned mask_of(const char *name, size_t len)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf) return 0;
    memcpy(buf, name, len);
    buf[len] = '\0';
    scan_lang l = scan_lang_from_name(buf);
    if (l) return 1u << l;
    unsigned m = 0;
    for (size_t g = 0; g < sizeof groups / sizeof *groups; g++)
        if (strcmp(groups[g].name, buf) == 0)
            for (size_t i = 0; groups[g].members[i]; i++)
                if ((l = scan_lang_from_name(groups[g].members[i]))) m |= 1u << l;
    return m;
}

/* The known names, for messages and suggestions; their count. */
static size_t known(const char **names, size_t max)
{
    size_t n = 0;
    for (unsigned l = 1; n < max && *scan_lang_name((scan_lang)l); l++) names[n++] = scan_lang_name((scan_lang)l);
    for (size_t g = 0; n < max && g < sizeof groups / sizeof *groups; g++)
        if (mask_of(groups[g].name, strlen(groups[g].name))) names[n++] = groups[g].name;
    return n;
}

unsigned scan_langs_parse(const char *names, size_t len, const char **bad, size_t *bad_len)
{
    unsigned mask = 0;
    const char *p = names, *end = names + len;
    for (;;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        size_t n = comma ? (size_t)(comma - p) : (size_t)(end - p);
        unsigned m = mask_of(p, n);
        if (!m) {
            *bad = p, *bad_len = n;
            return 0;
        }
        mask |= m;
        if (!comma) return mask;
        p = comma + 1;
    }
}

void scan_langs_known(char *buf, size_t len)
{
    const char *names[32];
    size_t n = known(names, 32), k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? ", " : "", names[i]);
}

const char *scan_langs_suggest(const char *word, size_t len)
{
    const char *names[32];
    char w[32];
    if (len >= sizeof w) return NULL;
    memcpy(w, word, len);
    w[len] = '\0';
    return cli_suggest(w, names, known(names, 32));
}

int scan_device_spec(const char *arg, unsigned *langs, const char **id)
{
    const char *colon = strchr(arg, ':'), *bad;
    size_t bad_len;
    *langs = SCAN_ALL_LANGS, *id = arg;
    if (colon == arg) {
        *id = arg + 1;   /* ":ID": no languages named, the rest is the identity */
    } else if (colon) {
        unsigned m = scan_langs_parse(arg, (size_t)(colon - arg), &bad, &bad_len);
        if (m) *langs = m, *id = colon + 1;
    }
    return **id ? 0 : -1;
}
