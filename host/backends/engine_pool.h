/* A device backend's engines: objects with real state (context, queues or
 * streams, kernel, staging buffers), one per batch in flight.
 *
 * A batch takes an engine for the device its settings select and gives it
 * back at the end. An idle engine keeps its state, since building a kernel
 * costs far more than a typical batch: the next batch on the same device
 * reuses it; a batch on another device takes an idle one over (the backend
 * rebuilds it) or a new one. Concurrent batches get distinct engines, up to
 * CCKEY_ENGINE_POOL_MAX per backend; more wait for one to come back. */
#ifndef CCKEY_ENGINE_POOL_H
#define CCKEY_ENGINE_POOL_H

#include "cckey.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#define CCKEY_ENGINE_POOL_MAX 4

typedef struct cckey_engine_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t size;                              /* bytes of one engine object */
    void *engine[CCKEY_ENGINE_POOL_MAX];      /* zeroed on creation */
    const void *device[CCKEY_ENGINE_POOL_MAX];   /* what each was last set up for */
    bool busy[CCKEY_ENGINE_POOL_MAX];
} cckey_engine_pool;
#define CCKEY_ENGINE_POOL_INIT(type) \
    {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .size = sizeof(type)}

/* An engine for device (any non-NULL identity), or NULL when out of
 * memory. *same says it was last set up for that very device; otherwise
 * it holds another device's state (or none: a new engine is all zeroes),
 * which the caller tears down before setting it up. */
void *cckey_engine_take(cckey_engine_pool *p, const void *device, bool *same);

/* Give an engine back (also after a failure, once its state is dropped). */
void cckey_engine_give(cckey_engine_pool *p, void *engine);

/* The first steps of a device engine's open(): an engine of p for dev, the
 * device the backend's catalog selected (NULL: none, the reason in why), in
 * *self (every engine object starts with its cckey_gpu_engine), and *same as
 * cckey_engine_take says. CCKEY_OK, or CCKEY_ERR_UNAVAILABLE ("<backend>:
 * <why>") or CCKEY_ERR_NO_MEMORY, with *self NULL. */
struct cckey_gpu_engine;
cckey_status cckey_engine_open(cckey_engine_pool *p, const void *dev, const char *why, const char *backend,
                               struct cckey_gpu_engine **self, bool *same);

#endif
