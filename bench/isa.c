/* The SIMD multi-buffer paths, forced one at a time through the MD5
 * module's own hook, so each is measured on this CPU whatever dispatch would
 * pick. Builds without the multi-buffer module list none. */
#include "bench.h"

#ifdef CCKEY_BENCH_HAVE_MB
#include "md5/md5_mb.h"

int bench_isa_count(void) { return CCKEY_ISA_COUNT; }

const char *bench_isa_name(int isa) { return cckey_md5_isa_label((cckey_isa)isa); }

const char *bench_isa_unavailable(int isa)
{
    if (isa == CCKEY_ISA_SCALAR) return "scalar is measured as its own candidate";
    if (!cckey_md5_isa_supported((cckey_isa)isa)) return "this CPU or build lacks it";
    if (!cckey_md5_path_for((cckey_isa)isa)) return "no kernel compiled for it";
    return NULL;
}

void bench_isa_digest(int isa, const cckey_msg *m, size_t n, uint8_t (*out)[CCKEY_MD5_DIGEST])
{
    /* Availability was checked; a refusal here would leave out stale, which
     * the cross-check then reports. */
    (void)cckey_md5_many_isa((cckey_isa)isa, m, n, out);
}

const char *bench_isa_active(void) { return cckey_md5_isa_name(); }
#else
int bench_isa_count(void) { return 0; }
const char *bench_isa_name(int isa) { return (void)isa, "?"; }
const char *bench_isa_unavailable(int isa) { return (void)isa, "no multi-buffer module in this build"; }
void bench_isa_digest(int isa, const cckey_msg *m, size_t n, uint8_t (*out)[CCKEY_MD5_DIGEST])
{
    (void)isa, (void)m, (void)n, (void)out;
}
const char *bench_isa_active(void) { return "scalar"; }
#endif
