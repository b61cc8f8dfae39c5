/* kernels/md5.kern compiled as host C (compat.h's third branch), for the
 * native test engine: the device kernel's own code, padding included. */
#define CCKEY_KERNEL_HOST 1
#include "../../kernels/md5.kern"

_Thread_local uint32_t cckey_host_gid;
