/* cckey cache stats: the folder as a person reads it (as ccache -s), or as
 * one JSON object with the field names the README lists; --zero zeroes
 * the counters (as ccache -z). */
#include "cli.h"
#include "json_out.h"

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

static void traffic_json(cli_json *w, const cckey_remote_counters *c)
{
    cli_json_kint(w, "hits", (long long)c->hits);
    cli_json_kint(w, "misses", (long long)c->misses);
    cli_json_kint(w, "errors", (long long)c->errors);
    cli_json_kint(w, "writes", (long long)c->puts);
    cli_json_kint(w, "bytes_in", (long long)c->bytes_in);
    cli_json_kint(w, "bytes_out", (long long)c->bytes_out);
}

static int remote_json(void *user, const char *remote, const cckey_remote_counters *c)
{
    cli_json *w = user;
    cli_json_object(w);
    traffic_json(w, c);
    cli_json_kint(w, "time_ms", (long long)c->time_ms);
    cli_json_kstr(w, "url", remote);
    cli_json_end(w);
    return 0;
}

static void ratio_or_null(cli_json *w, const char *key, uint64_t a, uint64_t b)
{
    if (b) cli_json_kreal(w, key, (double)a / (double)b);
    else cli_json_knull(w, key);
}

static void stats_json(cli_json *w, const stats *st)
{
    const cckey_store_usage *u = &st->u;
    char when[32];
    cli_json_object(w);
    cli_json_kstr(w, "cache_dir", st->dir);
    cli_json_kint(w, "entries", (long long)u->entries);
    cli_json_kint(w, "variants", (long long)st->builds);
    cli_json_kint(w, "bytes", (long long)u->bytes);
    cli_json_kint(w, "max_bytes", (long long)u->max_bytes);
    ratio_or_null(w, "size_share", u->bytes, u->max_bytes);
    cli_json_kint(w, "max_age_seconds", (long long)u->max_age);
    cli_json_kint(w, "temp_files", (long long)u->temp_files);
    cli_json_kint(w, "temp_bytes", (long long)u->temp_bytes);
    cli_json_kint(w, "hits", (long long)u->hits);
    cli_json_kint(w, "misses", (long long)u->misses);
    ratio_or_null(w, "hit_rate", u->hits, u->hits + u->misses);
    cli_json_kint(w, "plain_bytes", (long long)st->plain);
    cli_json_kreal(w, "compression_ratio", compression_ratio(st));
    cli_json_kstr(w, "zeroed_at", u->zeroed ? utc(when, sizeof when, u->zeroed) : NULL);
    if (u->zeroed) cli_json_kint(w, "seconds_since_zeroed", (long long)(time(NULL) - u->zeroed));
    else cli_json_knull(w, "seconds_since_zeroed");
    cli_json_kint(w, "counter_files_damaged", (long long)u->damaged);
    cli_json_key(w, "remote");
    cli_json_object(w);
    traffic_json(w, &st->remote);
    cli_json_end(w);
    cli_json_key(w, "remotes");
    cli_json_array(w);
    cckey_store_remote_totals(st->s, remote_json, w);
    cli_json_end(w);
    cli_json_end(w);
}

static int print_json(const stats *st, cli_format fmt)
{
    cli_json w;
    cli_json_init(&w, fmt == CLI_JSON ? CLI_JSON_INDENT : CLI_JSON_COMPACT, false);
    stats_json(&w, st);
    int rc = cli_json_put(&w, stdout, "\n");
    cli_json_free(&w);
    if (rc != 0) cli_error("cache stats: out of memory");
    return rc ? CLI_FAIL : CLI_OK;
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
    if (fmt != CLI_TEXT) return print_json(&st, fmt);
    print_text(&st);
    return CLI_OK;
}
