/* One grammar for every command: option errors in one line with a hint,
 * --format, -q, and option sets written as shell-quoted flags. */
#include "cli.h"

#include <ctype.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

bool cli_quiet = false;

/* "--fromat" -> "--format": the long options one edit away. */
static const char *near_option(const char *word, const struct option *longopts)
{
    const char *names[128];
    size_t n = 0;
    for (const struct option *o = longopts; o->name && n < 128; o++) names[n++] = o->name;
    return cli_suggest(word, names, n);
}

int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts, const struct option *longopts)
{
    char spec[128];
    snprintf(spec, sizeof spec, ":%s", shortopts);   /* ':' tells a missing argument from an unknown option */
    opterr = 0;
    int c = getopt_long(argc, argv, spec, longopts, NULL);
    if (c != ':' && c != '?') return c;
    const char *arg = argv[optind - 1 < argc ? optind - 1 : argc - 1];
    if (c == ':') {
        /* optopt is the option's short letter or its long value: name it as written. */
        const char *shown = arg;
        char letter[3] = {'-', (char)optopt, '\0'};
        if (optopt > 0 && optopt < 256 && strchr(shortopts, optopt) && strncmp(arg, "--", 2) != 0) shown = letter;
        cli_error("%s: option %s needs a value (see 'cckey help %s')", cmd, shown, cmd);
        return '?';
    }
    if (optopt && optopt < 256 && strncmp(arg, "--", 2) != 0) {
        cli_error("%s: unknown option -%c (see 'cckey help %s')", cmd, optopt, cmd);
        return '?';
    }
    /* A long option: unknown, ambiguous, or given a value it does not take. */
    char name[128];
    snprintf(name, sizeof name, "%s", arg + 2);
    name[strcspn(name, "=")] = '\0';
    for (const struct option *o = longopts; o->name; o++)
        if (strcmp(o->name, name) == 0) {
            cli_error("%s: option --%s takes no value (see 'cckey help %s')", cmd, name, cmd);
            return '?';
        }
    const char *guess = near_option(name, longopts);
    if (guess) cli_error("%s: unknown option --%s; did you mean --%s? (see 'cckey help %s')", cmd, name, guess, cmd);
    else cli_error("%s: unknown option %s (see 'cckey help %s')", cmd, arg, cmd);
    return '?';
}

bool cli_format_parse(const char *cmd, const char *value, unsigned allowed, cli_format *out)
{
    static const char *const names[] = {"text", "json", "jsonl"};
    for (int f = 0; f < 3; f++)
        if (strcmp(value, names[f]) == 0 && (allowed & CLI_FMT(f))) {
            *out = (cli_format)f;
            return true;
        }
    char list[64] = "";
    const char *known[3];
    size_t n = 0;
    for (int f = 0; f < 3; f++)
        if (allowed & CLI_FMT(f)) {
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", n ? ", " : "", names[f]);
            known[n++] = names[f];
        }
    const char *guess = cli_suggest(value, known, n);
    if (guess) cli_error("%s: --format takes %s, not \"%s\"; did you mean %s?", cmd, list, value, guess);
    else cli_error("%s: --format takes %s, not \"%s\"", cmd, list, value);
    return false;
}

int cli_split_flags(const char *text, cli_flag_fn fn, void *user, char *why, size_t why_len)
{
    size_t cap = strlen(text) + 1;
    char *word = malloc(cap);
    if (!word) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    const char *p = text;
    int rc = 0;
    for (;;) {
        while (*p == ',' || isspace((unsigned char)*p)) p++;
        if (!*p) break;
        size_t n = 0;
        /* One word: until an unquoted separator. Quotes group and vanish;
         * inside "..." a backslash escapes only " and \, as in sh. */
        while (*p && *p != ',' && !isspace((unsigned char)*p)) {
            if (*p == '\'') {
                const char *end = strchr(p + 1, '\'');
                if (!end) {
                    snprintf(why, why_len, "unterminated ' at byte %zu", (size_t)(p - text) + 1);
                    rc = -1;
                    goto out;
                }
                memcpy(word + n, p + 1, (size_t)(end - p - 1));
                n += (size_t)(end - p - 1);
                p = end + 1;
            } else if (*p == '"') {
                const char *start = p++;
                while (*p && *p != '"') {
                    if (*p == '\\' && (p[1] == '"' || p[1] == '\\')) p++;
                    word[n++] = *p++;
                }
                if (!*p) {
                    snprintf(why, why_len, "unterminated \" at byte %zu", (size_t)(start - text) + 1);
                    rc = -1;
                    goto out;
                }
                p++;
            } else if (*p == '\\' && p[1]) {
                word[n++] = p[1];
                p += 2;
            } else {
                word[n++] = *p++;
            }
        }
        word[n] = '\0';
        if (fn(user, word, n) != 0) {
            snprintf(why, why_len, "out of memory");
            rc = -1;
            goto out;
        }
    }
out:
    free(word);
    return rc;
}
