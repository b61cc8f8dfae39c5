// The public headers from C++: cckey.h, cckey_store.h and cckey_advanced.h
// compile as C++ (-std=c++11 -pedantic -Werror, in CMake), their declarations
// link with C linkage, and a key made through them is the RFC 1321 digests
// joined.
#include <cckey.h>
#include <cckey_advanced.h>
#include <cckey_store.h>

#include <cstdio>
#include <cstring>
#include <string>

static_assert(CCKEY_KEY_LEN == 4 * CCKEY_HEX_LEN + 3, "four hex digests and three colons");
static_assert(CCKEY_VERSION_NUMBER == CCKEY_VERSION_MAJOR * 10000 + CCKEY_VERSION_MINOR * 100 + CCKEY_VERSION_PATCH,
              "numeric version");
static_assert(CCKEY_KEY_FORMAT == 1, "the frozen key format");

int main()
{
    if (cckey_version_number() != static_cast<unsigned>(CCKEY_VERSION_NUMBER)) return 1;
    const std::string dev = "a", name = "abc", src = "message digest";
    const cckey_bytes d = {dev.data(), dev.size()}, n = {name.data(), name.size()}, s = {src.data(), src.size()};
    const cckey_option opt = {{"", 0}, {"", 0}};
    char out[CCKEY_KEY_LEN + 1];
    if (cckey_make_key(out, d, n, s, &opt, 0) != CCKEY_OK) return 1;
    // RFC 1321, appendix A.5.
    const char *want = "0cc175b9c0f1b6a831c399e269772661:900150983cd24fb0d6963f7d28e17f72:"
                       "f96b697d7cb7938d525a2f31aaf161d0:d41d8cd98f00b204e9800998ecf8427e";
    if (std::strcmp(out, want) != 0) {
        std::fprintf(stderr, "got  %s\nwant %s\n", out, want);
        return 1;
    }
    std::printf("C++: %s\n", out);
    return 0;
}
