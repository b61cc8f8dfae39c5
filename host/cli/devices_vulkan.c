/* The Vulkan part of `cckey devices`: not a hashing backend but the
 * devices `cckey warm` compiles GLSL and HLSL compute shaders for, each with
 * the identity a manifest names it by (vk_device.h). */
#include "devices_vulkan.h"
#include "warm/shader_compile.h"
#include "warm/vk_device.h"
#include "warm/warm_vulkan.h"

#include <stdio.h>

void cli_devices_vulkan_text(void)
{
    warm_vk *vk = NULL;
    char why[512];
    if (warm_vulkan_open(&vk, why, sizeof why) != 0) {
        printf("vulkan   unavailable: %s\n", why);
        return;
    }
    printf("vulkan   available (cckey warm compiles GLSL and HLSL compute shaders to SPIR-V: %s)\n",
           warm_shader_compiler_version());
    for (size_t i = 0; i < warm_vk_count(vk); i++) {
        const warm_vk_device_info *d = warm_vk_info(vk, i);
        char used[16], api[32];
        warm_vk_version_text(d->vulkan, false, used, sizeof used);
        warm_vk_version_text(d->api_version, true, api, sizeof api);
        printf("   [%u] %s  (%s; Vulkan %s, the device's %s; driver %u; vendor 0x%04x%s)\n", d->index, d->name,
               d->type, used, api, d->driver_version, d->vendor_id, d->compute ? "" : "; no compute queue");
        printf("       device id: %s\n", d->id);
    }
    warm_vk_close(vk);
}

json_t *cli_devices_vulkan_json(void)
{
    warm_vk *vk = NULL;
    char why[512];
    bool ok = warm_vulkan_open(&vk, why, sizeof why) == 0;
    json_t *o = json_pack("{s:s,s:b,s:s}", "backend", "vulkan", "available", ok, "compiler",
                          warm_shader_compiler_version());
    if (!ok) json_object_set_new(o, "reason", json_string(why));
    json_t *devs = json_array();
    for (size_t i = 0; ok && i < warm_vk_count(vk); i++) {
        const warm_vk_device_info *d = warm_vk_info(vk, i);
        char used[16], api[32], uuid[33];
        warm_vk_version_text(d->vulkan, false, used, sizeof used);
        warm_vk_version_text(d->api_version, true, api, sizeof api);
        warm_vk_uuid_hex(d->cache_uuid, uuid);
        json_array_append_new(devs, json_pack("{s:I,s:s,s:s,s:I,s:s,s:s,s:s,s:s,s:I,s:I,s:b}", "index",
                                              (json_int_t)d->index, "id", d->id, "name", d->name, "driver_version",
                                              (json_int_t)d->driver_version, "pipeline_cache_uuid", uuid, "type",
                                              d->type, "vulkan", used, "api_version", api, "vendor_id",
                                              (json_int_t)d->vendor_id, "device_id", (json_int_t)d->device_id,
                                              "compute", d->compute));
    }
    json_object_set_new(o, "devices", devs);
    warm_vk_close(vk);
    return o;
}
