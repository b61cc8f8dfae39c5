/* The internal MD5 against RFC 1321's test suite and against OpenSSL. */
#include "md5/md5.h"
#include "support.h"
#include "testing/testing.h"   /* cckey_md5_count */

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static void hex_of(const uint8_t d[CCKEY_MD5_DIGEST], char out[33])
{
    cckey_hex(out, d);
    out[32] = '\0';
}

static void oneshot_hex(const void *p, size_t n, char out[33])
{
    uint8_t d[CCKEY_MD5_DIGEST];
    cckey_md5(p, n, d);
    hex_of(d, out);
}

/* Stream p in pieces whose sizes come from the generator (0 included). */
static void stream_hex(uint64_t *rng, const uint8_t *p, size_t n, size_t max_piece, char out[33])
{
    cckey_md5_ctx ctx;
    cckey_md5_init(&ctx);
    size_t at = 0;
    while (at < n) {
        size_t piece = cckey_test_below(rng, max_piece + 1);
        if (piece > n - at) piece = n - at;
        cckey_md5_update(&ctx, p + at, piece);
        at += piece;
    }
    uint8_t d[CCKEY_MD5_DIGEST];
    cckey_md5_final(&ctx, d);
    hex_of(d, out);
}

/* RFC 1321, appendix A.5. */
static const struct {
    const char *msg, *hex;
} rfc[] = {
    {"", "d41d8cd98f00b204e9800998ecf8427e"},
    {"a", "0cc175b9c0f1b6a831c399e269772661"},
    {"abc", "900150983cd24fb0d6963f7d28e17f72"},
    {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
    {"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
    {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"},
    {"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
     "57edf4a22be3c955ac49da2e2107b67a"},
};

Test(md5, rfc1321_oneshot)
{
    for (size_t i = 0; i < sizeof rfc / sizeof *rfc; i++) {
        char h[33];
        oneshot_hex(rfc[i].msg, strlen(rfc[i].msg), h);
        cr_assert_str_eq(h, rfc[i].hex, "MD5(\"%s\")", rfc[i].msg);
    }
}

Test(md5, rfc1321_streamed_byte_by_byte)
{
    for (size_t i = 0; i < sizeof rfc / sizeof *rfc; i++) {
        cckey_md5_ctx ctx;
        cckey_md5_init(&ctx);
        for (const char *p = rfc[i].msg; *p; p++) cckey_md5_update(&ctx, p, 1);
        uint8_t d[CCKEY_MD5_DIGEST];
        char h[33];
        cckey_md5_final(&ctx, d);
        hex_of(d, h);
        cr_assert_str_eq(h, rfc[i].hex, "streamed MD5(\"%s\")", rfc[i].msg);
    }
}

Test(md5, empty_message_from_null)
{
    char h[33];
    oneshot_hex(NULL, 0, h);
    cr_assert_str_eq(h, "d41d8cd98f00b204e9800998ecf8427e");
}

Test(md5, every_length_to_1024_vs_openssl)
{
    uint64_t rng = 1321;
    uint8_t buf[1024];
    for (size_t n = 0; n <= sizeof buf; n++) {
        cckey_test_fill(&rng, buf, n);
        char want[33], got[33], streamed[33];
        cckey_test_md5_hex(buf, n, want);
        oneshot_hex(buf, n, got);
        cr_assert_str_eq(got, want, "one-shot, length %zu", n);
        stream_hex(&rng, buf, n, 1 + cckey_test_below(&rng, 150), streamed);
        cr_assert_str_eq(streamed, want, "streamed, length %zu", n);
    }
}

Test(md5, every_byte_value)
{
    /* Messages of one repeated byte: catches sign-extension of bytes >= 0x80. */
    uint8_t buf[200];
    for (int b = 0; b < 256; b++) {
        memset(buf, b, sizeof buf);
        char want[33], got[33];
        cckey_test_md5_hex(buf, sizeof buf, want);
        oneshot_hex(buf, sizeof buf, got);
        cr_assert_str_eq(got, want, "200 bytes of 0x%02x", b);
    }
}

Test(md5, several_mib_vs_openssl)
{
    uint64_t rng = 77;
    size_t n = (5u << 20) + 3;
    uint8_t *buf = malloc(n);
    cr_assert_not_null(buf);
    cckey_test_fill(&rng, buf, n);
    char want[33], got[33], streamed[33], big_pieces[33];
    cckey_test_md5_hex(buf, n, want);
    oneshot_hex(buf, n, got);
    cr_assert_str_eq(got, want);
    stream_hex(&rng, buf, n, 4096, streamed);
    cr_assert_str_eq(streamed, want);
    stream_hex(&rng, buf, n, 3u << 20, big_pieces);
    cr_assert_str_eq(big_pieces, want);
    free(buf);
}

Test(md5, random_splits_match_oneshot)
{
    uint64_t rng = 4242;
    uint8_t buf[4000];
    for (int round = 0; round < 300; round++) {
        size_t n = cckey_test_below(&rng, sizeof buf + 1);
        cckey_test_fill(&rng, buf, n);
        char a[33], b[33];
        oneshot_hex(buf, n, a);
        /* Small pieces cross the 64-byte buffer often; large ones take the
         * whole-block path straight from the input. */
        stream_hex(&rng, buf, n, round % 2 ? 70 : 700, b);
        cr_assert_str_eq(b, a, "round %d, length %zu", round, n);
    }
}

Test(md5, many_messages_vs_openssl)
{
    uint64_t rng = 9;
    enum { N = 301 };
    static uint8_t data[N][300];
    cckey_msg msgs[N];
    static uint8_t out[N][CCKEY_MD5_DIGEST];
    for (size_t i = 0; i < N; i++) {
        size_t len = i % 3 ? cckey_test_below(&rng, 300) : i % 300;
        cckey_test_fill(&rng, data[i], len);
        msgs[i] = (cckey_msg){data[i], len};
    }
    cckey_md5_many(msgs, N, out);
    for (size_t i = 0; i < N; i++) {
        char want[33], got[33];
        cckey_test_md5_hex(msgs[i].ptr, msgs[i].len, want);
        hex_of(out[i], got);
        cr_assert_str_eq(got, want, "message %zu (length %zu)", i, msgs[i].len);
    }
}

Test(md5, padding_layout)
{
    /* RFC 1321 3.1-3.2: 0x80, zeros to 56 mod 64, then the bit length as
     * 64 little-endian bits; a length past 4 GiB must keep its high word. */
    uint8_t tail[128], partial[63];
    memset(partial, 0xab, sizeof partial);
    const uint64_t totals[] = {0, 55, 56, 63, 64, (1ull << 32) + 5, (1ull << 61) - 1};
    for (size_t t = 0; t < sizeof totals / sizeof *totals; t++) {
        uint64_t total = totals[t];
        size_t rem = (size_t)(total % 64);
        size_t nb = cckey_md5_pad(tail, partial, rem, total);
        cr_assert_eq(nb, rem < 56 ? 1u : 2u, "total %llu", (unsigned long long)total);
        for (size_t i = 0; i < rem; i++) cr_assert_eq(tail[i], 0xab);
        cr_assert_eq(tail[rem], 0x80);
        for (size_t i = rem + 1; i < 64 * nb - 8; i++) cr_assert_eq(tail[i], 0, "byte %zu", i);
        uint64_t bits = 0;
        for (int i = 0; i < 8; i++) bits |= (uint64_t)tail[64 * nb - 8 + i] << (8 * i);
        cr_assert_eq(bits, total * 8, "total %llu", (unsigned long long)total);
    }
}

Test(md5, compress_and_tail_blocks_compose)
{
    uint64_t rng = 5;
    uint8_t buf[777];
    cckey_test_fill(&rng, buf, sizeof buf);
    for (size_t n = 0; n <= sizeof buf; n += 37) {
        uint32_t st[4];
        memcpy(st, cckey_md5_iv, sizeof st);
        cckey_md5_compress_scalar(st, buf, n / 64);
        uint8_t tail[128], d[16];
        size_t nb = cckey_md5_tail_blocks(tail, buf, n);
        cckey_md5_compress_scalar(st, tail, nb);
        cckey_md5_store(d, st);
        char want[33], got[33];
        cckey_test_md5_hex(buf, n, want);
        hex_of(d, got);
        cr_assert_str_eq(got, want, "length %zu", n);
    }
}

Test(md5, hex_is_lowercase)
{
    uint8_t d[16];
    for (int i = 0; i < 16; i++) d[i] = (uint8_t)(i * 17);
    char h[33];
    hex_of(d, h);
    cr_assert_str_eq(h, "00112233445566778899aabbccddeeff");
}

Test(md5, count_hook_counts_digests)
{
    uint64_t before = cckey_md5_count;
    uint8_t d[16];
    cckey_md5("x", 1, d);
    cr_assert_eq(cckey_md5_count, before + 1);
    cckey_md5_ctx ctx;
    cckey_md5_init(&ctx);
    cckey_md5_update(&ctx, "abc", 3);
    cr_assert_eq(cckey_md5_count, before + 1, "update alone is not a digest");
    cckey_md5_final(&ctx, d);
    cr_assert_eq(cckey_md5_count, before + 2);
}
