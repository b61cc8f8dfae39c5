/* A program that uses an installed (or vendored) cckey: its key of three
 * RFC 1321 test strings must be their published digests, joined. */
#include <cckey.h>

#include <stdio.h>
#include <string.h>

int main(void)
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
    printf("consumer ok: cckey %s\n", cckey_version());
    return 0;
}
