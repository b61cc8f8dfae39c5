/* Cckey.make_keys' batch settings: the library's config object, kept idle
 * between batches, and whether a batch runs on the CPU. */
#include "stubs.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The configs of the last batches, idle, for the next with the same
 * settings: the library may keep a batch's scratch tables in its config,
 * and a reused one then touches no fresh pages. One slot per recent set of
 * settings, so a program that alternates (a CPU batch, then an auto one)
 * keeps both warm. Taken and put back by atomic exchange; a batch running
 * meanwhile in another thread makes its own, so a config's warning is
 * always its own batch's. */
typedef struct idle_config {
    cckey_batch_config *cfg;
    long settings[3];
} idle_config;

#define IDLE_SLOTS 4
static _Atomic(idle_config *) idle[IDLE_SLOTS];

static void drop(idle_config *i)
{
    if (i) cckey_batch_config_free(i->cfg);
    free(i);
}

static cckey_batch_config *take_idle(const long settings[3])
{
    for (size_t s = 0; s < IDLE_SLOTS; s++) {
        idle_config *i = atomic_exchange(&idle[s], NULL);
        if (!i) continue;
        if (memcmp(i->settings, settings, sizeof i->settings) == 0) {
            cckey_batch_config *cfg = i->cfg;
            free(i);
            return cfg;
        }
        drop(atomic_exchange(&idle[s], i));   /* not ours: back in its slot */
    }
    return NULL;
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
    for (size_t s = 0; s < IDLE_SLOTS; s++) {
        idle_config *none = NULL;
        if (atomic_compare_exchange_strong(&idle[s], &none, i)) return;
    }
    drop(atomic_exchange(&idle[0], i));   /* all full: the first one goes */
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
