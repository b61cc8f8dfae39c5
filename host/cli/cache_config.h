/* cckey cache config: every setting of a cache folder, as ccache -p and -o
 * show and set them (cache_config.c, the file itself in conf_file.c). */
#ifndef CCKEY_CLI_CACHE_CONFIG_H
#define CCKEY_CLI_CACHE_CONFIG_H

#include "cli.h"
#include "remote_opts.h"

/* cache config [SETTING [VALUE...]]: argv holds the n words after
 * "config"; dir the folder, dir_origin where its name came from; r the
 * command line's remote options (shown as the command line's). */
int cli_cache_config(int n, char **argv, const char *dir, const char *dir_origin, cli_format fmt,
                     const cli_remotes *r);

/* One "NAME = VALUE" line of a cckey.conf (conf_file.c). */
typedef struct conf_line {
    char *text;    /* the line as it is, without its newline */
    char *name;    /* the setting's name (trimmed), or NULL: blank, comment or no '=' */
    char *value;   /* its value (trimmed) */
    bool garbage;  /* not blank, not a comment, and no NAME = VALUE */
} conf_line;

typedef struct conf_file {
    conf_line *l;
    size_t n;
} conf_file;

/* DIR/cckey.conf's lines (none when it is not there); false with the
 * error said when it cannot be read. */
bool conf_file_read(const char *dir, conf_file *f);
void conf_file_free(conf_file *f);

enum { CONF_REPLACE, CONF_ADD, CONF_REMOVE };
/* Write DIR/cckey.conf again with setting key's lines changed: REPLACE
 * puts vals where its first line was (none: unset), ADD puts vals after
 * its last line, REMOVE drops its lines whose value is vals[0]. Every
 * other line, comments included, stays as it was. Written beside the file
 * with the file's permissions, synced and renamed over it. CLI_OK, or an
 * exit status with the error said (REMOVE of a value not there: usage). */
int conf_file_update(const char *dir, const conf_file *f, const char *key, char *const *vals, size_t n, int mode);

#endif
