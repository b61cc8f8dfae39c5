/* What both parsers in bench/parse.c report after walking a manifest, so
 * the run can check they saw the same fields before it times them. */
#ifndef CCKEY_BENCH_PARSE_WALK_H
#define CCKEY_BENCH_PARSE_WALK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct parse_walk_sum {
    uint64_t lines, strings, bytes, mix;
} parse_walk_sum;

/* Counts one decoded string: its length and its first and last bytes, so a
 * walker that skipped or mis-decoded a field would disagree. */
static inline void parse_walk_add(parse_walk_sum *s, const char *p, size_t n)
{
    s->strings++;
    s->bytes += n;
    if (n) s->mix += (uint64_t)(unsigned char)p[0] * 31u + (unsigned char)p[n - 1];
}

/* simdjson On-Demand (bench/parse_simdjson.cpp), when it was found. */
typedef struct parse_sj parse_sj;
parse_sj *parse_sj_new(const char *buf, size_t len, int threaded);   /* copies into a padded buffer */
void parse_sj_free(parse_sj *p);
const char *parse_sj_impl(void);   /* the kernel simdjson picked for this CPU */
int parse_sj_walk(parse_sj *p, size_t batch_size, parse_walk_sum *s, char *err, size_t err_len);

#ifdef __cplusplus
}
#endif
#endif
