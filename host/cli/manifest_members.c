/* Manifest members that are one edit from a known one ("devcie",
 * "optoins"): unknown members are otherwise ignored, so a typo would
 * silently drop a field. A typo is named once per run, as a warning, or as
 * the hint of the error it causes (a missing "device"). */
#include "manifest.h"

#include <pthread.h>
#include <string.h>

static const char *const known[] = {"device", "name", "source", "source_file", "options", "language"};

const char *manifest_near_member(json_t *root, const char **typo)
{
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) {
        (void)v;
        bool is_known = false;
        for (size_t i = 0; i < sizeof known / sizeof *known; i++) is_known |= strcmp(key, known[i]) == 0;
        if (is_known) continue;
        const char *guess = cli_suggest(key, known, sizeof known / sizeof *known);
        if (guess && !json_object_get(root, guess)) {
            *typo = key;
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
