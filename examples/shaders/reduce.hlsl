// Two compute entry points: each is compiled to its own SPIR-V module.
StructuredBuffer<uint> src : register(t0);
RWStructuredBuffer<uint> dst : register(u1);
groupshared uint part[64];

[numthreads(64, 1, 1)]
void sum64(uint3 id : SV_DispatchThreadID, uint li : SV_GroupIndex, uint3 g : SV_GroupID)
{
    part[li] = src[id.x];
    GroupMemoryBarrierWithGroupSync();
    for (uint s = 32; s > 0; s >>= 1) {
        if (li < s) part[li] += part[li + s];
        GroupMemoryBarrierWithGroupSync();
    }
    if (li == 0) dst[g.x] = part[0];
}

[numthreads(64, 1, 1)]
void square(uint3 id : SV_DispatchThreadID) { dst[id.x] = src[id.x] * src[id.x]; }
