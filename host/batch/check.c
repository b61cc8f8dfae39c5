/* Digests on one named backend with no fallback: the public way to check an
 * engine (cckey selftest), beside cckey_make_keys, which hides a device's
 * failure behind the CPU. */
#include "config.h"
#include "../core/internal.h"
#include "../core/parallel.h"

#include <stdlib.h>

cckey_status cckey_backend_digests(const cckey_batch_config *cfg, const cckey_bytes *msgs, size_t n,
                                   unsigned char (*out)[CCKEY_DIGEST_LEN])
{
    if (!cfg || (n && (!msgs || !out))) return cckey_fail(CCKEY_ERR_INVALID_ARG, "cfg is NULL, or msgs or out with n > 0");
    if (cfg->backend == CCKEY_BACKEND_AUTO && !cfg->ops)
        return cckey_fail(CCKEY_ERR_INVALID_ARG, "the config names no backend (auto): set cpu, opencl or cuda");
    for (size_t i = 0; i < n; i++)
        if (!msgs[i].ptr && msgs[i].len) return cckey_fail(CCKEY_ERR_INVALID_ARG, "message %zu is {NULL, %zu}", i, msgs[i].len);
    const cckey_backend_ops *b = cfg->ops ? cfg->ops : cckey_backend_ops_for(cfg->backend);
    if (!b) return cckey_fail(CCKEY_ERR_UNAVAILABLE, "not compiled into this build");
    char why[512] = "";
    if (cckey_backend_available(b, &cfg->device, why, sizeof why) != CCKEY_OK)
        return cckey_fail(CCKEY_ERR_UNAVAILABLE, "%s", why);
    cckey_msg *m = malloc((n ? n : 1) * sizeof *m);
    uint8_t *done = calloc(n ? n : 1, 1);
    if (!m || !done) {
        free(m), free(done);
        return cckey_fail(CCKEY_ERR_NO_MEMORY, "%zu messages", n);
    }
    for (size_t i = 0; i < n; i++) m[i] = (cckey_msg){msgs[i].ptr, msgs[i].len};
    cckey_digest_job job = {.msgs = m, .n = n, .out = out, .done = done,
                            .threads = cfg->threads ? cfg->threads : cckey_cpu_count(), .settings = &cfg->device};
    cckey_status st = cckey_backend_digest(b, &job);
    size_t undone = 0;
    for (size_t i = 0; st == CCKEY_OK && i < n; i++) undone += !done[i];
    free(m), free(done);
    if (undone) return cckey_fail(CCKEY_ERR_INTERNAL, "%s: %zu of %zu digests not marked done", b->name, undone, n);
    return st;
}
