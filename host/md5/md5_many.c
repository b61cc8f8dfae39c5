/* Multi-message entry point. The SIMD multi-buffer manager replaces the body
 * of this loop when a vector path is available (see md5_mb.c). */
#include "md5.h"

void cckey_md5_many(const cckey_msg *msgs, size_t n, uint8_t (*out)[CCKEY_MD5_DIGEST])
{
    for (size_t i = 0; i < n; i++) cckey_md5(msgs[i].ptr, msgs[i].len, out[i]);
}
