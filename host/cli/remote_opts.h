/* Remote caches on the command line: --remote URL (repeatable, in order),
 * --no-remote, --remote-only-read; else $CCKEY_REMOTE; else the cache
 * folder's cckey.conf. Shared by warm and cache. */
#ifndef CCKEY_CLI_REMOTE_OPTS_H
#define CCKEY_CLI_REMOTE_OPTS_H

#include "cli.h"

#include <getopt.h>

enum { CLI_OPT_REMOTE = 1000, CLI_OPT_NO_REMOTE, CLI_OPT_REMOTE_ONLY_READ };

#define CLI_REMOTE_LONGOPTS                                                                      \
    {"remote", required_argument, NULL, CLI_OPT_REMOTE}, {"no-remote", no_argument, NULL, CLI_OPT_NO_REMOTE}, \
        {"remote-only-read", no_argument, NULL, CLI_OPT_REMOTE_ONLY_READ}

#define CLI_REMOTE_HELP                                                                      \
    "      --remote URL     a remote cache under the store (repeatable, asked in order):\n" \
    "                       redis://[[USER]:PASS@]HOST[:PORT][/DB] or http(s)://HOST/PATH,\n" \
    "                       with |ttl=S |read-only |timeout=MS (one request, all of it)\n" \
    "                       |connect-timeout=MS |retries=N |max-entry=SIZE (default 256M)\n" \
    "                       |password_file=PATH |bearer_file=PATH |bearer=TOKEN after it\n" \
    "                       (default: the words of $CCKEY_REMOTE, else the remote = lines\n" \
    "                       of DIR/cckey.conf). A password in a URL is percent-encoded,\n" \
    "                       and ps shows it while cckey starts: prefer password_file=\n"  \
    "      --no-remote      no remote cache, whatever the environment or config say\n"     \
    "      --remote-only-read  read remotes, never write them\n"                              \
    "  With $CCKEY_REMOTE_KEY (or remote_key_file = PATH in DIR/cckey.conf), entries sent\n"  \
    "  are signed (HMAC-SHA-256) and entries received must be signed with that secret.\n"

typedef struct cli_remotes {
    char **urls;          /* from --remote */
    size_t n;
    bool none, only_read;
} cli_remotes;

/* Take one option: 1 when it was a remote option, -1 when out of memory.
 * A --remote URL's secrets are masked in arg (argv) once copied. */
int cli_remotes_option(cli_remotes *r, int c, char *arg);
/* Add the remotes that apply to s, whose folder is dir. 0, or an exit
 * status (a bad URL or config line is a usage error, said on stderr). */
int cli_remotes_attach(cli_remotes *r, cckey_store *s, const char *dir, const char *who);
/* One line of this handle's remote traffic on stdout, when it had any. */
void cli_remotes_report(cckey_store *s, const char *who);
void cli_remotes_free(cli_remotes *r);

#endif
