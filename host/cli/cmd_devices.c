/* cckey devices: every backend, every device, and the identifier to put in
 * a manifest's `device` field. */
#include "cli.h"
#include "devices_vulkan.h"
#include "warm/warm.h"

#include <getopt.h>
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

static void cpu_json(cli_json *w)
{
    cli_json_object(w);
    cli_json_kstr(w, "backend", "cpu");
    cli_json_kbool(w, "available", true);
    cli_json_kstr(w, "simd", cckey_cpu_isa());
    cli_json_kint(w, "lanes", cckey_cpu_lanes());
    cli_json_kint(w, "threads", cckey_cpu_threads());
    cli_json_end(w);
}

static void device_json(cli_json *w, const cckey_device *d)
{
    cli_json_object(w);
    cli_json_kint(w, "index", d->index);
    cli_json_kstr(w, "id", d->id);
    cli_json_kstr(w, "name", d->name);
    cli_json_kstr(w, "driver", d->driver);
    cli_json_kstr(w, "platform", d->platform);
    cli_json_kstr(w, "type", d->type);
    cli_json_kint(w, "compute_units", d->compute_units);
    cli_json_kint(w, "global_mem_bytes", (long long)d->global_mem);
    cli_json_kbool(w, "selected", d->selected);
    cli_json_kbool(w, "auto", d->auto_ok);
    cli_json_kbool(w, "usable", d->usable);
    cli_json_end(w);
}

static void backend_json(cli_json *w, const listing *l)
{
    cli_json_object(w);
    cli_json_kstr(w, "backend", cckey_backend_name(l->kind));
    cli_json_kbool(w, "available", l->st == CCKEY_OK);
    cli_json_kstr(w, "kernel", cckey_backend_kernel(l->kind));
    if (l->st != CCKEY_OK) cli_json_kstr(w, "reason", l->why);
    cli_json_key(w, "devices");
    cli_json_array(w);
    for (size_t i = 0; i < l->n; i++) device_json(w, &l->dev[i]);
    cli_json_end(w);
    cli_json_end(w);
}

/* Backend b of the listing: cpu, the nl listed, then vulkan. */
static void nth_backend(cli_json *w, const listing *ls, size_t nl, size_t b)
{
    if (b == 0) cpu_json(w);
    else if (b <= nl) backend_json(w, &ls[b - 1]);
    else cli_devices_vulkan_json(w);
}

/* json: {"backends": [...], "nvrtc": {...}}; jsonl: a backend a line. */
static int print_json(const listing *ls, size_t nl, cli_format fmt)
{
    cli_json w;
    cli_json_init(&w, fmt == CLI_JSONL ? CLI_JSON_COMPACT : CLI_JSON_INDENT, false);
    int rc = 0;
    if (fmt == CLI_JSONL) {
        for (size_t b = 0; b < nl + 2; b++) {
            nth_backend(&w, ls, nl, b);
            rc |= cli_json_put(&w, stdout, "\n");
        }
    } else {
        cli_json_object(&w);
        cli_json_key(&w, "backends");
        cli_json_array(&w);
        for (size_t b = 0; b < nl + 2; b++) nth_backend(&w, ls, nl, b);
        cli_json_end(&w);
        char what[512];
        bool nvrtc = warm_nvrtc_usable(what, sizeof what);
        cli_json_key(&w, "nvrtc");
        cli_json_object(&w);
        cli_json_kbool(&w, "available", nvrtc);
        cli_json_kstr(&w, nvrtc ? "version" : "reason", what);
        cli_json_end(&w);
        cli_json_end(&w);
        rc = cli_json_put(&w, stdout, "\n");
    }
    cli_json_free(&w);
    if (rc != 0) cli_error("devices: out of memory");
    return rc != 0 ? CLI_FAIL : CLI_OK;
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
