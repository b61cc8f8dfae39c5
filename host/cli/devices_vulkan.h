/* `cckey devices`: the Vulkan devices warm compiles for (devices_vulkan.c). */
#ifndef CCKEY_CLI_DEVICES_VULKAN_H
#define CCKEY_CLI_DEVICES_VULKAN_H

#include "json_out.h"

/* "vulkan   available (...)" and a line pair per device, or
 * "vulkan   unavailable: WHY" (no loader, no driver, no device). */
void cli_devices_vulkan_text(void);
/* {"backend": "vulkan", "available", "compiler", ["reason"], "devices":
 * [{"index", "id", "name", "driver_version", "pipeline_cache_uuid", "type",
 * "vulkan", "api_version", "vendor_id", "device_id", "compute"}]}, as the
 * next value of w. */
void cli_devices_vulkan_json(cli_json *w);

#endif
