/* The OpenCL backend's internals: device discovery (opencl_devices.c) and
 * the batch engine (opencl.c). */
#ifndef CCKEY_OPENCL_H
#define CCKEY_OPENCL_H

#include "cl_loader.h"
#include "gpu_devices.h"

typedef struct cckey_cl_device {
    cl_platform_id platform;
    cl_device_id device;
    cl_device_type type;
    cckey_device_info info;
} cckey_cl_device;

/* Every device of every platform, in a stable order (platforms as the ICD
 * loader lists them, devices within each). Fills up to max, *count gets the
 * total. CCKEY_ERR_UNAVAILABLE with why when there is no runtime or no
 * platform. */
cckey_status cckey_cl_enumerate(const cckey_cl_api *cl, cckey_cl_device *out, size_t max, size_t *count,
                                char *why, size_t why_len);

/* The device a selector picks (see cckey_gpu_select), from the devices
 * found once per process; NULL with why when there is none. */
const cckey_cl_device *cckey_cl_selected(const char *selector, const cckey_cl_api **cl, char *why, size_t why_len);

/* The embedded OpenCL C source (kernels/compat.h + kernels/md5.kern). */
extern const char cckey_md5_cl_source[];
extern const size_t cckey_md5_cl_source_len;

#endif
