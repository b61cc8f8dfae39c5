/* Batch settings. */
#include "config.h"
#include "../core/internal.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

cckey_status cckey_batch_config_new(cckey_batch_config **out)
{
    if (!out) return cckey_fail(CCKEY_ERR_INVALID_ARG, "out is NULL");
    cckey_batch_config *c = calloc(1, sizeof *c);
    if (!c) return cckey_fail(CCKEY_ERR_NO_MEMORY, "batch config");
    c->backend = CCKEY_BACKEND_AUTO;
    c->device = cckey_device_settings_default;
    c->state = calloc(1, sizeof *c->state);
    if (!c->state || pthread_mutex_init(&c->state->lock, NULL) != 0) {
        free(c->state);
        free(c);
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "batch config state");
    }
    *out = c;
    return CCKEY_OK;
}

void cckey_batch_config_free(cckey_batch_config *cfg)
{
    if (!cfg) return;
    for (int i = 0; i < CCKEY_KEPT_SCRATCH; i++) cckey_scratch_free(&cfg->state->scratch[i]);
    pthread_mutex_destroy(&cfg->state->lock);
    free(cfg->state);
    free(cfg);
}

/* The kept tables live in the config's state, not in the config: a const
 * config stays unchanged. */
void cckey_batch_config_take_scratch(const cckey_batch_config *cfg, cckey_scratch s[CCKEY_KEPT_SCRATCH])
{
    memset(s, 0, CCKEY_KEPT_SCRATCH * sizeof *s);
    cckey_config_state *st = cfg ? cfg->state : NULL;
    if (!st) return;
    pthread_mutex_lock(&st->lock);
    memcpy(s, st->scratch, sizeof st->scratch);
    memset(st->scratch, 0, sizeof st->scratch);
    pthread_mutex_unlock(&st->lock);
}

void cckey_batch_config_keep_scratch(const cckey_batch_config *cfg, cckey_scratch s[CCKEY_KEPT_SCRATCH])
{
    cckey_config_state *st = cfg ? cfg->state : NULL;
    if (st) pthread_mutex_lock(&st->lock);
    for (int i = 0; i < CCKEY_KEPT_SCRATCH; i++) {
        if (st && !st->scratch[i].buf) {
            cckey_scratch_reset(&s[i]);
            st->scratch[i] = s[i];
            memset(&s[i], 0, sizeof s[i]);
        }
        cckey_scratch_free(&s[i]);
    }
    if (st) pthread_mutex_unlock(&st->lock);
}

void cckey_batch_config_publish(const cckey_batch_config *cfg, const cckey_batch_report *rep)
{
    cckey_config_state *st = cfg ? cfg->state : NULL;
    if (!st) return;
    pthread_mutex_lock(&st->lock);
    memcpy(st->used, rep->used, sizeof rep->used);
    memcpy(st->warning, rep->warning, sizeof rep->warning);
    pthread_mutex_unlock(&st->lock);
}

cckey_status cckey_batch_config_set_backend(cckey_batch_config *cfg, cckey_backend_kind kind)
{
    if (!cfg) return cckey_fail(CCKEY_ERR_INVALID_ARG, "config is NULL");
    if ((unsigned)kind > CCKEY_BACKEND_CUDA) return cckey_fail(CCKEY_ERR_INVALID_ARG, "unknown backend %d", (int)kind);
    cfg->backend = kind;
    cfg->ops = NULL;   /* the kind set last is the backend, also after the testing library's */
    return CCKEY_OK;
}

cckey_status cckey_batch_config_set_threads(cckey_batch_config *cfg, unsigned threads)
{
    if (!cfg) return cckey_fail(CCKEY_ERR_INVALID_ARG, "config is NULL");
    if (threads > 4096) return cckey_fail(CCKEY_ERR_INVALID_ARG, "%u threads is more than 4096", threads);
    cfg->threads = threads;
    return CCKEY_OK;
}

cckey_status cckey_batch_config_set_verify(cckey_batch_config *cfg, cckey_verify_mode mode)
{
    if (!cfg) return cckey_fail(CCKEY_ERR_INVALID_ARG, "config is NULL");
    if ((unsigned)mode > CCKEY_VERIFY_SAMPLE) return cckey_fail(CCKEY_ERR_INVALID_ARG, "unknown verify mode %d", (int)mode);
    cfg->verify = mode;
    return CCKEY_OK;
}

cckey_status cckey_batch_config_set_verify_seed(cckey_batch_config *cfg, uint64_t seed)
{
    if (!cfg) return cckey_fail(CCKEY_ERR_INVALID_ARG, "config is NULL");
    cfg->verify_seed = seed;
    cfg->verify_seed_set = true;
    return CCKEY_OK;
}

/* One callback at a time: setting either kind replaces the other. */
static cckey_status set_progress(cckey_batch_config *cfg, cckey_progress_fn fn, cckey_progress_cancel_fn cancel,
                                 void *user)
{
    if (!cfg) return cckey_fail(CCKEY_ERR_INVALID_ARG, "config is NULL");
    cfg->progress = fn;
    cfg->progress_cancel = cancel;
    cfg->progress_user = user;
    return CCKEY_OK;
}

cckey_status cckey_batch_config_set_progress(cckey_batch_config *cfg, cckey_progress_fn fn, void *user)
{
    return set_progress(cfg, fn, NULL, user);
}

cckey_status cckey_batch_config_set_progress_cancel(cckey_batch_config *cfg, cckey_progress_cancel_fn fn, void *user)
{
    return set_progress(cfg, NULL, fn, user);
}

const char *cckey_batch_config_used(const cckey_batch_config *cfg) { return cfg ? cfg->state->used : ""; }

const char *cckey_batch_config_warning(const cckey_batch_config *cfg) { return cfg ? cfg->state->warning : ""; }

cckey_status cckey_batch_config_set_chunk_bytes(cckey_batch_config *cfg, size_t bytes)
{
    if (!cfg) return cckey_fail(CCKEY_ERR_INVALID_ARG, "config is NULL");
    if (bytes == 0) bytes = CCKEY_GPU_DEFAULT_CHUNK_BYTES;
    if (bytes < CCKEY_GPU_MIN_CHUNK_BYTES || bytes > CCKEY_GPU_MAX_CHUNK_BYTES)
        return cckey_fail(CCKEY_ERR_INVALID_ARG, "chunk of %zu bytes: expected %zu to %zu", bytes,
                          CCKEY_GPU_MIN_CHUNK_BYTES, CCKEY_GPU_MAX_CHUNK_BYTES);
    cfg->device.chunk_bytes = bytes;
    return CCKEY_OK;
}

size_t cckey_batch_config_chunk_bytes(const cckey_batch_config *cfg)
{
    return cfg ? cfg->device.chunk_bytes : 0;
}

size_t cckey_batch_config_long_bytes(const cckey_batch_config *cfg)
{
    return cfg ? cfg->device.long_bytes : 0;
}

cckey_status cckey_batch_config_set_long_bytes(cckey_batch_config *cfg, size_t bytes)
{
    if (!cfg) return cckey_fail(CCKEY_ERR_INVALID_ARG, "config is NULL");
    if (bytes > CCKEY_GPU_MAX_CHUNK_BYTES / 4)
        return cckey_fail(CCKEY_ERR_INVALID_ARG, "long-message threshold of %zu bytes: expected at most %zu", bytes,
                          CCKEY_GPU_MAX_CHUNK_BYTES / 4);
    cfg->device.long_bytes = bytes;
    return CCKEY_OK;
}

cckey_status cckey_batch_config_set_device_share(cckey_batch_config *cfg, int share)
{
    if (!cfg) return cckey_fail(CCKEY_ERR_INVALID_ARG, "config is NULL");
    cfg->device.cpu_share = share != 0;
    return CCKEY_OK;
}

cckey_status cckey_batch_config_set_device(cckey_batch_config *cfg, cckey_backend_kind kind, const char *selector)
{
    if (!cfg) return cckey_fail(CCKEY_ERR_INVALID_ARG, "config is NULL");
    char *dst = kind == CCKEY_BACKEND_OPENCL ? cfg->device.opencl_device
                : kind == CCKEY_BACKEND_CUDA ? cfg->device.cuda_device : NULL;
    if (!dst) return cckey_fail(CCKEY_ERR_INVALID_ARG, "backend %d has no devices to choose from", (int)kind);
    if (!selector) selector = "";
    size_t n = strlen(selector);
    if (n >= CCKEY_DEVICE_SELECTOR_MAX)
        return cckey_fail(CCKEY_ERR_INVALID_ARG, "device selector of %zu bytes: at most %d", n,
                          CCKEY_DEVICE_SELECTOR_MAX - 1);
    memcpy(dst, selector, n + 1);
    return CCKEY_OK;
}
