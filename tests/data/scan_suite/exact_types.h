// Types a kernel file takes from elsewhere: the text scan cannot see into
// this header, so it cannot mangle parameters of these types.
typedef float4 vec_t;
typedef unsigned long long key_t64;
struct Particle { float x, y, z; };
