/* vk-run SPV ENTRY IN_BINDING OUT_BINDING GROUP N: runs a SPIR-V module (a
 * file, e.g. what `cckey cache get` wrote) on lavapipe over N inputs
 * in[i] = i * 2654435761 + 12345 (mod 2^32) and prints out[i], one decimal a
 * line, for the CLI tests to check against their own computation. Exit 77
 * with one line where there is no lavapipe. */
#include "vk_run.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: vk-run SPV ENTRY IN_BINDING OUT_BINDING GROUP N\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    static uint32_t spv[1 << 20];
    size_t n_words = fread(spv, 4, sizeof spv / 4, f);
    fclose(f);
    size_t n = strtoul(argv[6], NULL, 10);
    uint32_t group = (uint32_t)strtoul(argv[5], NULL, 10);
    uint32_t *in = malloc(n * 4), *out = malloc(n * 4);
    if (!in || !out || !group || n % group) {
        fprintf(stderr, "vk-run: bad sizes\n");
        return 2;
    }
    for (size_t i = 0; i < n; i++) in[i] = (uint32_t)i * 2654435761u + 12345u;
    char why[256];
    int rc = vk_run("llvmpipe", spv, n_words, argv[2], (uint32_t)atoi(argv[3]), (uint32_t)atoi(argv[4]), in, out, n,
                    (uint32_t)(n / group), why, sizeof why);
    if (rc != 0) {
        printf("%s%s\n", rc == 77 ? "skipped: " : "vk-run: ", why);
        return rc == 77 ? 77 : 1;
    }
    for (size_t i = 0; i < n; i++) printf("%u\n", out[i]);
    free(in);
    free(out);
    return 0;
}
