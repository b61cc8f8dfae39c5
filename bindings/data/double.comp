#version 450
// Doubles (times SCALE) every word of its buffer: warmed by `cckey warm` into
// SPIR-V that the bindings' tests read back through their Store.
layout(local_size_x = 32) in;
layout(std430, set = 0, binding = 0) buffer Buf { uint v[]; } buf;
void main() { buf.v[gl_GlobalInvocationID.x] *= SCALE; }
