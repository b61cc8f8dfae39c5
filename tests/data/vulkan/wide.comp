#version 450
// 32 x 32 x 2 = 2048 invocations a workgroup: each size within what glslang
// allows, the product past Vulkan devices' usual 1024 (lavapipe's too).
layout(local_size_x = 32, local_size_y = 32, local_size_z = 2) in;
layout(std430, binding = 0) buffer B { uint v[]; } b;
void main() { b.v[gl_LocalInvocationIndex] = 1u; }
