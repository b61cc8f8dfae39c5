/* Vulkan devices for `cckey devices` and `cckey warm`: the loader
 * (libvulkan.so.1) opened at run time, as the OpenCL and CUDA drivers are,
 * so that cckey starts and works on a machine without it; the physical
 * devices with the identity a manifest names them by; and a compute
 * pipeline made on one of them, to check that the device takes a SPIR-V
 * module before warm stores it.
 *
 * A device's identity is what decides whether a compiled pipeline is
 * reusable there (the key of a pipeline cache entry, in Vulkan's terms):
 *   deviceName "|" driverVersion "|" pipelineCacheUUID
 * with driverVersion as the driver reports it (a decimal uint32: its
 * encoding is the vendor's own), and the UUID in 32 lowercase hex digits, e.g.
 *   llvmpipe (LLVM 15.0.6, 256 bits)|1|76616c2d257300000000000000000000
 * The driver promises that data from a pipeline cache with another UUID is
 * not reusable, so a new driver build that changes it is a new device. */
#ifndef CCKEY_VK_DEVICE_H
#define CCKEY_VK_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CCKEY_VK_ID_MAX 400

typedef struct warm_vk_device_info {
    unsigned index;            /* in the loader's order */
    char name[256];            /* VkPhysicalDeviceProperties.deviceName */
    char id[CCKEY_VK_ID_MAX];  /* the identity above */
    uint32_t driver_version;
    uint32_t api_version;      /* what the device supports (VK_MAKE_API_VERSION) */
    uint32_t vulkan;           /* what cckey uses: the device's, the instance's and 1.3 at most */
    uint32_t vendor_id, device_id;
    uint8_t cache_uuid[16];
    const char *type;          /* "cpu", "discrete GPU", "integrated GPU", "virtual GPU", "other" */
    bool compute;              /* has a queue family with compute */
    /* The limits a compute pipeline is checked against. */
    uint32_t max_group_size[3], max_group_invocations, max_push_constants, max_sets;
} warm_vk_device_info;

typedef struct warm_vk warm_vk;

/* The loader at library (NULL or "": libvulkan.so.1), an instance and its
 * physical devices. 0 with *out, or -1 with why: no loader ("no Vulkan
 * loader (libvulkan.so.1): <dlerror>"), no driver, no device. The library
 * stays loaded for the life of the process (drivers do not promise a clean
 * unload); the instance is the handle's. Thread-safe. */
int warm_vk_open(const char *library, warm_vk **out, char *why, size_t why_len);
void warm_vk_close(warm_vk *vk);

size_t warm_vk_count(const warm_vk *vk);
const warm_vk_device_info *warm_vk_info(const warm_vk *vk, size_t dev);

/* Whether device dev takes the SPIR-V module words (n_words of them) with
 * entry point entry, as a compute pipeline: its workgroup size within the
 * device's limits, then vkCreateComputePipelines with a layout made from the
 * module's own descriptor bindings. 0, or -1 with why naming the device (a
 * refusal, a lost device, no memory). Thread-safe: builds on one device run
 * at once. */
int warm_vk_check_pipeline(warm_vk *vk, size_t dev, const uint32_t *words, size_t n_words, const char *entry,
                            char *why, size_t why_len);

/* "1.3" for VK_MAKE_API_VERSION(0, 1, 3, 230); with patch, "1.3.230". */
void warm_vk_version_text(uint32_t version, bool patch, char *buf, size_t len);
/* The UUID in 32 lowercase hex digits, as identities carry it. */
void warm_vk_uuid_hex(const uint8_t uuid[16], char out[33]);

#endif
