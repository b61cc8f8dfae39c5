/* cckey_keyer: blocks keyed on the keyer's thread while the caller prepares
 * the next, one at a time or several queued, every key checked against the
 * OpenSSL recipe; a bad tuple's status and message reach the waiting
 * thread, with the block it was in. A plain program (check.h),
 * so the ThreadSanitizer build runs it too. */
#include "check.h"
#include "support.h"

#include <string.h>

enum { BLOCKS = 6, PER_BLOCK = 5000 };

static cckey_tuple random_tuple(cckey_test_arena *a, uint64_t *rng)
{
    cckey_test_tuple t = cckey_test_random_tuple(a, rng, 48);
    cckey_bytes source = cckey_test_random_bytes(a, rng, cckey_test_below(rng, 300));
    return (cckey_tuple){t.device, t.name, source, t.opts, t.n};
}

/* Two buffers in turn, as a binding has them: block i is keyed while block
 * i + 1 is filled and block i - 1's keys are checked. */
static void blocks_in_turn(cckey_keyer *k, const cckey_batch_config *cfg)
{
    static cckey_tuple tuples[2][PER_BLOCK];
    static char keys[2][PER_BLOCK][CCKEY_KEY_LEN + 1];
    cckey_test_arena arena[2] = {0};
    uint64_t rng = 11;
    for (int b = 0; b <= BLOCKS; b++) {
        int cur = b % 2;
        if (b < BLOCKS) {
            cckey_test_arena_free(&arena[cur]);
            for (int i = 0; i < PER_BLOCK; i++) tuples[cur][i] = random_tuple(&arena[cur], &rng);
        }
        CHECK(cckey_keyer_wait(k) == CCKEY_OK, "block %d: %s", b - 1, cckey_last_error());
        if (b < BLOCKS) cckey_keyer_submit(k, keys[cur], tuples[cur], PER_BLOCK, cfg);
        if (b == 0) continue;
        int prev = 1 - cur;
        for (int i = 0; i < PER_BLOCK; i++) {
            const cckey_tuple *t = &tuples[prev][i];
            char want[CCKEY_KEY_LEN + 1];
            cckey_test_ref_key(want, t->device, t->name, t->source, t->options, t->n_options);
            CHECK(memcmp(keys[prev][i], want, sizeof want) == 0, "block %d tuple %d", b - 1, i);
        }
    }
    CHECK(cckey_keyer_wait(k) == CCKEY_OK, "a wait with nothing submitted");
    cckey_test_arena_free(&arena[0]);
    cckey_test_arena_free(&arena[1]);
}

/* CCKEY_KEYER_DEPTH blocks queued at once, then waited for in order: each
 * wait returns its own block's status; one more submit is refused, and
 * queues nothing. */
static void blocks_queued(cckey_keyer *k, const cckey_batch_config *cfg)
{
    enum { Q = CCKEY_KEYER_DEPTH, PER = 700 };
    static cckey_tuple tuples[Q][PER];
    static char keys[Q][PER][CCKEY_KEY_LEN + 1];
    cckey_test_arena arena = {0};
    uint64_t rng = 23;
    for (int b = 0; b < Q; b++) {
        for (int i = 0; i < PER; i++) tuples[b][i] = random_tuple(&arena, &rng);
        memset(keys[b], 0, sizeof keys[b]);
    }
    tuples[2][PER - 1].source = (cckey_bytes){NULL, 3};   /* block 2 fails */
    for (int b = 0; b < Q; b++)
        CHECK(cckey_keyer_submit(k, keys[b], tuples[b], PER, cfg) == CCKEY_OK, "submit %d: %s", b, cckey_last_error());
    CHECK(cckey_keyer_submit(k, keys[0], tuples[0], PER, cfg) == CCKEY_ERR_INVALID_ARG, "a submit past the depth");
    for (int b = 0; b < Q; b++) {
        cckey_status st = cckey_keyer_wait(k);
        if (b == 2) {
            CHECK(st == CCKEY_ERR_INVALID_ARG, "block 2's own status");
            CHECK(strstr(cckey_last_error(), "699") != NULL, "the message names index 699: %s", cckey_last_error());
            continue;
        }
        CHECK(st == CCKEY_OK, "block %d: %s", b, cckey_last_error());
        CHECK(strcmp(cckey_keyer_warning(k), "") == 0, "block %d: no warning", b);
        for (int i = 0; i < PER; i++) {
            const cckey_tuple *t = &tuples[b][i];
            char want[CCKEY_KEY_LEN + 1];
            cckey_test_ref_key(want, t->device, t->name, t->source, t->options, t->n_options);
            CHECK(memcmp(keys[b][i], want, sizeof want) == 0, "queued block %d tuple %d", b, i);
        }
    }
    CHECK(cckey_keyer_wait(k) == CCKEY_OK, "the refused submit queued nothing");
    cckey_test_arena_free(&arena);
}

static void bad_tuple_reported(cckey_keyer *k)
{
    cckey_tuple t[3] = {{{"d", 1}, {"n", 1}, {"s", 1}, NULL, 0}};
    t[1] = t[2] = t[0];
    t[2].name = (cckey_bytes){NULL, 4};   /* bytes without an address */
    char keys[3][CCKEY_KEY_LEN + 1];
    cckey_keyer_submit(k, keys, t, 3, NULL);
    CHECK(cckey_keyer_wait(k) == CCKEY_ERR_INVALID_ARG, "the bad tuple's status");
    CHECK(strstr(cckey_last_error(), "2") != NULL, "the message names index 2: %s", cckey_last_error());
    CHECK(cckey_keyer_wait(k) == CCKEY_OK, "the failure is reported once");
}

int main(void)
{
    cckey_keyer *k;
    CHECK(cckey_keyer_new(&k) == CCKEY_OK, "%s", cckey_last_error());
    cckey_batch_config *cfg;
    CHECK(cckey_batch_config_new(&cfg) == CCKEY_OK, "config");
    cckey_batch_config_set_backend(cfg, CCKEY_BACKEND_CPU);
    blocks_in_turn(k, cfg);
    blocks_queued(k, cfg);
    cckey_batch_config_set_threads(cfg, 1);
    blocks_in_turn(k, cfg);
    blocks_queued(k, cfg);
    bad_tuple_reported(k);
    cckey_keyer_submit(k, (char (*)[CCKEY_KEY_LEN + 1])NULL, NULL, 0, NULL);
    cckey_keyer_free(k);   /* with a call submitted and not waited for */
    cckey_keyer_free(NULL);
    cckey_batch_config_free(cfg);
    puts("test_keyer: ok");
    return 0;
}
