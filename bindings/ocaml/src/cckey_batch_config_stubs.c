/* Cckey.make_keys' batch settings: the library's config object, kept idle
 * between batches, and whether a batch runs on the CPU. */
#include "stubs.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The config of the last batch, idle, for the next with the same settings:
 * the library may keep a batch's scratch tables in its config, and a reused
 * one then touches no fresh pages. Taken and put back by atomic exchange; a
 * batch running meanwhile in another thread makes its own, so a config's
 * warning is always its own batch's. */
typedef struct idle_config {
    cckey_batch_config *cfg;
    long settings[3];
} idle_config;

static _Atomic(idle_config *) idle;

static cckey_batch_config *take_idle(const long settings[3])
{
    idle_config *i = atomic_exchange(&idle, NULL);
    cckey_batch_config *cfg = NULL;
    if (i && memcmp(i->settings, settings, sizeof i->settings) == 0) cfg = i->cfg;
    else if (i) cckey_batch_config_free(i->cfg);
    free(i);
    return cfg;
}

static void put_idle(cckey_batch_config *cfg, const long settings[3])
{
    idle_config *i = cfg ? malloc(sizeof *i) : NULL;
    if (!i) {
        cckey_batch_config_free(cfg);
        return;
    }
    i->cfg = cfg;
    memcpy(i->settings, settings, sizeof i->settings);
    i = atomic_exchange(&idle, i);
    if (i) cckey_batch_config_free(i->cfg);
    free(i);
}

cckey_status cckey_ml_batch_config(cckey_batch_config **cfg, long settings[3], value v_backend, value v_threads,
                                   value v_verify)
{
    settings[0] = Long_val(v_backend);
    settings[1] = Long_val(v_threads);
    settings[2] = Long_val(v_verify);
    if ((*cfg = take_idle(settings))) return CCKEY_OK;
    cckey_status st = cckey_batch_config_new(cfg);
    if (st == CCKEY_OK) st = cckey_batch_config_set_backend(*cfg, (cckey_backend_kind)Int_val(v_backend));
    if (st == CCKEY_OK) st = cckey_batch_config_set_threads(*cfg, (unsigned)Long_val(v_threads));
    if (st == CCKEY_OK) st = cckey_batch_config_set_verify(*cfg, (cckey_verify_mode)Int_val(v_verify));
    if (st != CCKEY_OK) {
        /* Never kept for reuse half set up. */
        cckey_batch_config_free(*cfg);
        *cfg = NULL;
    }
    return st;
}

void cckey_ml_batch_config_done(cckey_batch_config *cfg, const long settings[3])
{
    put_idle(cfg, settings);
}

/* Whether the batch runs on the CPU: backend cpu, or auto with no device
 * that auto may use (asked once per process: drivers load once). */
int cckey_ml_runs_on_cpu(long backend)
{
    static _Atomic int auto_cpu = -1;
    if (backend == CCKEY_BACKEND_CPU) return 1;
    if (backend != CCKEY_BACKEND_AUTO) return 0;
    if (atomic_load(&auto_cpu) < 0) {
        int found = 0;
        cckey_device dev[16];
        static const cckey_backend_kind kinds[] = {CCKEY_BACKEND_OPENCL, CCKEY_BACKEND_CUDA};
        for (int k = 0; k < 2 && !found; k++) {
            size_t count = 0;
            if (cckey_devices(NULL, kinds[k], dev, 16, &count) != CCKEY_OK) continue;
            found = count > 16;   /* more than listed: assume one is usable */
            for (size_t i = 0; i < count && i < 16; i++) found |= dev[i].usable && dev[i].auto_ok;
        }
        atomic_store(&auto_cpu, !found);
    }
    return atomic_load(&auto_cpu);
}
