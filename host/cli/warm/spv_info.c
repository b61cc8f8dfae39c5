/* Reading a SPIR-V module's entry points and resources; see spv_info.h.
 * Opcodes and enumerants are the SPIR-V specification's numbers. */
#include "spv_info.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    OP_ENTRY_POINT = 15, OP_EXECUTION_MODE = 16, OP_TYPE_IMAGE = 25, OP_TYPE_SAMPLER = 26,
    OP_TYPE_SAMPLED_IMAGE = 27, OP_TYPE_ARRAY = 28, OP_TYPE_RUNTIME_ARRAY = 29, OP_TYPE_STRUCT = 30,
    OP_TYPE_POINTER = 32, OP_CONSTANT = 43, OP_CONSTANT_COMPOSITE = 44, OP_SPEC_CONSTANT = 50,
    OP_SPEC_CONSTANT_COMPOSITE = 51, OP_VARIABLE = 59, OP_DECORATE = 71, OP_EXECUTION_MODE_ID = 331,
    OP_TYPE_ACCELERATION_STRUCTURE = 5341,
};
enum { MODEL_GLCOMPUTE = 5, MODE_LOCAL_SIZE = 17, MODE_LOCAL_SIZE_ID = 38 };
enum { DEC_BLOCK = 2, DEC_BUFFER_BLOCK = 3, DEC_BUILTIN = 11, DEC_BINDING = 33, DEC_SET = 34, BUILTIN_WG_SIZE = 25 };
enum { SC_UNIFORM_CONSTANT = 0, SC_UNIFORM = 2, SC_PUSH_CONSTANT = 9, SC_STORAGE_BUFFER = 12 };
enum { DIM_BUFFER = 5, DIM_SUBPASS = 6 };
/* VkDescriptorType values. */
enum {
    DT_SAMPLER = 0, DT_COMBINED = 1, DT_SAMPLED_IMAGE = 2, DT_STORAGE_IMAGE = 3, DT_UNIFORM_TEXEL = 4,
    DT_STORAGE_TEXEL = 5, DT_UNIFORM_BUFFER = 6, DT_STORAGE_BUFFER = 7, DT_INPUT_ATTACHMENT = 10,
    DT_ACCEL = 1000150000,
};

/* What an id is, as far as resources need: one slot per id. */
typedef struct id_info {
    uint16_t op;           /* the instruction that made it */
    uint32_t a, b;         /* op-specific: pointer (class, pointee), array (element, length), image (dim, sampled) */
    uint32_t value;        /* constants: the low word */
    uint32_t parts[3];     /* 3-constituent composites: their ids */
    bool composite3;
    uint32_t set, binding;
    bool has_set, has_binding, block, buffer_block, wg_size;
} id_info;

typedef struct reader {
    const uint32_t *w;
    size_t n;
    uint32_t bound;
    id_info *ids;
    warm_spv_info *out;
    uint32_t size_ids[CCKEY_SPV_MAX_ENTRIES][3];   /* LocalSizeId: constants defined further on */
    char *why;
    size_t why_len;
} reader;

static id_info *id_at(reader *r, uint32_t id) { return id < r->bound ? &r->ids[id] : NULL; }

/* A literal string at word i of an instruction ending at end. */
static void literal(const uint32_t *w, size_t i, size_t end, char *buf, size_t cap)
{
    size_t k = 0;
    for (; i < end && k + 1 < cap; i++)
        for (int b = 0; b < 4 && k + 1 < cap; b++) {
            char c = (char)(w[i] >> (8 * b) & 0xff);
            if (!c) goto done;
            buf[k++] = c;
        }
done:
    buf[k] = '\0';
}

static void entry_point(reader *r, const uint32_t *ins, size_t len)
{
    if (len < 4 || ins[1] != MODEL_GLCOMPUTE || r->out->n_entries >= CCKEY_SPV_MAX_ENTRIES) return;
    warm_spv_entry *e = &r->out->entries[r->out->n_entries++];
    memset(e, 0, sizeof *e);
    e->id = ins[2];
    literal(ins, 3, len, e->name, sizeof e->name);
}

static void execution_mode(reader *r, const uint32_t *ins, size_t len, bool by_id)
{
    uint32_t mode = len > 2 ? ins[2] : 0;
    if (len < 6 || mode != (by_id ? MODE_LOCAL_SIZE_ID : MODE_LOCAL_SIZE)) return;
    for (size_t k = 0; k < r->out->n_entries; k++) {
        if (r->out->entries[k].id != ins[1]) continue;
        for (int d = 0; d < 3; d++) {
            if (by_id) r->size_ids[k][d] = ins[3 + d];
            else r->out->entries[k].size[d] = ins[3 + d];
        }
    }
}

static void decorate(reader *r, const uint32_t *ins, size_t len)
{
    id_info *t = len >= 3 ? id_at(r, ins[1]) : NULL;
    if (!t) return;
    switch (ins[2]) {
    case DEC_SET: if (len >= 4) t->set = ins[3], t->has_set = true; break;
    case DEC_BINDING: if (len >= 4) t->binding = ins[3], t->has_binding = true; break;
    case DEC_BLOCK: t->block = true; break;
    case DEC_BUFFER_BLOCK: t->buffer_block = true; break;
    case DEC_BUILTIN: if (len >= 4 && ins[3] == BUILTIN_WG_SIZE) t->wg_size = true; break;
    }
}

/* Records the result id of a type, constant or variable. */
static void define(reader *r, const uint32_t *ins, size_t len)
{
    uint16_t op = (uint16_t)(ins[0] & 0xffff);
    bool typed = op == OP_CONSTANT || op == OP_SPEC_CONSTANT || op == OP_CONSTANT_COMPOSITE ||
                 op == OP_SPEC_CONSTANT_COMPOSITE || op == OP_VARIABLE;
    size_t at = typed ? 2 : 1;   /* where the result id is */
    id_info *d = len > at ? id_at(r, ins[at]) : NULL;
    if (!d) return;
    d->op = op;
    if (typed) d->a = ins[1];                                  /* the result type */
    if (op == OP_TYPE_POINTER && len >= 4) d->a = ins[2], d->b = ins[3];
    if ((op == OP_TYPE_ARRAY && len >= 4) || (op == OP_TYPE_RUNTIME_ARRAY && len >= 3))
        d->a = ins[2], d->b = op == OP_TYPE_ARRAY ? ins[3] : 0;
    if (op == OP_TYPE_IMAGE && len >= 9) d->a = ins[3], d->b = ins[7];   /* Dim, Sampled */
    if (op == OP_TYPE_SAMPLED_IMAGE && len >= 3) d->a = ins[2];
    if ((op == OP_CONSTANT || op == OP_SPEC_CONSTANT) && len >= 4) d->value = ins[3];
    if (op == OP_VARIABLE && len >= 4) d->b = ins[3];            /* the storage class */
    if ((op == OP_CONSTANT_COMPOSITE || op == OP_SPEC_CONSTANT_COMPOSITE) && len >= 6)
        d->composite3 = len == 6, memcpy(d->parts, ins + 3, sizeof d->parts);   /* x, y, z */
}

/* The descriptor type of a UniformConstant or Uniform/StorageBuffer
 * variable whose (array-stripped) type is t, or -1. */
static long descriptor_type(reader *r, uint32_t storage, const id_info *t)
{
    if (storage == SC_STORAGE_BUFFER) return DT_STORAGE_BUFFER;
    if (storage == SC_UNIFORM) return t->buffer_block ? DT_STORAGE_BUFFER : DT_UNIFORM_BUFFER;
    switch (t->op) {
    case OP_TYPE_SAMPLER: return DT_SAMPLER;
    case OP_TYPE_ACCELERATION_STRUCTURE: return DT_ACCEL;
    case OP_TYPE_SAMPLED_IMAGE: {
        const id_info *img = id_at(r, t->a);
        return img && img->a == DIM_BUFFER ? DT_UNIFORM_TEXEL : DT_COMBINED;
    }
    case OP_TYPE_IMAGE:
        if (t->a == DIM_BUFFER) return t->b == 2 ? DT_STORAGE_TEXEL : DT_UNIFORM_TEXEL;
        if (t->a == DIM_SUBPASS) return DT_INPUT_ATTACHMENT;
        return t->b == 2 ? DT_STORAGE_IMAGE : DT_SAMPLED_IMAGE;
    }
    return -1;
}

static int add_binding(reader *r, const id_info *var)
{
    const id_info *ptr = id_at(r, var->a);
    const id_info *t = ptr ? id_at(r, ptr->b) : NULL;
    uint32_t count = 1;
    while (t && (t->op == OP_TYPE_ARRAY || t->op == OP_TYPE_RUNTIME_ARRAY)) {
        const id_info *len = t->op == OP_TYPE_ARRAY ? id_at(r, t->b) : NULL;
        if (len && len->value) count *= len->value;
        t = id_at(r, t->a);
    }
    long type = t ? descriptor_type(r, var->b, t) : -1;
    if (type < 0) {
        snprintf(r->why, r->why_len, "a resource at set %u binding %u is of a kind cckey does not know", var->set,
                 var->binding);
        return -1;
    }
    for (size_t k = 0; k < r->out->n_bindings; k++) {   /* declared twice (two entry points): once */
        const warm_spv_binding *b = &r->out->bindings[k];
        if (b->set == var->set && b->binding == var->binding) return 0;
    }
    if (r->out->n_bindings == CCKEY_SPV_MAX_BINDINGS) {
        snprintf(r->why, r->why_len, "more than %d resource bindings", CCKEY_SPV_MAX_BINDINGS);
        return -1;
    }
    r->out->bindings[r->out->n_bindings++] = (warm_spv_binding){var->set, var->binding, (uint32_t)type, count};
    return 0;
}

/* After the walk: resources, and workgroup sizes a WorkgroupSize built-in
 * overrides (GLSL's local_size_x_id). */
static int resolve(reader *r)
{
    for (size_t k = 0; k < r->out->n_entries; k++)
        for (int d = 0; d < 3; d++) {
            const id_info *c = r->size_ids[k][d] ? id_at(r, r->size_ids[k][d]) : NULL;
            if (c) r->out->entries[k].size[d] = c->value;
        }
    for (uint32_t id = 0; id < r->bound; id++) {
        const id_info *d = &r->ids[id];
        if (d->op == OP_VARIABLE && d->b == SC_PUSH_CONSTANT) r->out->push_constants = true;
        if (d->op == OP_VARIABLE && d->has_binding && add_binding(r, d) != 0) return -1;
        if (d->wg_size && d->composite3) {
            for (size_t k = 0; k < r->out->n_entries; k++)
                for (int i = 0; i < 3; i++) {
                    const id_info *c = id_at(r, d->parts[i]);
                    r->out->entries[k].size[i] = c ? c->value : 0;
                }
        }
    }
    return 0;
}

static int walk(reader *r)
{
    for (size_t i = 5; i < r->n;) {
        size_t len = r->w[i] >> 16;
        uint16_t op = (uint16_t)(r->w[i] & 0xffff);
        if (len == 0 || i + len > r->n) {
            snprintf(r->why, r->why_len, "SPIR-V cut short at word %zu", i);
            return -1;
        }
        const uint32_t *ins = r->w + i;
        if (op == OP_ENTRY_POINT) entry_point(r, ins, len);
        else if (op == OP_EXECUTION_MODE || op == OP_EXECUTION_MODE_ID) execution_mode(r, ins, len, op != OP_EXECUTION_MODE);
        else if (op == OP_DECORATE) decorate(r, ins, len);
        else define(r, ins, len);
        i += len;
    }
    return 0;
}

int warm_spv_read(const uint32_t *words, size_t n_words, warm_spv_info *out, char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    if (n_words < 5 || words[0] != CCKEY_SPV_MAGIC) {
        snprintf(why, why_len, "not a SPIR-V module (no magic number 0x07230203)");
        return -1;
    }
    out->version = words[1];
    /* The id bound sizes the table; a module is compiled here, but a bound
     * far beyond its length is refused rather than allocated. */
    uint32_t bound = words[3];
    if (bound > n_words * 4 + 16) {
        snprintf(why, why_len, "SPIR-V id bound %u is past what the module can define", bound);
        return -1;
    }
    reader *r = calloc(1, sizeof *r);
    if (r) *r = (reader){.w = words, .n = n_words, .bound = bound, .ids = calloc(bound ? bound : 1, sizeof(id_info)),
                         .out = out, .why = why, .why_len = why_len};
    if (!r || !r->ids) {
        if (r) free(r->ids);
        free(r);
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    int rc = walk(r) == 0 && resolve(r) == 0 ? 0 : -1;
    free(r->ids);
    free(r);
    return rc;
}

const warm_spv_entry *warm_spv_entry_named(const warm_spv_info *info, const char *name)
{
    for (size_t i = 0; i < info->n_entries; i++)
        if (strcmp(info->entries[i].name, name) == 0) return &info->entries[i];
    return NULL;
}
