/* cckey cache export / import: bundles of entries (cckey_store_export). */
#include "cache_bundle.h"
#include "manifest/manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The distinct keys of a manifest; an exit status on failure. */
static int manifest_keys(const char *path, char (**keys)[CCKEY_KEY_LEN + 1], size_t *n)
{
    manifest m;
    if (manifest_open(&m, path) != 0) return CLI_USAGE;
    manifest_files files = {0};
    manifest_item item;
    char err[1024];
    size_t cap = 0;
    int rc = CLI_OK, r;
    *keys = NULL, *n = 0;
    while ((r = manifest_next(&m, &item, &files, err, sizeof err)) == MANIFEST_ITEM) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 256;
            void *k = realloc(*keys, cap * sizeof **keys);
            if (!k) {
                manifest_item_clear(&item);
                rc = CLI_FAIL;
                cli_error("cache export: out of memory");
                break;
            }
            *keys = k;
        }
        const cckey_tuple *t = &item.tuple;
        cckey_status st = cckey_make_key((*keys)[*n], t->device, t->name, t->source, t->options, t->n_options);
        manifest_item_clear(&item);
        if (st != CCKEY_OK) {
            cli_error("cache export: %s:%zu: %s", m.label, m.line, cckey_last_error());
            rc = CLI_FAIL;
            break;
        }
        (*n)++;
        /* Sources mapped so far are not needed once their keys are made. */
        manifest_files_clear(&files);
    }
    if (rc == CLI_OK && r != MANIFEST_EOF) {
        fprintf(stderr, "%s\n", err);
        rc = r == MANIFEST_IO ? CLI_FAIL : CLI_USAGE;
    }
    manifest_files_clear(&files);
    manifest_close(&m);
    return rc;
}

static int by_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* A bundle named *.zst or *.tzst (foo.tar.zst) is zstd-compressed. */
static bool bundle_zstd(const char *output)
{
    size_t n = output ? strlen(output) : 0;
    return (n > 4 && strcmp(output + n - 4, ".zst") == 0) || (n > 5 && strcmp(output + n - 5, ".tzst") == 0);
}

int cli_cache_export(cckey_store *s, const char *manifest_path, const char *output)
{
    char(*keys)[CCKEY_KEY_LEN + 1] = NULL;
    const char **list = NULL;
    size_t n = 0, distinct = 0;
    int rc = CLI_OK;
    if (manifest_path) {
        if ((rc = manifest_keys(manifest_path, &keys, &n)) != CLI_OK) return rc;
        list = malloc((n ? n : 1) * sizeof *list);
        if (!list) {
            free(keys);
            cli_error("cache export: out of memory");
            return CLI_FAIL;
        }
        for (size_t i = 0; i < n; i++) list[i] = keys[i];
        qsort(list, n, sizeof *list, by_str);
        for (size_t i = 0; i < n; i++)
            if (!distinct || strcmp(list[i], list[distinct - 1]) != 0) list[distinct++] = list[i];
    }
    cli_output out;
    if (cli_output_open(&out, output) != 0) {
        free(list), free(keys);
        return CLI_FAIL;
    }
    fflush(out.f);
    uint64_t exported = 0, missing = 0;
    unsigned flags = bundle_zstd(output) ? CCKEY_EXPORT_ZSTD : 0;
    cckey_status st = cckey_store_export_ex(s, manifest_path ? list : NULL, distinct, fileno(out.f), flags, &exported,
                                            &missing);
    if (st != CCKEY_OK) {
        cli_error("cache export: %s", cckey_last_error());
        cli_output_abort(&out);
        rc = CLI_FAIL;
    } else if (cli_output_commit(&out) != 0) {
        rc = CLI_FAIL;
    } else {
        fprintf(stderr, "cache export: %llu entr%s\n", (unsigned long long)exported, exported == 1 ? "y" : "ies");
        if (missing) {
            cli_warn("cache export: %llu of the manifest's %zu keys have no entry here (not in the bundle)",
                     (unsigned long long)missing, distinct);
            rc = CLI_FAIL;
        }
    }
    free(list), free(keys);
    return rc;
}

int cli_cache_import(cckey_store *s, const char *input, bool to_remotes, bool sign_unsigned)
{
    bool std_in = strcmp(input, "-") == 0;
    int fd = std_in ? STDIN_FILENO : open(input, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        cli_error("cache import: %s: %s", input, strerror(errno));
        return CLI_FAIL;
    }
    cckey_import_report r;
    int flags = to_remotes ? CCKEY_IMPORT_TO_REMOTES | (sign_unsigned ? CCKEY_IMPORT_SIGN_UNSIGNED : 0) : 0;
    cckey_status st = cckey_store_import(s, fd, flags, &r);
    if (!std_in) close(fd);
    printf("imported: %llu\nrefused (damaged): %llu\n", (unsigned long long)r.imported,
           (unsigned long long)(r.refused - r.unsafe));
    if (r.unsafe)
        printf("refused (absolute path, \"..\", link or device): %llu\n", (unsigned long long)r.unsafe);
    if (r.foreign) printf("refused (signed, but not with this secret): %llu\n", (unsigned long long)r.foreign);
    if (r.unsigned_held) {
        printf("not sent to signing remotes (unsigned): %llu\n", (unsigned long long)r.unsigned_held);
        cli_warn("cache import: %llu unsigned entr%s kept here but not sent to the remotes that sign; "
                 "--sign-unsigned signs them with your secret (you vouch for them)",
                 (unsigned long long)r.unsigned_held, r.unsigned_held == 1 ? "y was" : "ies were");
    }
    if (st != CCKEY_OK) {
        cli_error("cache import: %s: %s", std_in ? "<stdin>" : input, cckey_last_error());
        return CLI_FAIL;
    }
    return r.refused || r.foreign || r.unsigned_held ? CLI_FAIL : CLI_OK;
}
