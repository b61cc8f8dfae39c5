/* A compute pipeline on one Vulkan device, made to check that the device
 * takes a module warm compiled (see warm_vk_check_pipeline). The logical
 * device is made once per physical device, on first use, and shared by the
 * worker threads: creating modules, layouts and pipelines needs no external
 * synchronization on a VkDevice (the Vulkan spec's threading rules), and no
 * pipeline cache is shared (a cache is externally synchronized). */
#ifdef CCKEY_WITH_VULKAN
#include "spv_info.h"
#include "vk_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SETS 32

/* The logical device of dev, made on first use; NULL with why. */
static VkDevice device_of(warm_vk *vk, size_t dev, char *why, size_t why_len)
{
    vk_dev *d = &vk->devs[dev];
    pthread_mutex_lock(&d->lock);
    if (!d->tried) {
        d->tried = true;
        float prio = 1.0f;
        VkDeviceQueueCreateInfo q = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                     .queueFamilyIndex = d->queue_family, .queueCount = 1, .pQueuePriorities = &prio};
        VkDeviceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1,
                                 .pQueueCreateInfos = &q};
        d->device_err = vk->api.CreateDevice(d->physical, &ci, NULL, &d->device);
        if (d->device_err != VK_SUCCESS) d->device = VK_NULL_HANDLE;
    }
    VkDevice out = d->device;
    VkResult err = d->device_err;
    pthread_mutex_unlock(&d->lock);
    if (!out)
        snprintf(why, why_len, "the Vulkan device \"%s\" could not be opened (vkCreateDevice: %s)", vk->info[dev].id,
                 warm_vk_result_name(err));
    return out;
}

/* The workgroup within the device's limits, or -1 with why: creating a
 * pipeline past them is invalid use, which a driver need not report. */
static int check_limits(const warm_vk_device_info *d, const warm_spv_entry *e, char *why, size_t why_len)
{
    uint64_t total = 1;
    for (int i = 0; i < 3; i++) {
        uint32_t s = e->size[i] ? e->size[i] : 1;
        total *= s;
        if (s > d->max_group_size[i]) {
            snprintf(why, why_len, "the Vulkan device \"%s\" refuses %s: workgroup size %c = %u is past its "
                     "maxComputeWorkGroupSize (%u)", d->id, e->name, "xyz"[i], s, d->max_group_size[i]);
            return -1;
        }
    }
    if (total > d->max_group_invocations) {
        snprintf(why, why_len, "the Vulkan device \"%s\" refuses %s: %llu invocations per workgroup is past its "
                 "maxComputeWorkGroupInvocations (%u)", d->id, e->name, (unsigned long long)total,
                 d->max_group_invocations);
        return -1;
    }
    return 0;
}

typedef struct layout {
    VkDescriptorSetLayout sets[MAX_SETS];
    uint32_t n_sets;
    VkPipelineLayout pipeline;
} layout;

static void layout_free(warm_vk *vk, VkDevice dev, layout *l)
{
    if (l->pipeline) vk->api.DestroyPipelineLayout(dev, l->pipeline, NULL);
    for (uint32_t s = 0; s < l->n_sets; s++)
        if (l->sets[s]) vk->api.DestroyDescriptorSetLayout(dev, l->sets[s], NULL);
}

/* One descriptor set layout per set up to the highest the module uses
 * (empty ones between), and push constants as large as the device allows,
 * which covers any block the module declares. */
static VkResult layout_make(warm_vk *vk, VkDevice dev, const warm_vk_device_info *d, const warm_spv_info *m,
                            layout *l)
{
    memset(l, 0, sizeof *l);
    for (size_t k = 0; k < m->n_bindings; k++)
        if (m->bindings[k].set + 1 > l->n_sets) l->n_sets = m->bindings[k].set + 1;
    if (l->n_sets > MAX_SETS || l->n_sets > d->max_sets) return VK_ERROR_TOO_MANY_OBJECTS;
    VkDescriptorSetLayoutBinding b[CCKEY_SPV_MAX_BINDINGS];
    for (uint32_t s = 0; s < l->n_sets; s++) {
        uint32_t nb = 0;
        for (size_t k = 0; k < m->n_bindings; k++)
            if (m->bindings[k].set == s)
                b[nb++] = (VkDescriptorSetLayoutBinding){m->bindings[k].binding,
                                                         (VkDescriptorType)m->bindings[k].type, m->bindings[k].count,
                                                         VK_SHADER_STAGE_COMPUTE_BIT, NULL};
        VkDescriptorSetLayoutCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                              .bindingCount = nb, .pBindings = b};
        VkResult r = vk->api.CreateDescriptorSetLayout(dev, &ci, NULL, &l->sets[s]);
        if (r != VK_SUCCESS) return r;
    }
    VkPushConstantRange pc = {VK_SHADER_STAGE_COMPUTE_BIT, 0, d->max_push_constants};
    VkPipelineLayoutCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                     .setLayoutCount = l->n_sets, .pSetLayouts = l->sets,
                                     .pushConstantRangeCount = m->push_constants && pc.size ? 1 : 0,
                                     .pPushConstantRanges = &pc};
    return vk->api.CreatePipelineLayout(dev, &ci, NULL, &l->pipeline);
}

/* The module, its layout and the pipeline, made and released again. */
static VkResult make_pipeline(warm_vk *vk, VkDevice dev, const warm_vk_device_info *d, const uint32_t *words,
                              size_t n_words, const warm_spv_info *m, const char *entry, const char **step)
{
    VkShaderModuleCreateInfo mi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                   .codeSize = n_words * 4, .pCode = words};
    VkShaderModule mod = VK_NULL_HANDLE;
    *step = "vkCreateShaderModule";
    VkResult r = vk->api.CreateShaderModule(dev, &mi, NULL, &mod);
    if (r != VK_SUCCESS) return r;
    layout l;
    *step = "the pipeline layout";
    r = layout_make(vk, dev, d, m, &l);
    if (r == VK_SUCCESS) {
        VkComputePipelineCreateInfo ci = {
            .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
            .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                      .stage = VK_SHADER_STAGE_COMPUTE_BIT, .module = mod, .pName = entry},
            .layout = l.pipeline};
        VkPipeline p = VK_NULL_HANDLE;
        *step = "vkCreateComputePipelines";
        r = vk->api.CreateComputePipelines(dev, VK_NULL_HANDLE, 1, &ci, NULL, &p);
        if (p) vk->api.DestroyPipeline(dev, p, NULL);
    }
    layout_free(vk, dev, &l);
    vk->api.DestroyShaderModule(dev, mod, NULL);
    return r;
}

int warm_vk_check_pipeline(warm_vk *vk, size_t dev, const uint32_t *words, size_t n_words, const char *entry,
                            char *why, size_t why_len)
{
    if (!vk || dev >= vk->n) {
        snprintf(why, why_len, "no such Vulkan device (%zu)", dev);
        return -1;
    }
    const warm_vk_device_info *d = &vk->info[dev];
    warm_spv_info *m = malloc(sizeof *m);
    char what[256];
    if (!m) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    int rc = -1;
    const warm_spv_entry *e = NULL;
    if (warm_spv_read(words, n_words, m, what, sizeof what) != 0)
        snprintf(why, why_len, "the module for \"%s\": %s", d->id, what);
    else if (!(e = warm_spv_entry_named(m, entry)))
        snprintf(why, why_len, "the module has no compute entry point \"%s\"", entry);
    else if (!d->compute)
        snprintf(why, why_len, "the Vulkan device \"%s\" has no compute queue", d->id);
    else if (check_limits(d, e, why, why_len) == 0) {
        VkDevice vd = device_of(vk, dev, why, why_len);
        const char *step = "";
        VkResult r = vd ? make_pipeline(vk, vd, d, words, n_words, m, entry, &step) : VK_ERROR_INITIALIZATION_FAILED;
        if (vd && r == VK_ERROR_DEVICE_LOST)
            snprintf(why, why_len, "the Vulkan device \"%s\" was lost (%s: VK_ERROR_DEVICE_LOST)", d->id, step);
        else if (vd && r != VK_SUCCESS)
            snprintf(why, why_len, "the Vulkan device \"%s\" refused the pipeline for %s (%s: %s)", d->id, entry,
                     step, warm_vk_result_name(r));
        rc = vd && r == VK_SUCCESS ? 0 : -1;
    }
    free(m);
    return rc;
}
#endif
