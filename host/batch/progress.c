/* Progress that can cancel. Backends call one plain progress function on
 * the calling thread; the relay forwards it to whichever callback the
 * config holds and, when a cancelling one says stop, raises the flag every
 * backend thread checks before it claims more work. */
#include "config.h"
#include "../core/internal.h"

void cckey_progress_relay_call(void *arg, uint64_t done, uint64_t total)
{
    cckey_progress_relay *r = arg;
    const cckey_batch_config *cfg = r->cfg;
    if (atomic_load_explicit(&r->cancelled, memory_order_relaxed)) return;   /* asked once is enough */
    if (cfg->progress) cfg->progress(cfg->progress_user, done, total);
    else if (cfg->progress_cancel && cfg->progress_cancel(cfg->progress_user, done, total))
        atomic_store_explicit(&r->cancelled, true, memory_order_relaxed);
}
