/* Batch settings and backend names. */
#include "config.h"
#include "../core/internal.h"

#include <stdlib.h>
#include <string.h>

cckey_status cckey_batch_config_new(cckey_batch_config **out)
{
    if (!out) return cckey_fail(CCKEY_ERR_INVALID_ARG, "out is NULL");
    cckey_batch_config *c = calloc(1, sizeof *c);
    if (!c) return cckey_fail(CCKEY_ERR_NO_MEMORY, "batch config");
    c->backend = CCKEY_BACKEND_AUTO;
    if (pthread_mutex_init(&c->report_lock, NULL) != 0) {
        free(c);
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "batch config lock");
    }
    *out = c;
    return CCKEY_OK;
}

void cckey_batch_config_free(cckey_batch_config *cfg)
{
    if (!cfg) return;
    pthread_mutex_destroy(&cfg->report_lock);
    free(cfg);
}

cckey_status cckey_batch_config_set_backend(cckey_batch_config *cfg, cckey_backend_kind kind)
{
    if (!cfg) return cckey_fail(CCKEY_ERR_INVALID_ARG, "config is NULL");
    if ((unsigned)kind > CCKEY_BACKEND_CUDA) return cckey_fail(CCKEY_ERR_INVALID_ARG, "unknown backend %d", (int)kind);
    cfg->backend = kind;
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

cckey_status cckey_batch_config_set_progress(cckey_batch_config *cfg, cckey_progress_fn fn, void *user)
{
    if (!cfg) return cckey_fail(CCKEY_ERR_INVALID_ARG, "config is NULL");
    cfg->progress = fn;
    cfg->progress_cancel = NULL;
    cfg->progress_user = user;
    return CCKEY_OK;
}

const char *cckey_batch_config_used(const cckey_batch_config *cfg) { return cfg ? cfg->used : ""; }

const char *cckey_batch_config_warning(const cckey_batch_config *cfg) { return cfg ? cfg->warning : ""; }

static const char *const names[] = {"auto", "cpu", "opencl", "cuda"};

cckey_status cckey_backend_from_name(const char *name, cckey_backend_kind *out)
{
    if (!name || !out) return cckey_fail(CCKEY_ERR_INVALID_ARG, "name or out is NULL");
    for (unsigned i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = (cckey_backend_kind)i;
            return CCKEY_OK;
        }
    return cckey_fail(CCKEY_ERR_INVALID_ARG, "unknown backend '%s' (expected auto, cpu, opencl or cuda)", name);
}

const char *cckey_backend_name(cckey_backend_kind kind)
{
    return (unsigned)kind < sizeof names / sizeof *names ? names[kind] : "unknown";
}
