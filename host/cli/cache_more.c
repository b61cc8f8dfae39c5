/* cckey cache list, put, trim and config: the ergonomics around a cache
 * folder that a user of ccache expects. */
#include "cli.h"

#include <errno.h>
#include <jansson.h>
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
    size_t n;
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
    else
        printf("%s{\"key\": \"%s\", \"bytes\": %llu, \"last_used\": \"%s\", \"variants\": %u}%s",
               o->fmt == CLI_JSON ? (o->n ? ",\n  " : "[\n  ") : "", e->key, (unsigned long long)e->bytes, when,
               e->variants, o->fmt == CLI_JSON ? "" : "\n");
    o->n++;
    return 0;
}

static int do_list(cckey_store *s, cli_format fmt)
{
    list_out o = {fmt, 0};
    if (cckey_store_list_info(s, list_one, &o) != CCKEY_OK) {
        cli_error("cache list: %s", cckey_last_error());
        return CLI_FAIL;
    }
    if (fmt == CLI_JSON) fputs(o.n ? "\n]\n" : "[]\n", stdout);
    return CLI_OK;
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

/* DIR/cckey.conf with its max_size line replaced (or removed, value NULL);
 * every other line stays as it was. Written beside it and renamed over it. */
static int write_max_size(const char *dir, const char *value)
{
    char path[4200], tmp[4300];
    snprintf(path, sizeof path, "%s/cckey.conf", dir);
    snprintf(tmp, sizeof tmp, "%s/.tmp-cckey.conf-%ld", dir, (long)getpid());
    FILE *in = fopen(path, "r"), *out = fopen(tmp, "w");
    if (!out) {
        if (in) fclose(in);
        cli_error("cache config: %s: %s", tmp, strerror(errno));
        return CLI_FAIL;
    }
    char line[8192];
    while (in && fgets(line, sizeof line, in)) {
        const char *p = line + strspn(line, " \t");
        if (strncmp(p, "max_size", 8) == 0 && strchr(" \t=", p[8])) continue;
        fputs(line, out);
        if (!strchr(line, '\n')) fputc('\n', out);
    }
    if (in) fclose(in);
    if (value) fprintf(out, "max_size = %s\n", value);
    bool ok = fflush(out) == 0 && fsync(fileno(out)) == 0;
    ok = fclose(out) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        cli_error("cache config: %s: %s", path, strerror(errno));
        unlink(tmp);
        return CLI_FAIL;
    }
    return CLI_OK;
}

static int do_config(int n, char **argv, const char *dir)
{
    if (n > 2 || (n >= 1 && strcmp(argv[0], "max-size") != 0)) {
        if (n >= 1 && strcmp(argv[0], "max-size") != 0) {
            static const char *const known[] = {"max-size"};
            const char *guess = cli_suggest(argv[0], known, 1);
            cli_error("cache config: unknown setting \"%s\"%s%s%s (settings: max-size)", argv[0],
                      guess ? "; did you mean \"" : "", guess ? guess : "", guess ? "\"?" : "");
        } else {
            cli_error("cache config: give max-size and at most one value");
        }
        return CLI_USAGE;
    }
    if (!dir) {
        cli_error("cache config: no cache folder: give --cache-dir DIR (or set CCKEY_CACHE_DIR or HOME)");
        return CLI_USAGE;
    }
    if (n == 2) {
        uint64_t v = 0;
        bool none = strcmp(argv[1], "none") == 0 || strcmp(argv[1], "0") == 0;
        if (!none && cckey_size_parse(argv[1], &v) != CCKEY_OK) {
            cli_error("cache config: max-size wants a size such as 500M or 10G (or none), not \"%s\"", argv[1]);
            return CLI_USAGE;
        }
        /* Setting a limit may create the cache; opening tags it as one. */
        cckey_store *s;
        if (cckey_store_open(&s, dir, 0) != CCKEY_OK) {
            cli_error("cache config: %s", cckey_last_error());
            return CLI_FAIL;
        }
        cckey_store_close(s);
        return write_max_size(dir, none ? NULL : argv[1]);
    }
    cckey_store *s;
    int rc = open_existing("config", dir, &s);
    if (rc != CLI_OK) return rc;
    cckey_store_usage u;
    if (cckey_store_stats(s, &u) == CCKEY_OK) {
        if (u.max_bytes) printf("max-size %llu\n", (unsigned long long)u.max_bytes);
        else printf("max-size none\n");
    }
    cckey_store_close(s);
    return CLI_OK;
}

int cli_cache_more(const char *what, int n, char **argv, const char *dir, cli_format fmt)
{
    if (strcmp(what, "config") == 0) return do_config(n, argv, dir);
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
        if (strcmp(what, "list") == 0) {
            rc = do_list(s, fmt);
        } else {
            uint64_t removed = 0;
            cckey_status st = cckey_store_trim(s, &removed);
            if (st != CCKEY_OK) {
                cli_error("cache trim: %s", cckey_last_error());
                rc = st == CCKEY_ERR_INVALID_ARG ? CLI_USAGE : CLI_FAIL;
            } else {
                printf("removed: %llu\n", (unsigned long long)removed);
            }
        }
    }
    cckey_store_close(s);
    if (fflush(stdout) != 0) rc = CLI_FAIL;
    return rc;
}
