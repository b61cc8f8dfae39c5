/* What a SPIR-V module declares, read from its words: its compute entry
 * points with their workgroup sizes, and the resources (descriptor
 * bindings, push constants) a pipeline layout must provide. Enough to make
 * a compute pipeline for a module warm has just compiled, and to tell which
 * entry points a module holds; not a validator (spirv-val is, in tests). */
#ifndef CCKEY_SPV_INFO_H
#define CCKEY_SPV_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CCKEY_SPV_MAGIC 0x07230203u
#define CCKEY_SPV_MAX_ENTRIES 64
#define CCKEY_SPV_MAX_BINDINGS 128

/* The Vulkan descriptor types, by their VkDescriptorType values. */
typedef struct warm_spv_binding {
    uint32_t set, binding;
    uint32_t type;    /* VkDescriptorType */
    uint32_t count;   /* array elements (1 for a runtime-sized array) */
} warm_spv_binding;

typedef struct warm_spv_entry {
    char name[256];
    uint32_t id;
    uint32_t size[3];   /* the workgroup size; 0s when the module does not say */
} warm_spv_entry;

typedef struct warm_spv_info {
    uint32_t version;   /* 0x00010300 for SPIR-V 1.3 */
    warm_spv_entry entries[CCKEY_SPV_MAX_ENTRIES];   /* GLCompute only */
    size_t n_entries;
    warm_spv_binding bindings[CCKEY_SPV_MAX_BINDINGS];
    size_t n_bindings;
    bool push_constants;
} warm_spv_info;

/* 0, or -1 with why: not SPIR-V (the magic number), cut short, a
 * resource of a kind not known here, more than the limits above. */
int warm_spv_read(const uint32_t *words, size_t n_words, warm_spv_info *out, char *why, size_t why_len);

/* The compute entry point called name, or NULL. */
const warm_spv_entry *warm_spv_entry_named(const warm_spv_info *info, const char *name);

#endif
