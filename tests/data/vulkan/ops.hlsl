#include "ops_common.hlsli"
StructuredBuffer<uint> src : register(t0);
RWStructuredBuffer<uint> dst : register(u1);

[numthreads(64, 1, 1)]
void scale(uint3 id : SV_DispatchThreadID) { dst[id.x] = src[id.x] * SCALE + OFFSET; }

[numthreads(32, 1, 1)]
void flip(uint3 id : SV_DispatchThreadID)
{
    dst[id.x] = ~src[id.x];
}
