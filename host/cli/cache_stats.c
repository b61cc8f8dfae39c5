/* cckey cache stats: the folder as a person reads it (as ccache -s), or as
 * one JSON object with the field names the README lists; --zero zeroes
 * the counters (as ccache -z). */
#include "cli.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* b in B, KiB, MiB, GiB or TiB. */
static const char *human(char *buf, size_t len, uint64_t b)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    if (b < 1024) {
        snprintf(buf, len, "%llu B", (unsigned long long)b);
        return buf;
    }
    double v = (double)b / 1024;
    int u = 0;
    while (v >= 1024 && u < 3) v /= 1024, u++;
    snprintf(buf, len, "%.1f %s", v, units[u]);
    return buf;
}

/* A span of seconds as "3 d 4 h", "2 h 5 min", "5 min 3 s" or "12 s". */
static const char *span(char *buf, size_t len, int64_t s)
{
    if (s < 0) s = 0;
    if (s >= 86400) snprintf(buf, len, "%lld d %lld h", (long long)(s / 86400), (long long)(s % 86400 / 3600));
    else if (s >= 3600) snprintf(buf, len, "%lld h %lld min", (long long)(s / 3600), (long long)(s % 3600 / 60));
    else if (s >= 60) snprintf(buf, len, "%lld min %lld s", (long long)(s / 60), (long long)(s % 60));
    else snprintf(buf, len, "%lld s", (long long)s);
    return buf;
}

static const char *utc(char *buf, size_t len, int64_t t)
{
    time_t tt = (time_t)t;
    struct tm tm;
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&tt, &tm));
    return buf;
}

/* What stats shows, gathered once. */
typedef struct stats {
    const char *dir;
    cckey_store *s;
    cckey_store_usage u;
    uint64_t builds;                /* the builds the entries hold (their headers) */
    uint64_t plain, disk;           /* the entries' size with payloads uncompressed, and on disk */
    cckey_remote_counters remote;   /* every remote together */
} stats;

static int add_builds(void *user, const cckey_store_entry_info *e)
{
    stats *st = user;
    st->builds += e->variants, st->plain += e->plain_bytes, st->disk += e->bytes;
    return 0;
}

/* Uncompressed size over size on disk (1 when nothing is compressed). */
static double compression_ratio(const stats *st) { return st->disk ? (double)st->plain / (double)st->disk : 1.0; }

static const char *plural(uint64_t n, const char *one, const char *many) { return n == 1 ? one : many; }

static void print_traffic(const char *label, const cckey_remote_counters *c, bool timed)
{
    char in[32], out[32];
    printf("%-18s %llu %s, %llu %s, %llu %s, %llu %s, %s in, %s out", label, (unsigned long long)c->hits,
           plural(c->hits, "hit", "hits"), (unsigned long long)c->misses, plural(c->misses, "miss", "misses"),
           (unsigned long long)c->errors, plural(c->errors, "error", "errors"), (unsigned long long)c->puts,
           plural(c->puts, "write", "writes"), human(in, sizeof in, c->bytes_in), human(out, sizeof out, c->bytes_out));
    if (timed) printf(", %llu ms", (unsigned long long)c->time_ms);
    putchar('\n');
}

static int print_one_remote(void *user, const char *remote, const cckey_remote_counters *c)
{
    (void)user;
    char label[700];
    snprintf(label, sizeof label, "  %s:", remote);
    print_traffic(label, c, true);
    return 0;
}

static void print_size(const stats *st)
{
    char b[32], m[32];
    printf("%-18s %s", "size:", human(b, sizeof b, st->u.bytes));
    if (st->u.max_bytes)
        printf(" of %s (%.1f%% of the limit)\n", human(m, sizeof m, st->u.max_bytes),
               100.0 * (double)st->u.bytes / (double)st->u.max_bytes);
    else
        printf(" (no size limit)\n");
}

static void print_counts(const stats *st)
{
    uint64_t h = st->u.hits, m = st->u.misses, looked = h + m;
    printf("%-18s %llu %s, %llu %s", "local:", (unsigned long long)h, plural(h, "hit", "hits"), (unsigned long long)m,
           plural(m, "miss", "misses"));
    if (looked) printf(", %.1f%% hit rate", 100.0 * (double)h / (double)looked);
    putchar('\n');
    const cckey_remote_counters *r = &st->remote;
    if (!r->hits && !r->misses && !r->errors && !r->puts) return;
    print_traffic("remotes (all):", r, false);
    cckey_store_remote_totals(st->s, print_one_remote, NULL);
    if (looked) printf("%-18s %.1f%% (local or remote hits of every look-up)\n", "hit rate:",
                       100.0 * (double)(h + r->hits) / (double)looked);
}

static void print_text(const stats *st)
{
    char a[64], b[64];
    printf("%-18s %s\n", "cache folder:", st->dir);
    printf("%-18s %llu (%llu %s)\n", "entries:", (unsigned long long)st->u.entries, (unsigned long long)st->builds,
           plural(st->builds, "build", "builds"));
    print_size(st);
    printf("%-18s %.2f (%llu bytes uncompressed)\n", "compression ratio:", compression_ratio(st),
           (unsigned long long)st->plain);
    if (st->u.max_age) printf("%-18s %s\n", "max age:", span(a, sizeof a, st->u.max_age));
    printf("%-18s %llu (%s)\n", "temporary files:", (unsigned long long)st->u.temp_files,
           human(a, sizeof a, st->u.temp_bytes));
    print_counts(st);
    if (st->u.zeroed)
        printf("%-18s %s ago (%s)\n", "zeroed:", span(a, sizeof a, (int64_t)time(NULL) - st->u.zeroed),
               utc(b, sizeof b, st->u.zeroed));
    else
        printf("%-18s never\n", "zeroed:");
}

static json_t *traffic_json(const cckey_remote_counters *c)
{
    return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "hits", (json_int_t)c->hits, "misses", (json_int_t)c->misses,
                     "errors", (json_int_t)c->errors, "writes", (json_int_t)c->puts, "bytes_in",
                     (json_int_t)c->bytes_in, "bytes_out", (json_int_t)c->bytes_out);
}

static int remote_json(void *user, const char *remote, const cckey_remote_counters *c)
{
    json_t *o = traffic_json(c);
    json_object_set_new(o, "time_ms", json_integer((json_int_t)c->time_ms));
    json_object_set_new(o, "url", json_string(remote));
    json_array_append_new(user, o);
    return 0;
}

static json_t *ratio_or_null(uint64_t a, uint64_t b) { return b ? json_real((double)a / (double)b) : json_null(); }

static json_t *stats_json(const stats *st)
{
    const cckey_store_usage *u = &st->u;
    char when[32];
    json_t *j = json_pack("{s:s,s:I,s:I,s:I,s:I,s:o,s:I,s:I,s:I,s:I,s:I,s:o}", "cache_dir", st->dir, "entries",
                          (json_int_t)u->entries, "variants", (json_int_t)st->builds, "bytes", (json_int_t)u->bytes,
                          "max_bytes", (json_int_t)u->max_bytes, "size_share", ratio_or_null(u->bytes, u->max_bytes),
                          "max_age_seconds", (json_int_t)u->max_age, "temp_files", (json_int_t)u->temp_files,
                          "temp_bytes", (json_int_t)u->temp_bytes, "hits", (json_int_t)u->hits, "misses",
                          (json_int_t)u->misses, "hit_rate", ratio_or_null(u->hits, u->hits + u->misses));
    if (!j) return NULL;
    json_object_set_new(j, "plain_bytes", json_integer((json_int_t)st->plain));
    json_object_set_new(j, "compression_ratio", json_real(compression_ratio(st)));
    json_object_set_new(j, "zeroed_at", u->zeroed ? json_string(utc(when, sizeof when, u->zeroed)) : json_null());
    json_object_set_new(j, "seconds_since_zeroed",
                        u->zeroed ? json_integer((json_int_t)(time(NULL) - u->zeroed)) : json_null());
    json_object_set_new(j, "counter_files_damaged", json_integer((json_int_t)u->damaged));
    json_object_set_new(j, "remote", traffic_json(&st->remote));
    json_t *each = json_array();
    cckey_store_remote_totals(st->s, remote_json, each);
    json_object_set_new(j, "remotes", each);
    return j;
}

static void print_json(const stats *st, cli_format fmt)
{
    json_t *j = stats_json(st);
    char *txt = j ? json_dumps(j, (fmt == CLI_JSON ? JSON_INDENT(2) : JSON_COMPACT) | JSON_PRESERVE_ORDER) : NULL;
    if (txt) puts(txt);
    free(txt);
    json_decref(j);
}

int cli_cache_stats(cckey_store *s, const char *dir, cli_format fmt, bool zero)
{
    if (zero) {
        if (cckey_store_zero_counters(s) != CCKEY_OK) {
            cli_error("cache stats --zero: %s", cckey_last_error());
            return CLI_FAIL;
        }
        printf("counters zeroed: %s\n", dir);
        return CLI_OK;
    }
    stats st = {.dir = dir, .s = s};
    if (cckey_store_stats(s, &st.u) != CCKEY_OK || cckey_store_remote_counters(s, 0, &st.remote) != CCKEY_OK) {
        cli_error("cache stats: %s", cckey_last_error());
        return CLI_FAIL;
    }
    cckey_store_list_info(s, add_builds, &st);
    if (st.u.damaged)
        cli_warn("cache stats: %s/stats: %u damaged counter file%s: counted as far as readable; the next writer "
                 "rewrites %s", dir, st.u.damaged, st.u.damaged == 1 ? "" : "s", st.u.damaged == 1 ? "it" : "them");
    if (fmt == CLI_TEXT) print_text(&st);
    else print_json(&st, fmt);
    return CLI_OK;
}
