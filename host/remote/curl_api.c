/* Loading libcurl at run time; see curl_api.h for why. */
#include "curl_api.h"
#include "../core/dl_table.h"

#include <stddef.h>
#include <stdio.h>

static cckey_curl_api api;
static cckey_dl_driver driver = CCKEY_DL_DRIVER_INIT("libcurl has no such function");

#define REQ(f) {"curl_" #f, NULL, offsetof(cckey_curl_api, f), false}

static const cckey_dl_entry entries[] = {
    REQ(global_init), REQ(easy_init), REQ(easy_setopt), REQ(easy_perform), REQ(easy_getinfo),
    REQ(easy_reset), REQ(easy_cleanup), REQ(easy_strerror), REQ(slist_append), REQ(slist_free_all),
    REQ(url), REQ(url_set), REQ(url_get), REQ(url_cleanup), REQ(url_strerror),
    {"curl_free", NULL, offsetof(cckey_curl_api, free_part), false},
};

/* The SONAME Debian's libcurl4 (and every distribution since curl 7.16)
 * installs. */
#define DEFAULT_LIBRARY "libcurl.so.4"

static void load(void)
{
    if (!cckey_dl_bind(&driver.path, DEFAULT_LIBRARY, entries, sizeof entries / sizeof *entries, &api,
                       "libcurl is not loadable", "libcurl older than 7.80?", driver.reason, sizeof driver.reason))
        return;
    /* Before any other curl call and before threads use it: curl's rule. */
    if (api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(driver.reason, sizeof driver.reason, "curl_global_init failed");
        return;
    }
    driver.loaded = &api;
}

const cckey_curl_api *cckey_curl_load(const char **why) { return cckey_dl_driver_load(&driver, load, why); }
