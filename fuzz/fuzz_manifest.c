/* libFuzzer target: one manifest line through the parser proper.
 *
 * Any input must give either a tuple whose key can be made, or a message
 * that starts "LABEL:LINE:COLUMN: " and fits its buffer; never a crash, a
 * leak or undefined behaviour (ASan and UBSan watch). */
#include "cli/manifest/manifest.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char base_dir[64];

static void remove_base_dir(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/a.cu", base_dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/empty.cu", base_dir);
    unlink(path);
    rmdir(base_dir);
}

/* A folder with a real source and an empty one, so that relative
 * "source_file" values can succeed as well as fail. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    snprintf(base_dir, sizeof base_dir, "/tmp/cckey-fuzz-XXXXXX");
    if (!mkdtemp(base_dir)) abort();
    char path[128];
    snprintf(path, sizeof path, "%s/a.cu", base_dir);
    FILE *f = fopen(path, "wb");
    if (!f || fputs("__global__ void k() {}\n", f) < 0 || fclose(f) != 0) abort();
    snprintf(path, sizeof path, "%s/empty.cu", base_dir);
    f = fopen(path, "wb");
    if (!f || fclose(f) != 0) abort();
    atexit(remove_base_dir);
    return 0;
}

static void check_located(const char *err, size_t err_len)
{
    if (!memchr(err, '\0', err_len)) abort();   /* must be terminated in its buffer */
    if (err_len < 64) return;                   /* a short buffer may cut the prefix */
    static const char prefix[] = "fuzz.jsonl:7:";
    if (strncmp(err, prefix, sizeof prefix - 1) != 0) abort();
    const char *p = err + sizeof prefix - 1;
    char *end;
    unsigned long col = strtoul(p, &end, 10);
    if (end == p || col < 1 || end[0] != ':' || end[1] != ' ' || end[2] == '\0') abort();
}

static void check_tuple(const manifest_item *item)
{
    char key[CCKEY_KEY_LEN + 1];
    const cckey_tuple *t = &item->tuple;
    if (cckey_make_key(key, t->device, t->name, t->source, t->options, t->n_options) != CCKEY_OK) abort();
    if (strlen(key) != CCKEY_KEY_LEN) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The parser gets exactly the bytes, not a C string: no terminator. */
    char *line = malloc(size ? size : 1);
    if (!line) return 0;
    memcpy(line, data, size);

    manifest_item item;
    manifest_files files = {0};
    char err[1024];
    int r = manifest_parse_line(line, size, "fuzz.jsonl", 7, base_dir, &item, &files, err, sizeof err);
    if (r == MANIFEST_ITEM) {
        check_tuple(&item);
        manifest_item_clear(&item);
    } else if (r == MANIFEST_BAD) {
        check_located(err, sizeof err);
    } else {
        abort();
    }

    /* The two-step path (parse on a worker, map on one thread), with a
     * cramped message buffer. */
    char small[24];
    r = manifest_parse_line(line, size, "fuzz.jsonl", 7, base_dir, &item, NULL, small, sizeof small);
    if (r == MANIFEST_ITEM) {
        r = manifest_resolve(&item, &files, "fuzz.jsonl", small, sizeof small);
        if (r == MANIFEST_ITEM) {
            check_tuple(&item);
            manifest_item_clear(&item);
        } else if (r != MANIFEST_BAD) {
            abort();
        }
    } else if (r != MANIFEST_BAD) {
        abort();
    }
    if (r == MANIFEST_BAD) check_located(small, sizeof small);

    manifest_files_clear(&files);
    free(line);
    return 0;
}
