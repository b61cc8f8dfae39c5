// Included by mix.comp through -I (a <...> include: the include folders only).
// test_vulkan.c computes the same function on the CPU.
uint mix32(uint x) { return x * SCALE + ((x >> 3) ^ 0x9e3779b9u); }
