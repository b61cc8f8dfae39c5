/* What vk_loader.c (the loader, the instance, the devices) and
 * vk_pipeline.c (a compute pipeline on one of them) share. */
#ifndef CCKEY_VK_INTERNAL_H
#define CCKEY_VK_INTERNAL_H

#include "vk_device.h"

#define VK_NO_PROTOTYPES   /* the loader is dlopen'ed: functions come from vkGetInstanceProcAddr */
#include <pthread.h>
#include <vulkan/vulkan.h>

#define CCKEY_VK_MAX_DEVS 64

/* The functions cckey calls, by name in vk_loader.c's list. */
typedef struct vk_api {
    PFN_vkDestroyInstance DestroyInstance;
    PFN_vkEnumeratePhysicalDevices EnumeratePhysicalDevices;
    PFN_vkGetPhysicalDeviceProperties GetPhysicalDeviceProperties;
    PFN_vkGetPhysicalDeviceQueueFamilyProperties GetPhysicalDeviceQueueFamilyProperties;
    PFN_vkCreateDevice CreateDevice;
    PFN_vkGetDeviceProcAddr GetDeviceProcAddr;
    PFN_vkDestroyDevice DestroyDevice;
    PFN_vkCreateShaderModule CreateShaderModule;
    PFN_vkDestroyShaderModule DestroyShaderModule;
    PFN_vkCreateDescriptorSetLayout CreateDescriptorSetLayout;
    PFN_vkDestroyDescriptorSetLayout DestroyDescriptorSetLayout;
    PFN_vkCreatePipelineLayout CreatePipelineLayout;
    PFN_vkDestroyPipelineLayout DestroyPipelineLayout;
    PFN_vkCreateComputePipelines CreateComputePipelines;
    PFN_vkDestroyPipeline DestroyPipeline;
} vk_api;

/* One physical device and, once a pipeline was checked on it, its logical
 * device (made on first use: listing devices needs none). */
typedef struct vk_dev {
    VkPhysicalDevice physical;
    uint32_t queue_family;
    pthread_mutex_t lock;
    VkDevice device;
    VkResult device_err;   /* why the logical device could not be made; VK_SUCCESS while untried */
    bool tried;
} vk_dev;

struct warm_vk {
    vk_api api;
    VkInstance instance;
    size_t n;
    vk_dev devs[CCKEY_VK_MAX_DEVS];
    warm_vk_device_info info[CCKEY_VK_MAX_DEVS];
};

/* "VK_ERROR_DEVICE_LOST" for a VkResult; "VK_<unknown>" for others. */
const char *warm_vk_result_name(VkResult r);

#endif
