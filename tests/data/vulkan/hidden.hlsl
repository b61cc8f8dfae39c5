// The preprocessor (scan --exact) decides what the text scan cannot: the
// macro is 0, so only `shown` is an entry point.
#define WITH_HIDDEN 0
RWStructuredBuffer<uint> b : register(u0);
[numthreads(8, 1, 1)]
void shown(uint3 id : SV_DispatchThreadID) { b[id.x] = 1; }
#if WITH_HIDDEN
[numthreads(8, 1, 1)]
void hidden(uint3 id : SV_DispatchThreadID) { b[id.x] = 2; }
#endif
