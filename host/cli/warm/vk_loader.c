/* The Vulkan loader opened at run time, an instance, and its physical
 * devices with their identities; see vk_device.h. */
#include "vk_device.h"

#include <stdio.h>

/* Both with and without the Vulkan headers: the bit layout of
 * VK_MAKE_API_VERSION (variant 3 bits, major 7, minor 10, patch 12). */
void warm_vk_version_text(uint32_t v, bool patch, char *buf, size_t len)
{
    if (patch) snprintf(buf, len, "%u.%u.%u", v >> 22 & 0x7f, v >> 12 & 0x3ff, v & 0xfff);
    else snprintf(buf, len, "%u.%u", v >> 22 & 0x7f, v >> 12 & 0x3ff);
}

void warm_vk_uuid_hex(const uint8_t uuid[16], char out[33])
{
    for (int k = 0; k < 16; k++) snprintf(out + 2 * k, 3, "%02x", uuid[k]);
}

#ifndef CCKEY_WITH_VULKAN
int warm_vk_open(const char *library, warm_vk **out, char *why, size_t why_len)
{
    (void)library;
    *out = NULL;
    snprintf(why, why_len, "this cckey was built without Vulkan (no Vulkan headers: libvulkan-dev)");
    return -1;
}
void warm_vk_close(warm_vk *vk) { (void)vk; }
size_t warm_vk_count(const warm_vk *vk) { (void)vk; return 0; }
const warm_vk_device_info *warm_vk_info(const warm_vk *vk, size_t dev) { (void)vk, (void)dev; return NULL; }
int warm_vk_check_pipeline(warm_vk *vk, size_t dev, const uint32_t *words, size_t n_words, const char *entry,
                            char *why, size_t why_len)
{
    (void)vk, (void)dev, (void)words, (void)n_words, (void)entry;
    snprintf(why, why_len, "this cckey was built without Vulkan");
    return -1;
}
#else
#include "vk_internal.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_LIBRARY "libvulkan.so.1"

/* Instance-level functions, fetched once the instance exists. */
#define FN(f) {"vk" #f, offsetof(vk_api, f)}
static const struct {
    const char *name;
    size_t offset;
} fns[] = {
    FN(DestroyInstance), FN(EnumeratePhysicalDevices), FN(GetPhysicalDeviceProperties),
    FN(GetPhysicalDeviceQueueFamilyProperties), FN(CreateDevice), FN(GetDeviceProcAddr), FN(DestroyDevice),
    FN(CreateShaderModule), FN(DestroyShaderModule), FN(CreateDescriptorSetLayout),
    FN(DestroyDescriptorSetLayout), FN(CreatePipelineLayout), FN(DestroyPipelineLayout),
    FN(CreateComputePipelines), FN(DestroyPipeline),
};
#undef FN

const char *warm_vk_result_name(VkResult r)
{
    switch (r) {
#define NAME(c) case c: return #c
    NAME(VK_SUCCESS);
    NAME(VK_INCOMPLETE);
    NAME(VK_ERROR_OUT_OF_HOST_MEMORY);
    NAME(VK_ERROR_OUT_OF_DEVICE_MEMORY);
    NAME(VK_ERROR_INITIALIZATION_FAILED);
    NAME(VK_ERROR_DEVICE_LOST);
    NAME(VK_ERROR_LAYER_NOT_PRESENT);
    NAME(VK_ERROR_EXTENSION_NOT_PRESENT);
    NAME(VK_ERROR_FEATURE_NOT_PRESENT);
    NAME(VK_ERROR_INCOMPATIBLE_DRIVER);
    NAME(VK_ERROR_TOO_MANY_OBJECTS);
    NAME(VK_ERROR_UNKNOWN);
    NAME(VK_ERROR_INVALID_SHADER_NV);
    NAME(VK_PIPELINE_COMPILE_REQUIRED);
#undef NAME
    default: return "VK_<unknown>";
    }
}


/* The loader, opened once per path and never closed: a driver may keep
 * threads or exit handlers that outlive an unload. */
static void *open_loader(const char *library, PFN_vkGetInstanceProcAddr *gipa, char *why, size_t why_len)
{
    const char *path = library && *library ? library : DEFAULT_LIBRARY;
    dlerror();
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(why, why_len, "no Vulkan loader (%s): %s", path, e ? e : "cannot be opened");
        return NULL;
    }
    void *sym = dlsym(lib, "vkGetInstanceProcAddr");
    if (!sym) {
        snprintf(why, why_len, "%s lacks vkGetInstanceProcAddr (not a Vulkan loader?)", path);
        return NULL;
    }
    memcpy(gipa, &sym, sizeof sym);   /* POSIX: a symbol's address converts to a function pointer */
    return lib;
}

/* The version to ask the instance for: what the loader offers, 1.3 at most
 * (what shaderc targets); a 1.0 loader refuses anything but 1.0. */
static uint32_t instance_version(PFN_vkGetInstanceProcAddr gipa)
{
    PFN_vkEnumerateInstanceVersion ver = (PFN_vkEnumerateInstanceVersion)gipa(NULL, "vkEnumerateInstanceVersion");
    uint32_t v = VK_API_VERSION_1_0;
    if (ver && ver(&v) != VK_SUCCESS) v = VK_API_VERSION_1_0;
    return v > VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : v;
}

static int make_instance(warm_vk *vk, PFN_vkGetInstanceProcAddr gipa, uint32_t version, char *why, size_t why_len)
{
    PFN_vkCreateInstance create = (PFN_vkCreateInstance)gipa(NULL, "vkCreateInstance");
    if (!create) {
        snprintf(why, why_len, "the Vulkan loader lacks vkCreateInstance");
        return -1;
    }
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "cckey",
                             .pEngineName = "cckey", .apiVersion = version};
    VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    VkResult r = create(&ci, NULL, &vk->instance);
    if (r != VK_SUCCESS) {
        snprintf(why, why_len, "%s", r == VK_ERROR_INCOMPATIBLE_DRIVER
                 ? "no Vulkan driver (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER; mesa-vulkan-drivers has lavapipe)"
                 : warm_vk_result_name(r));
        return -1;
    }
    for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
        PFN_vkVoidFunction f = gipa(vk->instance, fns[i].name);
        if (!f) {
            snprintf(why, why_len, "the Vulkan loader lacks %s", fns[i].name);
            return -1;
        }
        memcpy((char *)&vk->api + fns[i].offset, &f, sizeof f);
    }
    return 0;
}

static const char *type_name(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    default: return "other";
    }
}

/* The first queue family with compute, or UINT32_MAX. */
static uint32_t compute_family(const vk_api *api, VkPhysicalDevice pd)
{
    VkQueueFamilyProperties fam[32];
    uint32_t n = 32;
    api->GetPhysicalDeviceQueueFamilyProperties(pd, &n, fam);
    for (uint32_t i = 0; i < n && i < 32; i++)
        if (fam[i].queueFlags & VK_QUEUE_COMPUTE_BIT) return i;
    return UINT32_MAX;
}

static void describe(warm_vk *vk, size_t i, uint32_t instance_ver)
{
    VkPhysicalDeviceProperties p;
    vk->api.GetPhysicalDeviceProperties(vk->devs[i].physical, &p);
    warm_vk_device_info *d = &vk->info[i];
    d->index = (unsigned)i;
    snprintf(d->name, sizeof d->name, "%.*s", (int)sizeof p.deviceName, p.deviceName);
    d->driver_version = p.driverVersion;
    d->api_version = p.apiVersion;
    uint32_t v = p.apiVersion < instance_ver ? p.apiVersion : instance_ver;
    d->vulkan = VK_MAKE_API_VERSION(0, VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), 0);
    d->vendor_id = p.vendorID;
    d->device_id = p.deviceID;
    memcpy(d->cache_uuid, p.pipelineCacheUUID, 16);
    d->type = type_name(p.deviceType);
    vk->devs[i].queue_family = compute_family(&vk->api, vk->devs[i].physical);
    d->compute = vk->devs[i].queue_family != UINT32_MAX;
    memcpy(d->max_group_size, p.limits.maxComputeWorkGroupSize, sizeof d->max_group_size);
    d->max_group_invocations = p.limits.maxComputeWorkGroupInvocations;
    d->max_push_constants = p.limits.maxPushConstantsSize;
    d->max_sets = p.limits.maxBoundDescriptorSets;
    char uuid[33];
    warm_vk_uuid_hex(d->cache_uuid, uuid);
    snprintf(d->id, sizeof d->id, "%s|%u|%s", d->name, d->driver_version, uuid);
}

/* The drivers the loader opened for the instance stay mapped until exit,
 * as the loader itself does. vkDestroyInstance would unload them, and what
 * a driver allocated once and keeps in its globals (lavapipe does, through
 * LLVM) would then be unreachable: a leak for LeakSanitizer, reported
 * under whatever library is mapped later at the same addresses (NVRTC,
 * say), so no suppression could name the driver. Each loaded module is
 * opened once more (RTLD_NOLOAD: nothing new loads) and never closed.
 * Names are collected first: no dlopen runs inside dl_iterate_phdr. */
typedef struct module_names {
    char *name[256];
    size_t n;
} module_names;

static int note_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    module_names *m = arg;
    if (info->dlpi_name && info->dlpi_name[0] && m->n < sizeof m->name / sizeof *m->name)
        m->name[m->n] = strdup(info->dlpi_name), m->n += m->name[m->n] != NULL;
    return 0;
}

static void pin_drivers(void)
{
    module_names m = {.n = 0};
    dl_iterate_phdr(note_module, &m);
    for (size_t i = 0; i < m.n; i++) {
        (void)dlopen(m.name[i], RTLD_NOW | RTLD_NOLOAD);
        free(m.name[i]);
    }
}

static int enumerate(warm_vk *vk, uint32_t instance_ver, char *why, size_t why_len)
{
    VkPhysicalDevice pds[CCKEY_VK_MAX_DEVS];
    uint32_t n = CCKEY_VK_MAX_DEVS;
    VkResult r = vk->api.EnumeratePhysicalDevices(vk->instance, &n, pds);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        snprintf(why, why_len, "vkEnumeratePhysicalDevices: %s", warm_vk_result_name(r));
        return -1;
    }
    if (n == 0) {
        snprintf(why, why_len, "no Vulkan device (the loader found drivers, but they report no device)");
        return -1;
    }
    vk->n = n;
    for (size_t i = 0; i < n; i++) {
        vk->devs[i].physical = pds[i];
        pthread_mutex_init(&vk->devs[i].lock, NULL);
        describe(vk, i, instance_ver);
    }
    return 0;
}

int warm_vk_open(const char *library, warm_vk **out, char *why, size_t why_len)
{
    *out = NULL;
    PFN_vkGetInstanceProcAddr gipa;
    if (!open_loader(library, &gipa, why, why_len)) return -1;
    warm_vk *vk = calloc(1, sizeof *vk);
    if (!vk) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    uint32_t ver = instance_version(gipa);
    int rc = make_instance(vk, gipa, ver, why, why_len);
    if (rc == 0) rc = enumerate(vk, ver, why, why_len);
    pin_drivers();   /* loaded by now: the instance's drivers, and what devices brought */
    if (rc != 0) {
        warm_vk_close(vk);
        return -1;
    }
    *out = vk;
    return 0;
}

void warm_vk_close(warm_vk *vk)
{
    if (!vk) return;
    for (size_t i = 0; i < vk->n; i++) {
        if (vk->devs[i].device) vk->api.DestroyDevice(vk->devs[i].device, NULL);
        pthread_mutex_destroy(&vk->devs[i].lock);
    }
    if (vk->instance && vk->api.DestroyInstance) vk->api.DestroyInstance(vk->instance, NULL);
    free(vk);
}

size_t warm_vk_count(const warm_vk *vk) { return vk ? vk->n : 0; }

const warm_vk_device_info *warm_vk_info(const warm_vk *vk, size_t dev)
{
    return vk && dev < vk->n ? &vk->info[dev] : NULL;
}
#endif
