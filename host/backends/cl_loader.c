/* Loading libOpenCL at run time; see cl_loader.h for why. */
#include "cl_loader.h"
#include "../core/dl_table.h"

#include <pthread.h>
#include <stddef.h>

static cckey_cl_api api;
static cckey_dl_driver driver = CCKEY_DL_DRIVER_INIT("the OpenCL runtime has no such function");

/* Required entries first, then the optional ones. */
#define REQ(f) {"cl" #f, NULL, offsetof(cckey_cl_api, f), false}
#define OPT(f) {"cl" #f, NULL, offsetof(cckey_cl_api, f), true}

static const cckey_dl_entry entries[] = {
    REQ(GetPlatformIDs), REQ(GetPlatformInfo), REQ(GetDeviceIDs), REQ(GetDeviceInfo),
    REQ(CreateContext), REQ(ReleaseContext), REQ(CreateCommandQueue), REQ(ReleaseCommandQueue),
    REQ(CreateProgramWithSource), REQ(CreateProgramWithBinary), REQ(BuildProgram), REQ(GetProgramInfo),
    REQ(GetProgramBuildInfo), REQ(ReleaseProgram), REQ(CreateKernel), REQ(ReleaseKernel),
    REQ(SetKernelArg), REQ(GetKernelWorkGroupInfo), REQ(CreateBuffer), REQ(ReleaseMemObject),
    REQ(EnqueueWriteBuffer), REQ(EnqueueReadBuffer), REQ(EnqueueMapBuffer), REQ(EnqueueUnmapMemObject),
    REQ(EnqueueNDRangeKernel), REQ(Flush), REQ(Finish), REQ(WaitForEvents), REQ(ReleaseEvent),
    REQ(GetEventProfilingInfo),
    OPT(CompileProgram), OPT(LinkProgram),
};

#define DEFAULT_LIBRARY "libOpenCL.so.1"

bool cckey_cl_set_library(const char *path, char *why, size_t why_len)
{
    return cckey_dl_set_path(&driver.path, path, DEFAULT_LIBRARY, "OpenCL runtime", why, why_len);
}

static void load(void)
{
    if (cckey_dl_bind(&driver.path, DEFAULT_LIBRARY, entries, sizeof entries / sizeof *entries, &api,
                      "no OpenCL runtime", "OpenCL older than 1.1?", driver.reason, sizeof driver.reason))
        driver.loaded = &api;
}

const cckey_cl_api *cckey_cl_load(const char **why) { return cckey_dl_driver_load(&driver, load, why); }

void *cckey_cl_symbol(const char *name, const char **why) { return cckey_dl_driver_symbol(&driver, load, name, why); }

const char *cckey_cl_status_name(cl_int status)
{
    switch (status) {
#define NAME(c) case c: return #c
    NAME(CL_SUCCESS);
    NAME(CL_DEVICE_NOT_FOUND);
    NAME(CL_DEVICE_NOT_AVAILABLE);
    NAME(CL_COMPILER_NOT_AVAILABLE);
    NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE);
    NAME(CL_OUT_OF_RESOURCES);
    NAME(CL_OUT_OF_HOST_MEMORY);
    NAME(CL_PROFILING_INFO_NOT_AVAILABLE);
    NAME(CL_MEM_COPY_OVERLAP);
    NAME(CL_IMAGE_FORMAT_MISMATCH);
    NAME(CL_IMAGE_FORMAT_NOT_SUPPORTED);
    NAME(CL_BUILD_PROGRAM_FAILURE);
    NAME(CL_MAP_FAILURE);
    NAME(CL_MISALIGNED_SUB_BUFFER_OFFSET);
    NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    NAME(CL_COMPILE_PROGRAM_FAILURE);
    NAME(CL_LINKER_NOT_AVAILABLE);
    NAME(CL_LINK_PROGRAM_FAILURE);
    NAME(CL_DEVICE_PARTITION_FAILED);
    NAME(CL_KERNEL_ARG_INFO_NOT_AVAILABLE);
    NAME(CL_INVALID_VALUE);
    NAME(CL_INVALID_DEVICE_TYPE);
    NAME(CL_INVALID_PLATFORM);
    NAME(CL_INVALID_DEVICE);
    NAME(CL_INVALID_CONTEXT);
    NAME(CL_INVALID_QUEUE_PROPERTIES);
    NAME(CL_INVALID_COMMAND_QUEUE);
    NAME(CL_INVALID_HOST_PTR);
    NAME(CL_INVALID_MEM_OBJECT);
    NAME(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
    NAME(CL_INVALID_IMAGE_SIZE);
    NAME(CL_INVALID_SAMPLER);
    NAME(CL_INVALID_BINARY);
    NAME(CL_INVALID_BUILD_OPTIONS);
    NAME(CL_INVALID_PROGRAM);
    NAME(CL_INVALID_PROGRAM_EXECUTABLE);
    NAME(CL_INVALID_KERNEL_NAME);
    NAME(CL_INVALID_KERNEL_DEFINITION);
    NAME(CL_INVALID_KERNEL);
    NAME(CL_INVALID_ARG_INDEX);
    NAME(CL_INVALID_ARG_VALUE);
    NAME(CL_INVALID_ARG_SIZE);
    NAME(CL_INVALID_KERNEL_ARGS);
    NAME(CL_INVALID_WORK_DIMENSION);
    NAME(CL_INVALID_WORK_GROUP_SIZE);
    NAME(CL_INVALID_WORK_ITEM_SIZE);
    NAME(CL_INVALID_GLOBAL_OFFSET);
    NAME(CL_INVALID_EVENT_WAIT_LIST);
    NAME(CL_INVALID_EVENT);
    NAME(CL_INVALID_OPERATION);
    NAME(CL_INVALID_GL_OBJECT);
    NAME(CL_INVALID_BUFFER_SIZE);
    NAME(CL_INVALID_MIP_LEVEL);
    NAME(CL_INVALID_GLOBAL_WORK_SIZE);
    NAME(CL_INVALID_PROPERTY);
    NAME(CL_INVALID_IMAGE_DESCRIPTOR);
    NAME(CL_INVALID_COMPILER_OPTIONS);
    NAME(CL_INVALID_LINKER_OPTIONS);
    NAME(CL_INVALID_DEVICE_PARTITION_COUNT);
#undef NAME
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";   /* the ICD loader's "no platforms" */
    }
    return "CL_<unknown>";
}
