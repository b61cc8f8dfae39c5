/* Running a compute shader on a real Vulkan device (lavapipe in CI), for
 * the tests: an oracle independent of cckey's own Vulkan code (its own
 * loader handle, instance and device), so a module cckey compiled and
 * stored is shown to compute the right thing, not only to be accepted. */
#ifndef CCKEY_TEST_VK_RUN_H
#define CCKEY_TEST_VK_RUN_H

#include <stddef.h>
#include <stdint.h>

/* Runs entry of the SPIR-V module (n_words words) on the first Vulkan
 * device whose name starts with device_prefix: in[] bound as a storage
 * buffer at set 0 binding in_binding, out[] (n words, zeroed first) at
 * binding out_binding, groups workgroups along x. 0, 77 when the machine
 * has no such device (why says so), or -1 with why. */
int vk_run(const char *device_prefix, const uint32_t *spv, size_t n_words, const char *entry, uint32_t in_binding,
           uint32_t out_binding, const uint32_t *in, uint32_t *out, size_t n, uint32_t groups, char *why,
           size_t why_len);

#endif
