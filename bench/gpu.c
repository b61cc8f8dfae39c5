/* --gpu: placeholder until the GPU parts land below. */
#include "bench.h"

int bench_gpu_main(const bench_opts *o)
{
    (void)o;
    printf("cckey_bench --gpu: not yet written\n");
    return 77;
}
