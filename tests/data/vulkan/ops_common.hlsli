// Included by ops.hlsl from beside it (a "..." include).
#define OFFSET 7u
