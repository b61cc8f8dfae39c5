/* Random message batches for the device pipeline's plain-program tests
 * (test_native_threads, test_fake_cuda): mostly short messages, some
 * medium, a few past the default long-message threshold, every digest
 * checked against OpenSSL. */
#ifndef CCKEY_TEST_MSG_BATCH_H
#define CCKEY_TEST_MSG_BATCH_H

#include "backends/backend.h"
#include "md5/md5.h"
#include "support.h"

typedef struct msg_batch {
    cckey_msg *msgs;
    uint8_t (*out)[CCKEY_MD5_DIGEST];
    uint8_t *done;
    size_t n;
    cckey_test_arena a;
} msg_batch;

/* n random messages from seed; out and done zeroed. Exits on no memory. */
void msg_batch_make(msg_batch *b, uint64_t seed, size_t n);
/* Every message done and its digest OpenSSL's; else a message and exit(1). */
void msg_batch_check(const msg_batch *b, const char *what);
void msg_batch_free(msg_batch *b);

/* Step i (0 <= i < MSG_SWEEP_STEPS) of the chunk sweep both pipeline tests
 * run: chunk sizes 64, 2048, 65536 and the default, each with the host's
 * share off, then on; the other settings as CCKEY_DEVICE_SETTINGS_INIT. */
enum { MSG_SWEEP_STEPS = 8 };
cckey_device_settings msg_batch_sweep(int i);

#endif
