#version 450
#include <mix.glsl>
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer In { uint v[]; } src;
layout(std430, set = 0, binding = 1) writeonly buffer Out { uint v[]; } dst;
void main()
{
    uint i = gl_GlobalInvocationID.x;
    dst.v[i] = mix32(src.v[i]);
}
