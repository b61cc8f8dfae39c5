/* cckey cache list, put and trim: the ergonomics around a cache folder
 * that a user of ccache expects. */
#include "cli.h"
#include "json_out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* An existing store: reading or trimming must not create one. */
static int open_existing(const char *what, const char *dir, cckey_store **s)
{
    struct stat st;
    if (!dir) {
        cli_error("cache %s: no cache folder: give --cache-dir DIR (or set CCKEY_CACHE_DIR or HOME)", what);
        return CLI_USAGE;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        cli_error("cache %s: %s: %s", what, dir, errno == ENOENT ? "no cache folder here" : "not a folder");
        return CLI_FAIL;
    }
    if (cckey_store_open(s, dir, 0) != CCKEY_OK) {
        cli_error("cache %s: %s", what, cckey_last_error());
        return CLI_FAIL;
    }
    return CLI_OK;
}

typedef struct list_out {
    cli_format fmt;
    bool failed;   /* a row could not be written (out of memory) */
    cli_json_rows rows;
} list_out;

static int list_one(void *user, const cckey_store_entry_info *e)
{
    list_out *o = user;
    char when[32];
    time_t t = (time_t)e->used;
    struct tm tm;
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
    if (o->fmt == CLI_TEXT)
        printf("%s %llu %s %u\n", e->key, (unsigned long long)e->bytes, when, e->variants);
    if (o->fmt == CLI_TEXT) return 0;
    cli_json *w = &o->rows.w;
    cli_json_object(w);
    cli_json_kstr(w, "key", e->key);
    cli_json_kint(w, "bytes", (long long)e->bytes);
    cli_json_kstr(w, "last_used", when);
    cli_json_kint(w, "variants", e->variants);
    cli_json_end(w);
    o->failed = cli_json_row_put(&o->rows) != 0;
    return o->failed ? -1 : 0;
}

static int do_list(cckey_store *s, cli_format fmt)
{
    list_out o = {fmt};
    if (fmt != CLI_TEXT) cli_json_rows_start(&o.rows, stdout, fmt == CLI_JSON, CLI_JSON_SPACED, false);
    bool ok = cckey_store_list_info(s, list_one, &o) == CCKEY_OK && !o.failed;
    if (fmt != CLI_TEXT) cli_json_rows_end(&o.rows, ok);
    if (!ok) cli_error("cache list: %s", o.failed ? "out of memory" : cckey_last_error());
    return ok ? CLI_OK : CLI_FAIL;
}

static int do_put(cckey_store *s, const char *key, const char *file)
{
    cli_file f;
    char why[256];
    if (cli_file_map(file, &f, why, sizeof why) != 0) {
        cli_error("cache put: %s: %s", file, why);
        return CLI_USAGE;
    }
    cckey_status st = cckey_store_put(s, key, f.ptr, f.len);
    cli_file_unmap(&f);
    if (st == CCKEY_ERR_INVALID_ARG) {
        cli_error("cache put: %s", cckey_last_error());
        return CLI_USAGE;
    }
    if (st != CCKEY_OK) {
        cli_error("cache put: %s: %s", cckey_strerror(st), cckey_last_error());
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* trim: the folder's limits, or only the age given. */
static int do_trim(cckey_store *s, const char *older_than)
{
    int64_t age = 0;
    if (older_than && cckey_age_parse(older_than, &age) != CCKEY_OK) {
        cli_error("cache trim: --older-than %s", cckey_last_error());
        return CLI_USAGE;
    }
    uint64_t removed = 0;
    cckey_status st = older_than ? cckey_store_trim_older(s, age, &removed) : cckey_store_trim(s, &removed);
    if (st != CCKEY_OK) {
        cli_error("cache trim: %s", cckey_last_error());
        return st == CCKEY_ERR_INVALID_ARG ? CLI_USAGE : CLI_FAIL;
    }
    printf("removed: %llu\n", (unsigned long long)removed);
    return CLI_OK;
}

int cli_cache_more(const char *what, int n, char **argv, const char *dir, cli_format fmt, const char *older_than)
{
    int want = strcmp(what, "put") == 0 ? 2 : 0;
    if (n != want) {
        cli_error(want ? "cache put: give a KEY and a FILE" : "cache %s: unexpected argument \"%s\"", what, argv[0]);
        return CLI_USAGE;
    }
    cckey_store *s;
    int rc;
    if (strcmp(what, "put") == 0) {
        if (!dir) {
            cli_error("cache put: no cache folder: give --cache-dir DIR (or set CCKEY_CACHE_DIR or HOME)");
            return CLI_USAGE;
        }
        if (cckey_store_open(&s, dir, 0) != CCKEY_OK) {
            cli_error("cache put: %s", cckey_last_error());
            return CLI_FAIL;
        }
        rc = do_put(s, argv[0], argv[1]);
    } else {
        if ((rc = open_existing(what, dir, &s)) != CLI_OK) return rc;
        rc = strcmp(what, "list") == 0 ? do_list(s, fmt) : do_trim(s, older_than);
    }
    cckey_store_close(s);
    if (fflush(stdout) != 0) rc = CLI_FAIL;
    return rc;
}
