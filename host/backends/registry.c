/* Which backends this build has. Device backends are compiled in only where
 * their headers were found; each still loads its driver at run time. */
#include "backend.h"

extern const cckey_backend_ops cckey_backend_cpu;
#ifdef CCKEY_WITH_OPENCL
extern const cckey_backend_ops cckey_backend_opencl;
#endif
#ifdef CCKEY_WITH_CUDA
extern const cckey_backend_ops cckey_backend_cuda;
#endif

const cckey_backend_ops *cckey_backend_ops_for(cckey_backend_kind kind)
{
    switch (kind) {
    case CCKEY_BACKEND_CPU: return &cckey_backend_cpu;
#ifdef CCKEY_WITH_OPENCL
    case CCKEY_BACKEND_OPENCL: return &cckey_backend_opencl;
#endif
#ifdef CCKEY_WITH_CUDA
    case CCKEY_BACKEND_CUDA: return &cckey_backend_cuda;
#endif
    default: return NULL;
    }
}
