/* See testing.h. */
#include "testing.h"
#include "../batch/config.h"
#include "../core/internal.h"

cckey_status cckey_testing_set_faults(cckey_batch_config *cfg, long chunk, bool corrupt, bool build)
{
    if (!cfg) return cckey_fail(CCKEY_ERR_INVALID_ARG, "config is NULL");
    if (chunk < -1) return cckey_fail(CCKEY_ERR_INVALID_ARG, "fault chunk %ld: expected -1 or a chunk number", chunk);
    cfg->device.fault_chunk = chunk;
    cfg->device.fault_corrupt = corrupt;
    cfg->device.fault_build = build;
    return CCKEY_OK;
}
