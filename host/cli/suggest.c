/* Did-you-mean: the known word one edit away from a mistyped one. One edit
 * is an insertion, a deletion, a substitution or a swap of two neighbours
 * ("bacth" -> "batch"), the typos people make; anything further is more
 * likely another word than a slip. */
#include "cli.h"

#include <string.h>

/* Whether a and b are at most one edit apart (optimal string alignment). */
static bool one_edit(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > lb + 1 || lb > la + 1) return false;
    size_t i = 0;
    while (i < la && i < lb && a[i] == b[i]) i++;
    if (la == lb) {
        if (i == la) return true;   /* equal */
        if (strcmp(a + i + 1, b + i + 1) == 0) return true;   /* substitution */
        return i + 1 < la && a[i] == b[i + 1] && a[i + 1] == b[i] && strcmp(a + i + 2, b + i + 2) == 0;
    }
    return la > lb ? strcmp(a + i + 1, b + i) == 0 : strcmp(a + i, b + i + 1) == 0;
}

const char *cli_suggest(const char *word, const char *const *known, size_t n)
{
    const char *found = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!known[i] || !one_edit(word, known[i])) continue;
        if (found && strcmp(found, known[i]) != 0) return NULL;   /* ambiguous: no guess */
        found = known[i];
    }
    return found;
}
