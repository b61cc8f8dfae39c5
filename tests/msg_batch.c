/* See msg_batch.h. */
#include "msg_batch.h"
#include "backends/gpu_pipeline.h"
#include "check.h"

#include <string.h>

void msg_batch_make(msg_batch *b, uint64_t seed, size_t n)
{
    memset(b, 0, sizeof *b);
    uint64_t rng = seed;
    b->n = n;
    b->msgs = calloc(n ? n : 1, sizeof *b->msgs);
    b->out = calloc(n ? n : 1, CCKEY_MD5_DIGEST);
    b->done = calloc(n ? n : 1, 1);
    CHECK(b->msgs && b->out && b->done, "out of memory");
    for (size_t i = 0; i < n; i++) {
        size_t pick = cckey_test_below(&rng, 100);
        size_t len = pick < 60 ? cckey_test_below(&rng, 130) : pick < 98 ? cckey_test_below(&rng, 5000)
                                                                          : CCKEY_GPU_DEFAULT_LONG_BYTES + 3;
        cckey_bytes m = cckey_test_random_bytes(&b->a, &rng, len);
        b->msgs[i] = (cckey_msg){m.ptr, m.len};
    }
}

void msg_batch_check(const msg_batch *b, const char *what)
{
    for (size_t i = 0; i < b->n; i++) {
        char want[CCKEY_HEX_LEN + 1], got[CCKEY_HEX_LEN + 1];
        cckey_test_md5_hex(b->msgs[i].ptr, b->msgs[i].len, want);
        for (int k = 0; k < 16; k++) snprintf(got + 2 * k, 3, "%02x", b->out[i][k]);
        CHECK(b->done[i], "%s: message %zu not done", what, i);
        CHECK(strcmp(want, got) == 0, "%s: message %zu (length %zu) wrong", what, i, b->msgs[i].len);
    }
}

void msg_batch_free(msg_batch *b)
{
    free(b->msgs), free(b->out), free(b->done);
    cckey_test_arena_free(&b->a);
}

cckey_device_settings msg_batch_sweep(int i)
{
    static const size_t chunks[MSG_SWEEP_STEPS / 2] = {64, 2048, 65536, CCKEY_GPU_DEFAULT_CHUNK_BYTES};
    cckey_device_settings s = CCKEY_DEVICE_SETTINGS_INIT;
    s.chunk_bytes = chunks[i / 2];
    s.cpu_share = i % 2;
    return s;
}
