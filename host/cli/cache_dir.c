/* The cache folder when none is given, as ccache and the XDG base
 * directory convention have users expect: $CCKEY_CACHE_DIR, else
 * $XDG_CACHE_HOME/cckey, else ~/.cache/cckey. */
#include "cli.h"

#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>

const char *cli_cache_dir(const char *given, char *buf, size_t len)
{
    if (given) return given;
    const char *env = getenv("CCKEY_CACHE_DIR");
    if (env && *env) return env;
    const char *xdg = getenv("XDG_CACHE_HOME");
    /* The spec: a relative XDG_CACHE_HOME is invalid and to be ignored. */
    if (xdg && xdg[0] == '/') {
        snprintf(buf, len, "%s/cckey", xdg);
        return buf;
    }
    const char *home = getenv("HOME");
    if (!home || !*home) {
        struct passwd *pw = getpwuid(getuid());
        home = pw ? pw->pw_dir : NULL;
    }
    if (!home || !*home) return NULL;
    snprintf(buf, len, "%s/.cache/cckey", home);
    return buf;
}
