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

void cli_devices_vulkan_json(cli_json *w)
{
    warm_vk *vk = NULL;
    char why[512];
    bool ok = warm_vulkan_open(&vk, why, sizeof why) == 0;
    cli_json_object(w);
    cli_json_kstr(w, "backend", "vulkan");
    cli_json_kbool(w, "available", ok);
    cli_json_kstr(w, "compiler", warm_shader_compiler_version());
    if (!ok) cli_json_kstr(w, "reason", why);
    cli_json_key(w, "devices");
    cli_json_array(w);
    for (size_t i = 0; ok && i < warm_vk_count(vk); i++) {
        const warm_vk_device_info *d = warm_vk_info(vk, i);
        char used[16], api[32], uuid[33];
        warm_vk_version_text(d->vulkan, false, used, sizeof used);
        warm_vk_version_text(d->api_version, true, api, sizeof api);
        warm_vk_uuid_hex(d->cache_uuid, uuid);
        cli_json_object(w);
        cli_json_kint(w, "index", d->index);
        cli_json_kstr(w, "id", d->id);
        cli_json_kstr(w, "name", d->name);
        cli_json_kint(w, "driver_version", d->driver_version);
        cli_json_kstr(w, "pipeline_cache_uuid", uuid);
        cli_json_kstr(w, "type", d->type);
        cli_json_kstr(w, "vulkan", used);
        cli_json_kstr(w, "api_version", api);
        cli_json_kint(w, "vendor_id", d->vendor_id);
        cli_json_kint(w, "device_id", d->device_id);
        cli_json_kbool(w, "compute", d->compute);
        cli_json_end(w);
    }
    cli_json_end(w);
    cli_json_end(w);
    warm_vk_close(vk);
}
