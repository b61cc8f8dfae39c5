/* Work-group tree reductions. Each group writes one partial result; the host
 * (or a second launch) combines the partials. */

#ifndef WG_SIZE
#define WG_SIZE 256
#endif

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1)))
void reduce_sum(__global const float *in, __global float *partial, const uint n)
{
    __local float scratch[WG_SIZE];
    size_t gid = get_global_id(0), lid = get_local_id(0);
    scratch[lid] = gid < n ? in[gid] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = WG_SIZE / 2; s > 0; s >>= 1) {
        if (lid < s) scratch[lid] += scratch[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) partial[get_group_id(0)] = scratch[0];
}

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1)))
void reduce_max(__global const float *in, __global float *partial, const uint n)
{
    __local float scratch[WG_SIZE];
    size_t gid = get_global_id(0), lid = get_local_id(0);
    scratch[lid] = gid < n ? in[gid] : -INFINITY;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = WG_SIZE / 2; s > 0; s >>= 1) {
        if (lid < s) scratch[lid] = fmax(scratch[lid], scratch[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) partial[get_group_id(0)] = scratch[0];
}
