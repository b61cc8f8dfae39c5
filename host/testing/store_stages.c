/* The store's crash seam (testing.h's cckey_testing_store_stages), filled
 * in through the store's hook table: the release store only tests its
 * NULL slot. */
#include "testing.h"
#include "../store/store_internal.h"

static void (*at_stage)(int stage);

static void stage(int s) { at_stage(s); }

static const cckey_store_hook_table hooks = {.stage = stage};

void cckey_testing_store_stages(void (*at)(int stage))
{
    at_stage = at;
    cckey_store_hooks = at ? &hooks : NULL;
}
