/* cckey devices: every backend, every device, and the identifier to put in
 * a manifest's `device` field. */
#include "cli.h"
#include "devices_vulkan.h"
#include "warm/warm.h"

#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEVICES 64

static void usage(FILE *f)
{
    fputs("usage: cckey devices [--format text|json|jsonl]\n"
          "\n"
          "List the backends (cpu, opencl, cuda), their devices, and why a backend is\n"
          "unavailable; then the Vulkan devices cckey warm compiles GLSL and HLSL for, and\n"
          "whether NVRTC, which cckey warm compiles CUDA with, is usable. Each device shows\n"
          "the identifier recommended for a manifest's \"device\" field: NAME|DRIVER_VERSION\n"
          "(OpenCL: CL_DEVICE_NAME|CL_DRIVER_VERSION; CUDA: the device name and the NVIDIA\n"
          "driver version, e.g. NVIDIA H200|580.159.04); Vulkan: NAME|DRIVER_VERSION|\n"
          "PIPELINE_CACHE_UUID (deviceName, driverVersion as a decimal number, and the 32\n"
          "hex digits of pipelineCacheUUID: what decides whether a pipeline is reusable).\n"
          "'*' marks the device a backend uses (OpenCL: CCKEY_OPENCL_DEVICE=INDEX|NAME picks\n"
          "another; CUDA: CCKEY_CUDA_DEVICE=ORDINAL). 'auto' tells whether --backend auto may\n"
          "use it: a CPU device never, since it would be slower than the CPU backend.\n"
          "\n"
          "      --format FMT  text (default); json: one document {\"backends\": [...]};\n"
          "                 jsonl: one backend object a line\n"
          "      --json     the same as --format json\n"
          "  -h, --help     show this help\n",
          f);
}

typedef struct listing {
    cckey_backend_kind kind;
    cckey_status st;
    char why[512];
    size_t n;
    cckey_device dev[MAX_DEVICES];
} listing;

static void gather(listing *l, const cckey_batch_config *cfg, cckey_backend_kind kind)
{
    memset(l, 0, sizeof *l);
    l->kind = kind;
    l->st = cckey_devices(cfg, kind, l->dev, MAX_DEVICES, &l->n);
    if (l->st != CCKEY_OK) snprintf(l->why, sizeof l->why, "%s", cckey_last_error());
    if (l->n > MAX_DEVICES) l->n = MAX_DEVICES;
}

static double gib(uint64_t b) { return (double)b / (1024.0 * 1024.0 * 1024.0); }

static void print_text(const listing *ls, size_t nl)
{
    unsigned lanes = cckey_cpu_lanes();
    const char *isa = cckey_cpu_isa();
    printf("cpu      available: MD5 %s, %u lane(s), %u thread(s)\n", isa, lanes, cckey_cpu_threads());
    for (size_t b = 0; b < nl; b++) {
        const listing *l = &ls[b];
        const char *name = cckey_backend_name(l->kind);
        if (l->st == CCKEY_OK) printf("%-8s available (%s)\n", name, cckey_backend_kernel(l->kind));
        else printf("%-8s unavailable: %s\n", name, l->why);
        for (size_t i = 0; i < l->n; i++) {
            const cckey_device *d = &l->dev[i];
            printf("  %c[%u] %s  (%s; %s; %u compute units; %.1f GiB; auto: %s%s)\n", d->selected ? '*' : ' ', d->index,
                   d->name, d->type, d->platform, d->compute_units, gib(d->global_mem), d->auto_ok ? "yes" : "no",
                   d->usable ? "" : "; unusable");
            printf("       device id: %s\n", d->id);
        }
    }
    cli_devices_vulkan_text();
    /* Not a backend: the compiler `cckey warm` uses for CUDA, which needs no
     * GPU or driver when the architecture is given. */
    char what[512];
    if (warm_nvrtc_usable(what, sizeof what))
        printf("nvrtc    available: %s (cckey warm compiles CUDA kernels, without a GPU given arch=sm_XX)\n", what);
    else
        printf("nvrtc    unavailable: %s\n", what);
}

static int print_json(const listing *ls, size_t nl, cli_format fmt)
{
    json_t *root = json_object(), *arr = json_array();
    unsigned lanes = cckey_cpu_lanes();
    const char *isa = cckey_cpu_isa();
    json_array_append_new(arr, json_pack("{s:s,s:b,s:s,s:I,s:I}", "backend", "cpu", "available", 1, "simd", isa,
                                         "lanes", (json_int_t)lanes, "threads", (json_int_t)cckey_cpu_threads()));
    for (size_t b = 0; b < nl; b++) {
        const listing *l = &ls[b];
        json_t *o = json_pack("{s:s,s:b,s:s}", "backend", cckey_backend_name(l->kind), "available", l->st == CCKEY_OK,
                              "kernel", cckey_backend_kernel(l->kind));
        if (l->st != CCKEY_OK) json_object_set_new(o, "reason", json_string(l->why));
        json_t *devs = json_array();
        for (size_t i = 0; i < l->n; i++) {
            const cckey_device *d = &l->dev[i];
            json_array_append_new(
                devs, json_pack("{s:I,s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:b,s:b,s:b}", "index", (json_int_t)d->index, "id",
                                d->id, "name", d->name, "driver", d->driver, "platform", d->platform, "type", d->type,
                                "compute_units", (json_int_t)d->compute_units, "global_mem_bytes",
                                (json_int_t)d->global_mem, "selected", d->selected, "auto", d->auto_ok, "usable",
                                d->usable));
        }
        json_object_set_new(o, "devices", devs);
        json_array_append_new(arr, o);
    }
    json_array_append_new(arr, cli_devices_vulkan_json());
    json_object_set_new(root, "backends", arr);
    char what[512];
    bool nvrtc = warm_nvrtc_usable(what, sizeof what);
    json_object_set_new(root, "nvrtc", json_pack("{s:b,s:s}", "available", nvrtc, nvrtc ? "version" : "reason", what));
    int rc = CLI_OK;
    if (fmt == CLI_JSONL) {
        size_t i;
        json_t *b;
        json_array_foreach(arr, i, b) {
            char *line = json_dumps(b, JSON_COMPACT | JSON_PRESERVE_ORDER);
            if (line) puts(line);
            else rc = CLI_FAIL;
            free(line);
        }
    } else {
        char *txt = json_dumps(root, JSON_INDENT(2));
        if (txt) puts(txt);
        else rc = CLI_FAIL;
        free(txt);
    }
    json_decref(root);
    if (rc != CLI_OK) cli_error("devices: out of memory");
    return rc;
}

int cli_cmd_devices(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'J'},
        {"format", required_argument, NULL, 'F'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    cli_format fmt = CLI_TEXT;
    int c;
    optind = 1;
    while ((c = cli_getopt("devices", argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case 'J': fmt = CLI_JSON; break;
        case 'F':
            if (!cli_format_parse("devices", optarg, CLI_FMT_ALL, &fmt))
                return CLI_USAGE;
            break;
        case 'h': usage(stdout); return CLI_OK;
        default: return CLI_USAGE;
        }
    }
    if (optind < argc) {
        cli_error("devices: unexpected argument \"%s\" (see 'cckey help devices')", argv[optind]);
        return CLI_USAGE;
    }
    static const cckey_backend_kind kinds[] = {CCKEY_BACKEND_OPENCL, CCKEY_BACKEND_CUDA};
    listing *ls = calloc(2, sizeof *ls);
    if (!ls) {
        cli_error("devices: out of memory");
        return CLI_FAIL;
    }
    cckey_batch_config *cfg = NULL;
    if (cckey_batch_config_new(&cfg) != CCKEY_OK) {
        free(ls);
        cli_error("devices: out of memory");
        return CLI_FAIL;
    }
    int rc = cli_config_from_env(cfg);
    if (rc == CLI_OK) {
        for (size_t i = 0; i < 2; i++) gather(&ls[i], cfg, kinds[i]);
        if (fmt != CLI_TEXT) rc = print_json(ls, 2, fmt);
        else print_text(ls, 2);
    }
    cckey_batch_config_free(cfg);
    free(ls);
    if (fflush(stdout) != 0) rc = CLI_FAIL;
    return rc;
}
