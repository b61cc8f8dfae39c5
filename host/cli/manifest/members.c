/* Manifest members that are one edit from a known one ("devcie",
 * "optoins"): unknown members are otherwise ignored, so a typo would
 * silently drop a field. A typo is named once per run, as a warning, or as
 * the hint of the error it causes (a missing "device"). */
#include "manifest.h"

#include <pthread.h>
#include <string.h>

static const char *const known[] = {"device", "name", "source", "source_file", "options", "language"};

const char *manifest_near_member(const mj_line *j, char typo[64], size_t *off)
{
    const mj_member *present[] = {&j->device, &j->name, &j->source, &j->source_file, &j->options, &j->language};
    for (size_t u = 0; u < j->n_unknown; u++) {
        cckey_bytes k = j->unknown[u];
        /* Longer names are more than one edit from every known one. */
        if (k.len >= 63 || memchr(k.ptr, '\0', k.len)) continue;
        memcpy(typo, k.ptr, k.len);
        typo[k.len] = '\0';
        const char *guess = cli_suggest(typo, known, sizeof known / sizeof *known);
        for (size_t i = 0; guess && i < sizeof known / sizeof *known; i++)
            if (guess == known[i] && present[i]->present) guess = NULL;
        if (guess) {
            *off = j->unknown_off[u];
            return guess;
        }
    }
    return NULL;
}

/* Lines are parsed on many threads; one warning per distinct typo. */
static pthread_mutex_t said_lock = PTHREAD_MUTEX_INITIALIZER;
static char said[8][64];
static size_t n_said;

void manifest_warn_near_member(const char *label, size_t line_no, size_t col, const char *typo, const char *guess)
{
    pthread_mutex_lock(&said_lock);
    bool seen = false;
    for (size_t i = 0; i < n_said; i++) seen |= strncmp(said[i], typo, sizeof said[i] - 1) == 0;
    if (!seen && n_said < sizeof said / sizeof *said) snprintf(said[n_said++], sizeof said[0], "%s", typo);
    pthread_mutex_unlock(&said_lock);
    if (!seen)
        cli_warn("%s:%zu:%zu: unknown member \"%s\" is ignored; did you mean \"%s\"?", label, line_no, col, typo,
                 guess);
}
