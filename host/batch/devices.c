/* The public device listing: the backends' catalogs, as a config selects. */
#include "config.h"
#include "../backends/gpu_devices.h"
#include "../core/internal.h"

#include <stdio.h>
#include <stdlib.h>

cckey_status cckey_devices(const cckey_batch_config *cfg, cckey_backend_kind kind, cckey_device *out, size_t max,
                           size_t *count)
{
    if (!count || (max && !out)) return cckey_fail(CCKEY_ERR_INVALID_ARG, "count is NULL, or out with max > 0");
    *count = 0;
    if (kind != CCKEY_BACKEND_OPENCL && kind != CCKEY_BACKEND_CUDA)
        return cckey_fail(CCKEY_ERR_INVALID_ARG, "backend %d has no devices to list", (int)kind);
    cckey_device_info *info = calloc(max ? max : 1, sizeof *info);
    if (!info) return cckey_fail(CCKEY_ERR_NO_MEMORY, "device listing");
    char why[512] = "";
    cckey_status st = cckey_backend_devices(kind, cfg ? &cfg->device : NULL, info, max, count, why, sizeof why);
    for (size_t i = 0; i < *count && i < max; i++) {
        const cckey_device_info *d = &info[i];
        cckey_device *o = &out[i];
        o->backend = kind;
        o->index = d->index;
        cckey_device_ident(d, o->id, sizeof o->id);
        snprintf(o->name, sizeof o->name, "%s", d->name);
        snprintf(o->driver, sizeof o->driver, "%s", d->driver);
        snprintf(o->platform, sizeof o->platform, "%s", d->platform);
        snprintf(o->type, sizeof o->type, "%s", d->type);
        o->global_mem = d->global_mem;
        o->compute_units = d->compute_units;
        o->usable = d->usable, o->selected = d->chosen, o->auto_ok = d->auto_ok;
    }
    free(info);
    if (st != CCKEY_OK) return cckey_fail(st, "%s", why);
    return CCKEY_OK;
}
