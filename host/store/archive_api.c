/* Loading libarchive at run time; see archive_api.h for why. */
#include "archive_api.h"
#include "../core/dl_table.h"

#include <stddef.h>

static cckey_archive_api api;
static cckey_dl_driver driver = CCKEY_DL_DRIVER_INIT("libarchive has no such function");

#define REQ(f) {"archive_" #f, NULL, offsetof(cckey_archive_api, f), false}

static const cckey_dl_entry entries[] = {
    {"archive_errno", NULL, offsetof(cckey_archive_api, error_number), false},
    REQ(error_string), REQ(entry_free), REQ(entry_new), REQ(entry_clear),
    REQ(entry_set_pathname), REQ(entry_set_filetype), REQ(entry_set_perm), REQ(entry_set_size),
    REQ(entry_set_mtime), REQ(entry_pathname), REQ(entry_hardlink), REQ(entry_symlink),
    REQ(entry_filetype), REQ(entry_size), REQ(entry_size_is_set), REQ(write_new),
    REQ(write_free), REQ(write_header), REQ(write_data), REQ(write_close),
    REQ(write_set_format_pax_restricted), REQ(write_add_filter_zstd), REQ(write_set_bytes_in_last_block), REQ(write_open_fd),
    REQ(read_new), REQ(read_free), REQ(read_support_format_tar), REQ(read_support_filter_zstd),
    REQ(read_support_filter_gzip), REQ(read_support_filter_xz), REQ(read_open), REQ(read_next_header),
    REQ(read_data), REQ(set_error), REQ(filter_count),
};

/* The SONAME of libarchive 3 (Debian's libarchive13). */
#define DEFAULT_LIBRARY "libarchive.so.13"

static void load(void)
{
    if (cckey_dl_bind(&driver.path, DEFAULT_LIBRARY, entries, sizeof entries / sizeof *entries, &api,
                      "libarchive is not loadable", "libarchive older than 3.3.3?", driver.reason,
                      sizeof driver.reason))
        driver.loaded = &api;
}

const cckey_archive_api *cckey_archive_load(const char **why) { return cckey_dl_driver_load(&driver, load, why); }
