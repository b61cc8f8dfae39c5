/* A compute dispatch on a real Vulkan device; see vk_run.h. Everything is
 * made and released per call: the tests run a handful of shaders. */
#include "vk_run.h"

#define VK_NO_PROTOTYPES
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <vulkan/vulkan.h>

#define FUNCS(X)                                                                                              \
    X(DestroyInstance) X(EnumeratePhysicalDevices) X(GetPhysicalDeviceProperties)                               \
    X(GetPhysicalDeviceQueueFamilyProperties) X(GetPhysicalDeviceMemoryProperties) X(CreateDevice)             \
    X(DestroyDevice) X(GetDeviceQueue) X(CreateBuffer) X(DestroyBuffer) X(GetBufferMemoryRequirements)        \
    X(AllocateMemory) X(FreeMemory) X(BindBufferMemory) X(MapMemory) X(UnmapMemory) X(CreateShaderModule)     \
    X(DestroyShaderModule) X(CreateDescriptorSetLayout) X(DestroyDescriptorSetLayout) X(CreatePipelineLayout) \
    X(DestroyPipelineLayout) X(CreateComputePipelines) X(DestroyPipeline) X(CreateDescriptorPool)             \
    X(DestroyDescriptorPool) X(AllocateDescriptorSets) X(UpdateDescriptorSets) X(CreateCommandPool)           \
    X(DestroyCommandPool) X(AllocateCommandBuffers) X(BeginCommandBuffer) X(EndCommandBuffer)                 \
    X(CmdBindPipeline) X(CmdBindDescriptorSets) X(CmdDispatch) X(CmdPipelineBarrier) X(CreateFence)           \
    X(DestroyFence) X(QueueSubmit) X(WaitForFences)

typedef struct api {
#define FIELD(f) PFN_vk##f f;
    FUNCS(FIELD)
#undef FIELD
} api;

typedef struct run {
    api vk;
    VkInstance instance;
    VkPhysicalDevice pd;
    VkDevice dev;
    uint32_t family;
    VkBuffer buf[2];
    VkDeviceMemory mem[2];
    VkShaderModule module;
    VkDescriptorSetLayout dsl;
    VkPipelineLayout layout;
    VkPipeline pipeline;
    VkDescriptorPool pool;
    VkCommandPool cmd_pool;
    VkFence fence;
    char *why;
    size_t why_len;
} run;

#define TRY(call, what)                                                                        \
    do {                                                                                       \
        VkResult r_ = (call);                                                                  \
        if (r_ != VK_SUCCESS) {                                                                \
            snprintf(R->why, R->why_len, "%s failed (VkResult %d)", what, (int)r_);            \
            return -1;                                                                         \
        }                                                                                      \
    } while (0)

static int start(run *R, const char *prefix)
{
    void *lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);   /* stays loaded: see cckey's vk_loader.c */
    if (!lib) {
        snprintf(R->why, R->why_len, "no Vulkan loader: %s", dlerror());
        return 77;
    }
    PFN_vkGetInstanceProcAddr gipa;
    void *sym = dlsym(lib, "vkGetInstanceProcAddr");
    memcpy(&gipa, &sym, sizeof sym);
    PFN_vkCreateInstance create = (PFN_vkCreateInstance)gipa(NULL, "vkCreateInstance");
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_1};
    VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    if (!create || create(&ci, NULL, &R->instance) != VK_SUCCESS) {
        snprintf(R->why, R->why_len, "no Vulkan driver");
        return 77;
    }
#define LOAD(f) R->vk.f = (PFN_vk##f)gipa(R->instance, "vk" #f);
    FUNCS(LOAD)
#undef LOAD
    VkPhysicalDevice pds[16];
    uint32_t n = 16;
    R->vk.EnumeratePhysicalDevices(R->instance, &n, pds);
    for (uint32_t i = 0; i < n && !R->pd; i++) {
        VkPhysicalDeviceProperties p;
        R->vk.GetPhysicalDeviceProperties(pds[i], &p);
        if (strncmp(p.deviceName, prefix, strlen(prefix)) == 0) R->pd = pds[i];
    }
    if (!R->pd) {
        snprintf(R->why, R->why_len, "no Vulkan device named %s...", prefix);
        return 77;
    }
    return 0;
}

static int open_device(run *R)
{
    VkQueueFamilyProperties fam[16];
    uint32_t n = 16;
    R->vk.GetPhysicalDeviceQueueFamilyProperties(R->pd, &n, fam);
    for (R->family = 0; R->family < n && !(fam[R->family].queueFlags & VK_QUEUE_COMPUTE_BIT); R->family++) {}
    float prio = 1;
    VkDeviceQueueCreateInfo q = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = R->family,
                                 .queueCount = 1, .pQueuePriorities = &prio};
    VkDeviceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1,
                             .pQueueCreateInfos = &q};
    TRY(R->vk.CreateDevice(R->pd, &ci, NULL, &R->dev), "vkCreateDevice");
    return 0;
}

/* A host-visible, coherent storage buffer of bytes, filled from data. */
static int buffer(run *R, int k, const void *data, size_t bytes)
{
    VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = bytes,
                             .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    TRY(R->vk.CreateBuffer(R->dev, &bi, NULL, &R->buf[k]), "vkCreateBuffer");
    VkMemoryRequirements req;
    R->vk.GetBufferMemoryRequirements(R->dev, R->buf[k], &req);
    VkPhysicalDeviceMemoryProperties mp;
    R->vk.GetPhysicalDeviceMemoryProperties(R->pd, &mp);
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t type = 0;
    while (type < mp.memoryTypeCount &&
           !((req.memoryTypeBits >> type & 1) && (mp.memoryTypes[type].propertyFlags & want) == want))
        type++;
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size,
                               .memoryTypeIndex = type};
    TRY(R->vk.AllocateMemory(R->dev, &ai, NULL, &R->mem[k]), "vkAllocateMemory");
    TRY(R->vk.BindBufferMemory(R->dev, R->buf[k], R->mem[k], 0), "vkBindBufferMemory");
    void *p;
    TRY(R->vk.MapMemory(R->dev, R->mem[k], 0, bytes, 0, &p), "vkMapMemory");
    if (data) memcpy(p, data, bytes);
    else memset(p, 0, bytes);
    R->vk.UnmapMemory(R->dev, R->mem[k]);
    return 0;
}

static int pipeline(run *R, const uint32_t *spv, size_t n_words, const char *entry, const uint32_t binding[2])
{
    VkShaderModuleCreateInfo mi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = n_words * 4,
                                   .pCode = spv};
    TRY(R->vk.CreateShaderModule(R->dev, &mi, NULL, &R->module), "vkCreateShaderModule");
    VkDescriptorSetLayoutBinding b[2];
    for (int k = 0; k < 2; k++)
        b[k] = (VkDescriptorSetLayoutBinding){binding[k], VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                              VK_SHADER_STAGE_COMPUTE_BIT, NULL};
    VkDescriptorSetLayoutCreateInfo di = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                          .bindingCount = 2, .pBindings = b};
    TRY(R->vk.CreateDescriptorSetLayout(R->dev, &di, NULL, &R->dsl), "vkCreateDescriptorSetLayout");
    VkPipelineLayoutCreateInfo li = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1,
                                     .pSetLayouts = &R->dsl};
    TRY(R->vk.CreatePipelineLayout(R->dev, &li, NULL, &R->layout), "vkCreatePipelineLayout");
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = R->module, .pName = entry},
        .layout = R->layout};
    TRY(R->vk.CreateComputePipelines(R->dev, VK_NULL_HANDLE, 1, &ci, NULL, &R->pipeline), "vkCreateComputePipelines");
    return 0;
}

static int bind_buffers(run *R, const uint32_t binding[2], size_t bytes, VkDescriptorSet *set)
{
    VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2};
    VkDescriptorPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = 1,
                                     .poolSizeCount = 1, .pPoolSizes = &size};
    TRY(R->vk.CreateDescriptorPool(R->dev, &pi, NULL, &R->pool), "vkCreateDescriptorPool");
    VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorPool = R->pool, .descriptorSetCount = 1, .pSetLayouts = &R->dsl};
    TRY(R->vk.AllocateDescriptorSets(R->dev, &ai, set), "vkAllocateDescriptorSets");
    VkDescriptorBufferInfo info[2];
    VkWriteDescriptorSet w[2];
    for (int k = 0; k < 2; k++) {
        info[k] = (VkDescriptorBufferInfo){R->buf[k], 0, bytes};
        w[k] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = *set,
                                      .dstBinding = binding[k], .descriptorCount = 1,
                                      .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .pBufferInfo = &info[k]};
    }
    R->vk.UpdateDescriptorSets(R->dev, 2, w, 0, NULL);
    return 0;
}

static int dispatch(run *R, VkDescriptorSet set, uint32_t groups)
{
    VkCommandPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = R->family};
    TRY(R->vk.CreateCommandPool(R->dev, &pi, NULL, &R->cmd_pool), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = R->cmd_pool, .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    VkCommandBuffer cb;
    TRY(R->vk.AllocateCommandBuffers(R->dev, &ai, &cb), "vkAllocateCommandBuffers");
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    TRY(R->vk.BeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
    R->vk.CmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, R->pipeline);
    R->vk.CmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, R->layout, 0, 1, &set, 0, NULL);
    R->vk.CmdDispatch(cb, groups, 1, 1);
    /* The shader's writes made visible to the host's read. */
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    R->vk.CmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL,
                             0, NULL);
    TRY(R->vk.EndCommandBuffer(cb), "vkEndCommandBuffer");
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    TRY(R->vk.CreateFence(R->dev, &fi, NULL, &R->fence), "vkCreateFence");
    VkQueue q;
    R->vk.GetDeviceQueue(R->dev, R->family, 0, &q);
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    TRY(R->vk.QueueSubmit(q, 1, &si, R->fence), "vkQueueSubmit");
    TRY(R->vk.WaitForFences(R->dev, 1, &R->fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    return 0;
}

static int read_back(run *R, uint32_t *out, size_t bytes)
{
    void *p;
    TRY(R->vk.MapMemory(R->dev, R->mem[1], 0, bytes, 0, &p), "vkMapMemory");
    memcpy(out, p, bytes);
    R->vk.UnmapMemory(R->dev, R->mem[1]);
    return 0;
}

static void finish(run *R)
{
    if (R->dev) {
        if (R->fence) R->vk.DestroyFence(R->dev, R->fence, NULL);
        if (R->cmd_pool) R->vk.DestroyCommandPool(R->dev, R->cmd_pool, NULL);
        if (R->pool) R->vk.DestroyDescriptorPool(R->dev, R->pool, NULL);
        if (R->pipeline) R->vk.DestroyPipeline(R->dev, R->pipeline, NULL);
        if (R->layout) R->vk.DestroyPipelineLayout(R->dev, R->layout, NULL);
        if (R->dsl) R->vk.DestroyDescriptorSetLayout(R->dev, R->dsl, NULL);
        if (R->module) R->vk.DestroyShaderModule(R->dev, R->module, NULL);
        for (int k = 0; k < 2; k++) {
            if (R->buf[k]) R->vk.DestroyBuffer(R->dev, R->buf[k], NULL);
            if (R->mem[k]) R->vk.FreeMemory(R->dev, R->mem[k], NULL);
        }
        R->vk.DestroyDevice(R->dev, NULL);
    }
    /* The instance stays until exit: destroying it unloads the driver, and
     * what lavapipe allocated once and keeps in its globals would then read
     * as a leak under LeakSanitizer (cckey's vk_loader.c pins its drivers
     * for the same reason). */
}

int vk_run(const char *device_prefix, const uint32_t *spv, size_t n_words, const char *entry, uint32_t in_binding,
           uint32_t out_binding, const uint32_t *in, uint32_t *out, size_t n, uint32_t groups, char *why,
           size_t why_len)
{
    run R = {.why = why, .why_len = why_len};
    const uint32_t binding[2] = {in_binding, out_binding};
    size_t bytes = n * sizeof *in;
    VkDescriptorSet set;
    int rc = start(&R, device_prefix);
    if (rc == 0)
        rc = open_device(&R) || buffer(&R, 0, in, bytes) || buffer(&R, 1, NULL, bytes) ||
                     pipeline(&R, spv, n_words, entry, binding) || bind_buffers(&R, binding, bytes, &set) ||
                     dispatch(&R, set, groups) || read_back(&R, out, bytes)
                 ? -1
                 : 0;
    finish(&R);
    return rc;
}
