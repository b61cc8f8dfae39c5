/* The multi-message entry point: the active multi-buffer path, or the
 * scalar loop where there is none. */
#include "md5_mb.h"

static void many_scalar(const cckey_msg *msgs, size_t n, uint8_t (*out)[CCKEY_MD5_DIGEST])
{
    for (size_t i = 0; i < n; i++) cckey_md5(msgs[i].ptr, msgs[i].len, out[i]);
}

int cckey_md5_many_isa(cckey_isa isa, const cckey_msg *msgs, size_t n,
                       uint8_t (*out)[CCKEY_MD5_DIGEST])
{
    if (isa == CCKEY_ISA_SCALAR) {
        many_scalar(msgs, n, out);
        return 0;
    }
    const cckey_md5_path *path = cckey_md5_path_for(isa);
    if (!path) return -1;
    cckey_md5_mb(path, msgs, n, out);
    CCKEY_MD5_COUNT(n);   /* the same count whichever path digested them */
    return 0;
}

void cckey_md5_many(const cckey_msg *msgs, size_t n, uint8_t (*out)[CCKEY_MD5_DIGEST])
{
    if (cckey_md5_many_isa(cckey_md5_active_isa(), msgs, n, out) != 0) many_scalar(msgs, n, out);
}
