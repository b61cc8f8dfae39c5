/* libcurl, opened at run time (core/dl_table.h) as the GPU drivers are.
 *
 * Why: linked, libcurl and what it pulls in (TLS, Kerberos, LDAP, ...)
 * cost every process that loads libcckey some 6 ms at start-up, measured
 * against an empty program on the 2-core machine, and most of them (a
 * runtime looking keys up, `cckey batch`) never speak HTTP. Opened here, it
 * is mapped only when an HTTP remote is parsed or opened.
 *
 * The table holds the functions http.c and url.c call, typed from curl's
 * own declarations (curl/curl.h at build time), so a mismatch is a compile
 * error rather than a wrong call. */
#ifndef CCKEY_CURL_API_H
#define CCKEY_CURL_API_H

#include <curl/curl.h>

typedef struct cckey_curl_api {
    __typeof__(&curl_global_init) global_init;
    __typeof__(&curl_easy_init) easy_init;
    __typeof__(&curl_easy_setopt) easy_setopt;
    __typeof__(&curl_easy_perform) easy_perform;
    __typeof__(&curl_easy_getinfo) easy_getinfo;
    __typeof__(&curl_easy_reset) easy_reset;
    __typeof__(&curl_easy_cleanup) easy_cleanup;
    __typeof__(&curl_easy_strerror) easy_strerror;
    __typeof__(&curl_slist_append) slist_append;
    __typeof__(&curl_slist_free_all) slist_free_all;
    __typeof__(&curl_url) url;
    __typeof__(&curl_url_set) url_set;
    __typeof__(&curl_url_get) url_get;
    __typeof__(&curl_url_cleanup) url_cleanup;
    __typeof__(&curl_url_strerror) url_strerror;
    __typeof__(&curl_free) free_part;
} cckey_curl_api;

/* The table, opening libcurl.so.4 and running curl_global_init first (once
 * per process, thread-safe); NULL with the reason in *why (when why is not
 * NULL): "libcurl is not loadable: <dlerror>", or the function it lacks. */
const cckey_curl_api *cckey_curl_load(const char **why);

#endif
