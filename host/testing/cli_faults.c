/* The test CLI's device faults, for the tests of the CPU fallback: the
 * environment mapped onto the test hooks. Linked into cckey-testing only,
 * so the CLI's own sources include no test header and test no macro. */
#include "../cli/cli.h"
#include "testing.h"

#include <stdlib.h>
#include <string.h>

static const char *var(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static bool faults_from_env(cckey_batch_config *cfg)
{
    long chunk = -1;
    const char *v = var("CCKEY_FAULT_CHUNK");
    if (v) {
        char *end;
        chunk = strtol(v, &end, 10);
        if (*end || chunk < 0) {
            cli_error("CCKEY_FAULT_CHUNK=%s: expected a chunk number >= 0", v);
            return false;
        }
    }
    const char *c = var("CCKEY_FAULT_CORRUPT"), *b = var("CCKEY_FAULT_BUILD");
    return cckey_testing_set_faults(cfg, chunk, c && strcmp(c, "0") != 0, b && strcmp(b, "0") != 0) == CCKEY_OK;
}

/* Linked into cckey-testing alone: it adds this mapping to the CLI's, as
 * data (cli_env_hook), without a line of the CLI's sources changing. */
__attribute__((constructor)) static void install(void) { cli_env_hook = faults_from_env; }
