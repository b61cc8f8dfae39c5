/* The public batch calls (cckey.h): their argument checks, then the
 * planner (planner.c, cckey_plan_make_keys) with where the keys go. */
#include "plan.h"
#include "../core/internal.h"

#include <string.h>

cckey_status cckey_make_keys(char (*out)[CCKEY_KEY_LEN + 1], const cckey_tuple *tuples, size_t n,
                             const cckey_batch_config *config)
{
    if (n == 0) return CCKEY_OK;
    if (!out || !tuples) return cckey_fail(CCKEY_ERR_INVALID_ARG, "out or tuples is NULL with n = %zu", n);
    return cckey_plan_make_keys((cckey_key_out){.text = out}, tuples, n, config, NULL);
}

cckey_status cckey_make_keys_ex(char (*out)[CCKEY_KEY_LEN + 1], const cckey_tuple *tuples, size_t n,
                                const cckey_batch_config *config, cckey_batch_result *result)
{
    if (!result) return cckey_fail(CCKEY_ERR_INVALID_ARG, "result is NULL");
    if (n == 0) {
        memset(result, 0, sizeof *result);
        return CCKEY_OK;
    }
    if (!out || !tuples) return cckey_fail(CCKEY_ERR_INVALID_ARG, "out or tuples is NULL with n = %zu", n);
    return cckey_plan_make_keys((cckey_key_out){.text = out}, tuples, n, config, result);
}

/* A handle stands for a source the tuple must not also carry. */
static cckey_status check_sources(const cckey_tuple *tuples, const cckey_source *const *sources, size_t n)
{
    for (size_t i = 0; sources && i < n; i++)
        if (sources[i] && tuples[i].source.len)
            return cckey_fail(CCKEY_ERR_INVALID_ARG, "tuple %zu: a source handle and %zu source bytes; give one", i,
                              tuples[i].source.len);
    return CCKEY_OK;
}

cckey_status cckey_make_keys_sources(char (*out)[CCKEY_KEY_LEN + 1], const cckey_tuple *tuples,
                                     const cckey_source *const *sources, size_t n, const cckey_batch_config *config)
{
    if (n == 0) return CCKEY_OK;
    if (!out || !tuples) return cckey_fail(CCKEY_ERR_INVALID_ARG, "out or tuples is NULL with n = %zu", n);
    cckey_status st = check_sources(tuples, sources, n);
    return st != CCKEY_OK ? st : cckey_plan_make_keys((cckey_key_out){.text = out, .src = sources}, tuples, n, config, NULL);
}

cckey_status cckey_make_keys_bin(unsigned char (*out)[CCKEY_KEY_BIN_LEN], const cckey_tuple *tuples, size_t n,
                                 const cckey_batch_config *config)
{
    if (n == 0) return CCKEY_OK;
    if (!out || !tuples) return cckey_fail(CCKEY_ERR_INVALID_ARG, "out or tuples is NULL with n = %zu", n);
    return cckey_plan_make_keys((cckey_key_out){.bin = out}, tuples, n, config, NULL);
}
