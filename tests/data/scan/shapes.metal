#include <metal_stdlib>
using namespace metal;

// kernel void fake_commented(device float *a [[buffer(0)]]) {}
kernel void add_arrays(device const float *a [[buffer(0)]], device float *out [[buffer(1)]],
                       uint i [[thread_position_in_grid]]) { out[i] = a[i]; }

[[kernel]] void attr_style(device float *out [[buffer(0)]]) { out[0] = 1; }

[[kernel, host_name("renamed_entry")]] void original_name(device float *out [[buffer(0)]]) { out[0] = 2; }

float helper(float x) { return x * 2; }
