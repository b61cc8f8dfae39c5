#version 450
#include "common.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    y[i] = scaled(x[i]) + y[i];
}
