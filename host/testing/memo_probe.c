/* The memo's test seams (testing.h): its tag and set, computed from the
 * memo's own material functions (core/memo_material.h), and the hook a
 * look-up calls in the window its seqlock guards, through the memo's hook
 * table. */
#include "testing.h"
#include "../core/memo_material.h"

void (*cckey_testing_memo_hook)(void);

static void compared(void)
{
    void (*hook)(void) = cckey_testing_memo_hook;
    if (hook) hook();
}

static const cckey_memo_hook_table hooks = {.compared = compared};

__attribute__((constructor)) static void install(void) { cckey_memo_hooks = &hooks; }

uint64_t cckey_testing_memo_tag(cckey_bytes device, cckey_bytes name, const cckey_option *o, size_t n)
{
    size_t len = cckey_memo_material_len(device, name, o, n);
    if (len > CCKEY_MEMO_MAX_MATERIAL) return 0;
    uint64_t mat[CCKEY_MEMO_MAT_WORDS];
    size_t nwords = (len + 7) / 8;
    cckey_memo_material_write(mat, nwords, device, name, o, n);
    return cckey_memo_material_hash(mat, nwords);
}

size_t cckey_testing_memo_set(cckey_bytes device, cckey_bytes name, const cckey_option *o, size_t n)
{
    return cckey_memo_set_of(cckey_testing_memo_tag(device, name, o, n));
}
