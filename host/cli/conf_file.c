/* DIR/cckey.conf as lines, and its atomic rewrite with one setting
 * changed and every other line (comments, blank lines, lines this release
 * cannot read) kept as it was. */
#include "cache_config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *trim(char *p)
{
    while (isspace((unsigned char)*p)) p++;
    char *e = p + strlen(p);
    while (e > p && isspace((unsigned char)e[-1])) *--e = '\0';
    return p;
}

/* Split line (its copy in l->text stays whole) into name and value. */
static bool split(conf_line *l)
{
    char *copy = strdup(l->text);
    if (!copy) return false;
    char *p = trim(copy), *eq = strchr(p, '=');
    l->garbage = *p && *p != '#' && !eq;
    if (!*p || *p == '#' || !eq) {
        free(copy);
        return true;
    }
    *eq = '\0';
    l->name = copy;   /* owns the copy: name first, value after it */
    memmove(copy, trim(p), strlen(trim(p)) + 1);
    l->value = trim(eq + 1);
    return true;
}

static bool add_line(conf_file *f, const char *text, size_t len)
{
    conf_line *l = realloc(f->l, (f->n + 1) * sizeof *l);
    if (!l) return false;
    f->l = l;
    l = &f->l[f->n];
    *l = (conf_line){0};
    if (!(l->text = malloc(len + 1))) return false;
    memcpy(l->text, text, len);
    l->text[len] = '\0';
    for (size_t i = 0; i < len; i++)
        if (!l->text[i]) l->text[i] = ' ';   /* a NUL in a damaged file: kept as a blank */
    f->n++;
    return split(l);
}

bool conf_file_read(const char *dir, conf_file *f)
{
    *f = (conf_file){0};
    char path[4200];
    snprintf(path, sizeof path, "%s/cckey.conf", dir);
    FILE *in = fopen(path, "r");
    if (!in) {
        if (errno == ENOENT || errno == ENOTDIR) return true;
        cli_error("cache config: %s: %s", path, strerror(errno));
        return false;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    bool ok = true;
    while (ok && (len = getline(&line, &cap, in)) >= 0) {
        if (len && line[len - 1] == '\n') len--;
        ok = add_line(f, line, (size_t)len);
    }
    free(line);
    fclose(in);
    if (!ok) cli_error("cache config: out of memory");
    return ok;
}

void conf_file_free(conf_file *f)
{
    for (size_t i = 0; i < f->n; i++) free(f->l[i].text), free(f->l[i].name);
    free(f->l);
    *f = (conf_file){0};
}

static bool is(const conf_line *l, const char *key) { return l->name && strcmp(l->name, key) == 0; }

static void put_vals(FILE *out, const char *key, char *const *vals, size_t n)
{
    for (size_t i = 0; i < n; i++) fprintf(out, "%s = %s\n", key, vals[i]);
}

/* The new text into out; false when REMOVE found nothing to remove. */
static bool write_lines(FILE *out, const conf_file *f, const char *key, char *const *vals, size_t n, int mode)
{
    size_t first = f->n, last = f->n;
    for (size_t i = 0; i < f->n; i++)
        if (is(&f->l[i], key)) last = i, first = first == f->n ? i : first;
    bool removed = false;
    for (size_t i = 0; i < f->n; i++) {
        const conf_line *l = &f->l[i];
        bool mine = is(l, key);
        if (mode == CONF_REPLACE && i == first) put_vals(out, key, vals, n);
        if (mode == CONF_REMOVE && mine && strcmp(l->value, vals[0]) == 0) {
            removed = true;
            continue;
        }
        if (!(mode == CONF_REPLACE && mine)) fprintf(out, "%s\n", l->text);
        if (mode == CONF_ADD && i == last) put_vals(out, key, vals, n);
    }
    if (mode != CONF_REMOVE && first == f->n) put_vals(out, key, vals, n);
    return mode != CONF_REMOVE || removed;
}

int conf_file_update(const char *dir, const conf_file *f, const char *key, char *const *vals, size_t n, int mode)
{
    char path[4200], tmp[4300];
    snprintf(path, sizeof path, "%s/cckey.conf", dir);
    snprintf(tmp, sizeof tmp, "%s/.tmp-cckey.conf-%ld", dir, (long)getpid());
    struct stat st;
    mode_t perm = stat(path, &st) == 0 ? st.st_mode & 07777 : 0666;   /* a file kept private stays private */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!out) {
        cli_error("cache config: %s: %s", tmp, strerror(errno));
        if (fd >= 0) close(fd), unlink(tmp);
        return CLI_FAIL;
    }
    if (!write_lines(out, f, key, vals, n, mode)) {
        fclose(out);
        unlink(tmp);
        cli_error("cache config: %s has no %s = %s line", path, key, vals[0]);
        return CLI_USAGE;
    }
    if (stat(path, &st) != 0) perm &= (mode_t)~umask(umask(0));
    bool ok = fchmod(fileno(out), perm) == 0 && fflush(out) == 0 && fsync(fileno(out)) == 0;
    ok = fclose(out) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        cli_error("cache config: %s: %s", path, strerror(errno));
        unlink(tmp);
        return CLI_FAIL;
    }
    return CLI_OK;
}
