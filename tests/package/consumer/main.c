/* A program that uses an installed (or vendored) cckey: its key of three
 * RFC 1321 test strings must be their published digests, joined. */
#include <cckey.h>
#include <cckey_store.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A library built without hiredis and libcurl refuses remotes by name;
 * one built with them accepts them (no connection is made yet). */
static int check_remotes(int expect_them)
{
    char dir[] = "/tmp/cckey-consumer-XXXXXX";
    cckey_store *s = NULL;
    if (!mkdtemp(dir) || cckey_store_open(&s, dir, 0) != CCKEY_OK) return 1;
    cckey_status redis = cckey_store_add_remote(s, "redis://127.0.0.1:1", NULL);
    cckey_status http = cckey_store_add_remote(s, "http://127.0.0.1:1/cache", NULL);
    int bad = expect_them ? redis != CCKEY_OK || http != CCKEY_OK
                          : redis != CCKEY_ERR_UNAVAILABLE || http != CCKEY_ERR_UNAVAILABLE ||
                                !strstr(cckey_last_error(), "built without");
    if (bad) fprintf(stderr, "remotes: redis %d, http %d (%s)\n", redis, http, cckey_last_error());
    cckey_store_close(s);
    char rm[64];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    if (system(rm) != 0) return 1;
    return bad;
}

int main(int argc, char **argv)
{
    if (cckey_version_number() != CCKEY_VERSION_NUMBER) {
        fprintf(stderr, "header %d, library %u\n", CCKEY_VERSION_NUMBER, cckey_version_number());
        return 1;
    }
    char out[CCKEY_KEY_LEN + 1];
    cckey_bytes device = {"a", 1}, name = {"abc", 3}, source = {"message digest", 14};
    if (cckey_make_key(out, device, name, source, NULL, 0) != CCKEY_OK) return 1;
    /* RFC 1321, appendix A.5: MD5("a"), MD5("abc"), MD5("message digest"), MD5(""). */
    const char *want = "0cc175b9c0f1b6a831c399e269772661:900150983cd24fb0d6963f7d28e17f72:"
                       "f96b697d7cb7938d525a2f31aaf161d0:d41d8cd98f00b204e9800998ecf8427e";
    if (strcmp(out, want) != 0) {
        fprintf(stderr, "got  %s\nwant %s\n", out, want);
        return 1;
    }
    if (check_remotes(!(argc > 1 && strcmp(argv[1], "no-remotes") == 0))) return 1;
    printf("consumer ok: cckey %s\n", cckey_version());
    return 0;
}
