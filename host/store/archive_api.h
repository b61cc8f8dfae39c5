/* libarchive, opened at run time (core/dl_table.h) as the GPU drivers are.
 *
 * Why: linked, libarchive and what it pulls in (libxml2, ICU, lzma, lz4,
 * bzip2, acl) cost every process that loads libcckey some 3 ms at
 * start-up, measured against an empty program on the 2-core machine, and
 * only bundle export and import use it. Opened here, it is mapped the
 * first time a tar bundle is written or read.
 *
 * The table holds the functions bundle_tar.c calls, typed from libarchive's
 * own declarations (archive.h, archive_entry.h at build time). Its members
 * are the names less "archive_"; archive_errno's is error_number, errno
 * being a macro. */
#ifndef CCKEY_ARCHIVE_API_H
#define CCKEY_ARCHIVE_API_H

#include <archive.h>
#include <archive_entry.h>

typedef struct cckey_archive_api {
    __typeof__(&archive_errno) error_number;
    __typeof__(&archive_error_string) error_string;
    __typeof__(&archive_entry_free) entry_free;
    __typeof__(&archive_entry_new) entry_new;
    __typeof__(&archive_entry_clear) entry_clear;
    __typeof__(&archive_entry_set_pathname) entry_set_pathname;
    __typeof__(&archive_entry_set_filetype) entry_set_filetype;
    __typeof__(&archive_entry_set_perm) entry_set_perm;
    __typeof__(&archive_entry_set_size) entry_set_size;
    __typeof__(&archive_entry_set_mtime) entry_set_mtime;
    __typeof__(&archive_entry_pathname) entry_pathname;
    __typeof__(&archive_entry_hardlink) entry_hardlink;
    __typeof__(&archive_entry_symlink) entry_symlink;
    __typeof__(&archive_entry_filetype) entry_filetype;
    __typeof__(&archive_entry_size) entry_size;
    __typeof__(&archive_entry_size_is_set) entry_size_is_set;
    __typeof__(&archive_write_new) write_new;
    __typeof__(&archive_write_free) write_free;
    __typeof__(&archive_write_header) write_header;
    __typeof__(&archive_write_data) write_data;
    __typeof__(&archive_write_close) write_close;
    __typeof__(&archive_write_set_format_pax_restricted) write_set_format_pax_restricted;
    __typeof__(&archive_write_add_filter_zstd) write_add_filter_zstd;
    __typeof__(&archive_write_set_bytes_in_last_block) write_set_bytes_in_last_block;
    __typeof__(&archive_write_open_fd) write_open_fd;
    __typeof__(&archive_read_new) read_new;
    __typeof__(&archive_read_free) read_free;
    __typeof__(&archive_read_support_format_tar) read_support_format_tar;
    __typeof__(&archive_read_support_filter_zstd) read_support_filter_zstd;
    __typeof__(&archive_read_support_filter_gzip) read_support_filter_gzip;
    __typeof__(&archive_read_support_filter_xz) read_support_filter_xz;
    __typeof__(&archive_read_open) read_open;
    __typeof__(&archive_read_next_header) read_next_header;
    __typeof__(&archive_read_data) read_data;
    __typeof__(&archive_set_error) set_error;
    __typeof__(&archive_filter_count) filter_count;
} cckey_archive_api;

/* The table, opening libarchive.so.13 first (once per process,
 * thread-safe); NULL with the reason in *why (when why is not NULL):
 * "libarchive is not loadable: <dlerror>", or the function it lacks. */
const cckey_archive_api *cckey_archive_load(const char **why);

#endif
