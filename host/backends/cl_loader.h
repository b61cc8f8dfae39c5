/* The OpenCL runtime, loaded at run time.
 *
 * cckey never links libOpenCL: a binary built with OpenCL support must still
 * start, and work on the CPU, on a machine without any OpenCL runtime. The
 * headers give us the types; this table gives us the functions.
 *
 * Usage:
 *   const char *why;
 *   const cckey_cl_api *cl = cckey_cl_load(&why);
 *   if (!cl) ... why says what went wrong (static or process-lifetime text) ...
 *   cl->GetPlatformIDs(...);
 *
 * The library is loaded once per process (thread-safe) and never unloaded,
 * so the table stays valid until exit. */
#ifndef CCKEY_CL_LOADER_H
#define CCKEY_CL_LOADER_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct cckey_cl_api {
    /* OpenCL 1.1 core: all present whenever the table is returned. */
    cl_int (*GetPlatformIDs)(cl_uint, cl_platform_id *, cl_uint *);
    cl_int (*GetPlatformInfo)(cl_platform_id, cl_platform_info, size_t, void *, size_t *);
    cl_int (*GetDeviceIDs)(cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *);
    cl_int (*GetDeviceInfo)(cl_device_id, cl_device_info, size_t, void *, size_t *);
    cl_context (*CreateContext)(const cl_context_properties *, cl_uint, const cl_device_id *,
                                void(CL_CALLBACK *)(const char *, const void *, size_t, void *), void *,
                                cl_int *);
    cl_int (*ReleaseContext)(cl_context);
    cl_command_queue (*CreateCommandQueue)(cl_context, cl_device_id, cl_command_queue_properties, cl_int *);
    cl_int (*ReleaseCommandQueue)(cl_command_queue);
    cl_program (*CreateProgramWithSource)(cl_context, cl_uint, const char **, const size_t *, cl_int *);
    cl_program (*CreateProgramWithBinary)(cl_context, cl_uint, const cl_device_id *, const size_t *,
                                          const unsigned char **, cl_int *, cl_int *);
    cl_int (*BuildProgram)(cl_program, cl_uint, const cl_device_id *, const char *,
                           void(CL_CALLBACK *)(cl_program, void *), void *);
    cl_int (*GetProgramInfo)(cl_program, cl_program_info, size_t, void *, size_t *);
    cl_int (*GetProgramBuildInfo)(cl_program, cl_device_id, cl_program_build_info, size_t, void *, size_t *);
    cl_int (*ReleaseProgram)(cl_program);
    cl_kernel (*CreateKernel)(cl_program, const char *, cl_int *);
    cl_int (*ReleaseKernel)(cl_kernel);
    cl_int (*SetKernelArg)(cl_kernel, cl_uint, size_t, const void *);
    cl_int (*GetKernelWorkGroupInfo)(cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t, void *,
                                     size_t *);
    cl_mem (*CreateBuffer)(cl_context, cl_mem_flags, size_t, void *, cl_int *);
    cl_int (*ReleaseMemObject)(cl_mem);
    cl_int (*EnqueueWriteBuffer)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint,
                                 const cl_event *, cl_event *);
    cl_int (*EnqueueReadBuffer)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint,
                                const cl_event *, cl_event *);
    void *(*EnqueueMapBuffer)(cl_command_queue, cl_mem, cl_bool, cl_map_flags, size_t, size_t, cl_uint,
                              const cl_event *, cl_event *, cl_int *);
    cl_int (*EnqueueUnmapMemObject)(cl_command_queue, cl_mem, void *, cl_uint, const cl_event *, cl_event *);
    cl_int (*EnqueueNDRangeKernel)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *,
                                   const size_t *, cl_uint, const cl_event *, cl_event *);
    cl_int (*Flush)(cl_command_queue);
    cl_int (*Finish)(cl_command_queue);
    cl_int (*WaitForEvents)(cl_uint, const cl_event *);
    cl_int (*ReleaseEvent)(cl_event);
    cl_int (*GetEventProfilingInfo)(cl_event, cl_profiling_info, size_t, void *, size_t *);

    /* OpenCL 1.2 separate compilation: NULL when the runtime lacks them. */
    cl_int (*CompileProgram)(cl_program, cl_uint, const cl_device_id *, const char *, cl_uint,
                             const cl_program *, const char **, void(CL_CALLBACK *)(cl_program, void *),
                             void *);
    cl_program (*LinkProgram)(cl_context, cl_uint, const cl_device_id *, const char *, cl_uint,
                              const cl_program *, void(CL_CALLBACK *)(cl_program, void *), void *, cl_int *);
} cckey_cl_api;

/* The function table, loading the runtime on the first call. NULL when no
 * usable runtime exists; *why (if why is not NULL) then names the reason,
 * e.g. dlopen's message or the missing symbol. The reason string lives for
 * the whole process. The library is libOpenCL.so.1 unless
 * cckey_cl_set_library named another before the first call (tests use it to
 * simulate a machine without OpenCL). */
const cckey_cl_api *cckey_cl_load(const char **why);

/* The library cckey_cl_load opens (NULL: the default); see
 * cckey_set_driver_library in cckey.h. False with why when refused. */
bool cckey_cl_set_library(const char *path, char *why, size_t why_len);

/* The address of the runtime function name (e.g. "clBuildProgram"), for
 * the public cckey_driver_symbol: NULL with *why when the runtime does not
 * load or lacks it. */
void *cckey_cl_symbol(const char *name, const char **why);

/* The symbolic name of an OpenCL status, e.g. "CL_OUT_OF_RESOURCES"; a
 * static string, "CL_<unknown>" for codes it does not know. */
const char *cckey_cl_status_name(cl_int status);

#endif
