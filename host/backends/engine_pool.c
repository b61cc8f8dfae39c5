/* See engine_pool.h. */
#include "engine_pool.h"
#include "gpu_pipeline.h"
#include "../core/internal.h"

#include <stdlib.h>

static int find(const cckey_engine_pool *p, const void *device, bool want_same)
{
    for (int i = 0; i < CCKEY_ENGINE_POOL_MAX; i++)
        if (p->engine[i] && !p->busy[i] && (!want_same || p->device[i] == device)) return i;
    return -1;
}

void *cckey_engine_take(cckey_engine_pool *p, const void *device, bool *same)
{
    pthread_mutex_lock(&p->mu);
    int k;
    for (;;) {
        /* An idle engine already set up for this device; else a new one;
         * else an idle one to take over; else wait. */
        if ((k = find(p, device, true)) >= 0) break;
        for (k = 0; k < CCKEY_ENGINE_POOL_MAX && p->engine[k]; k++) {}
        if (k < CCKEY_ENGINE_POOL_MAX) {
            if (!(p->engine[k] = calloc(1, p->size))) {
                pthread_mutex_unlock(&p->mu);
                return NULL;
            }
            p->device[k] = NULL;
            break;
        }
        if ((k = find(p, device, false)) >= 0) break;
        pthread_cond_wait(&p->cv, &p->mu);
    }
    *same = p->device[k] == device;
    p->device[k] = device;
    p->busy[k] = true;
    void *e = p->engine[k];
    pthread_mutex_unlock(&p->mu);
    return e;
}

void cckey_engine_give(cckey_engine_pool *p, void *engine)
{
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < CCKEY_ENGINE_POOL_MAX; i++)
        if (p->engine[i] == engine) p->busy[i] = false;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

cckey_status cckey_engine_open(cckey_engine_pool *p, const void *dev, const char *why, const char *backend,
                               cckey_gpu_engine **self, bool *same)
{
    *self = NULL;
    if (!dev) return cckey_fail(CCKEY_ERR_UNAVAILABLE, "%s: %s", backend, why);
    *self = cckey_engine_take(p, dev, same);
    return *self ? CCKEY_OK : cckey_fail(CCKEY_ERR_NO_MEMORY, "%s engine", backend);
}
