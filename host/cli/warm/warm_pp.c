/* The real preprocessor, for the builds whose includes a text scan cannot
 * resolve: `clang -E -dI` on the source with the build's flags prints each
 * include directive it processed with its macros expanded, and a line
 * marker for each file it entered. A header clang lacks but the compiler
 * has built in (NVRTC's own) is given to it as an empty file, after every
 * real folder, and then is nobody's dependency. */
#include "warm_deps.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define PP_SECONDS 300   /* a preprocessor still running after this is stopped */
#define PP_STUBS 32      /* missing headers given as empty files, at most */

/* Run argv with standard input, output and error from and to files; its
 * exit status, or -1 with why (it could not start, timed out, crashed). */
static int spawn_wait(const char *const *argv, const char *in, const char *out, const char *err, char *why,
                      size_t why_len)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, in ? in : "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    int r = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (r != 0) {
        snprintf(why, why_len, "cannot run the preprocessor %s: %s", argv[0], strerror(r));
        return -1;
    }
    int status = 0;
    long waited_us = 0, step = 200;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR)) break;
        if (waited_us > PP_SECONDS * 1000000L) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
            snprintf(why, why_len, "the preprocessor %s ran for more than %d s and was stopped", argv[0], PP_SECONDS);
            return -1;
        }
        struct timespec ts = {0, step * 1000};
        nanosleep(&ts, NULL);
        waited_us += step;
        if (step < 10000) step *= 2;
    }
    if (!WIFEXITED(status)) {
        snprintf(why, why_len, "the preprocessor %s was killed by signal %d", argv[0], WTERMSIG(status));
        return -1;
    }
    return WEXITSTATUS(status);
}

/* The private folder and clang's own headers folder, made and asked once. */
static int prepare(warm_deps_cfg *cfg, char *why, size_t why_len)
{
    pthread_mutex_lock(&cfg->lock);
    int rc = 0;
    if (!cfg->tmp[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(cfg->tmp, sizeof cfg->tmp, "%s/cckey-pp-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(cfg->tmp)) {
            snprintf(why, why_len, "%s: %s", cfg->tmp, strerror(errno));
            cfg->tmp[0] = '\0';
            rc = -1;
        } else {
            char out[4200], err[4200];
            snprintf(out, sizeof out, "%s/resource", cfg->tmp);
            snprintf(err, sizeof err, "%s/resource.err", cfg->tmp);
            const char *argv[] = {cfg->pp, "-print-resource-dir", NULL};
            size_t n = 0;
            char *dir = spawn_wait(argv, NULL, out, err, why, why_len) == 0 ? warm_read_file(out, &n) : NULL;
            if (dir) dir[strcspn(dir, "\n")] = '\0';
            snprintf(cfg->resource, sizeof cfg->resource, "%s", dir && *dir ? dir : "/nonexistent-resource-dir");
            free(dir);
            unlink(out), unlink(err);
        }
    }
    pthread_mutex_unlock(&cfg->lock);
    return rc;
}

/* "fatal error: 'NAME' file not found" in err: NAME, when it is a relative
 * name that can be given as an empty file under stubs. */
static bool missing_header(const char *err, char *name, size_t len)
{
    const char *p = strstr(err, "fatal error: '");
    if (!p) return false;
    p += strlen("fatal error: '");
    const char *q = strstr(p, "' file not found");
    if (!q || q == p || (size_t)(q - p) >= len || memchr(p, '\n', (size_t)(q - p))) return false;
    snprintf(name, len, "%.*s", (int)(q - p), p);
    return name[0] != '/' && !strstr(name, "..");
}

/* An empty file at stubs/name, its folders made. */
static bool make_stub(const char *stubs, const char *name)
{
    char path[8400];
    snprintf(path, sizeof path, "%s/%s", stubs, name);
    for (char *s = path + strlen(stubs) + 1; (s = strchr(s, '/')); s++) {
        *s = '\0';
        mkdir(path, 0700);
        *s = '/';
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    close(fd);
    return true;
}

/* The first error line of the preprocessor's messages, "<stdin>" named. */
static void first_error(const char *err, const char *name, char *why, size_t why_len)
{
    const char *line = strstr(err, "error:");
    while (line && line > err && line[-1] != '\n') line--;
    if (!line) line = err;
    size_t n = strcspn(line, "\n");
    const char *at = strstr(line, "<stdin>");
    if (at && (size_t)(at - line) < n)
        snprintf(why, why_len, "the preprocessor failed: %.*s%s%.*s", (int)(at - line), line, name,
                 (int)(n - (size_t)(at - line) - 7), at + 7);
    else
        snprintf(why, why_len, "the preprocessor failed: %.*s", (int)n, line);
}

/* A line marker's file name, unescaped in place; NULL when not a marker. */
static char *marker_file(char *line, bool *entered)
{
    char *p = line + 1;
    while (*p == ' ') p++;
    if (*p < '0' || *p > '9') return NULL;
    while (*p >= '0' && *p <= '9') p++;
    if (p[0] != ' ' || p[1] != '"') return NULL;
    char *name = p + 2, *w = name, *r = name;
    for (; *r && *r != '"'; r++) {
        if (*r == '\\' && r[1]) r++;
        *w++ = *r;
    }
    if (*r != '"') return NULL;
    *entered = strncmp(r + 1, " 1", 2) == 0 && (r[3] == '\0' || r[3] == ' ');
    *w = '\0';
    return name;
}

/* An include directive as -dI prints it: `#include "n" /`*...; in place. */
static bool directive(char *line, cckey_include *in)
{
    static const struct {
        const char *word;
        int next;
    } words[] = {{"#include ", 0}, {"#include_next ", 1}, {"#import ", 0}};
    for (size_t k = 0; k < 3; k++) {
        size_t n = strlen(words[k].word);
        if (strncmp(line, words[k].word, n) != 0) continue;
        char *p = line + n, close = *p == '<' ? '>' : '"';
        if (*p != '<' && *p != '"') return false;
        char *end = strchr(p + 1, close);
        if (!end || end == p + 1) return false;
        *end = '\0';
        *in = (cckey_include){NULL, p + 1, close == '>', words[k].next};
        return true;
    }
    return false;
}

static bool pseudo(const char *file) { return file[0] == '<'; }

static bool under(const char *file, const char *dir)
{
    size_t n = strlen(dir);
    return n && strncmp(file, dir, n) == 0 && file[n] == '/';
}

/* Whether the preprocessor's file is a build's dependency at all: not its
 * own headers, not NVRTC's toolkit (its version record covers those; found
 * only through the build's own -I), not a stub. */
static bool ours(const warm_deps_cfg *cfg, const char *file)
{
    const char *toolkit[2];
    for (size_t i = 0, n = warm_nvrtc_toolkit_include(toolkit, 2); i < n; i++)
        if (under(file, toolkit[i])) return false;
    return !pseudo(file) && !under(file, cfg->resource) && !under(file, cfg->tmp);
}

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap) return 0;
    size_t c = *cap ? *cap * 2 : 64;
    void *q = realloc(*p, c * size);
    if (!q) return -1;
    *p = q, *cap = c;
    return 0;
}

/* Parse -dI output held in r->text. */
static int parse(const warm_deps_cfg *cfg, warm_pp_result *r)
{
    size_t cap_inc = 0, cap_read = 0;
    const char *current = "<stdin>";
    for (char *line = r->text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        bool entered = false;
        cckey_include in;
        char *file = line[0] == '#' ? marker_file(line, &entered) : NULL;
        if (file) {
            current = file;
            bool listed = false;
            for (size_t i = 0; i < r->n_read && !listed; i++) listed = strcmp(r->read[i], file) == 0;
            if (entered && !listed && ours(cfg, file)) {
                if (grow((void **)&r->read, &cap_read, r->n_read, sizeof *r->read) != 0) return -1;
                r->read[r->n_read++] = file;
            }
        } else if (line[0] == '#' && (pseudo(current) || ours(cfg, current)) && directive(line, &in)) {
            /* The compiler's own headers' includes are its own too. */
            in.from = pseudo(current) ? NULL : current;
            if (grow((void **)&r->inc, &cap_inc, r->n_inc, sizeof *r->inc) != 0) return -1;
            r->inc[r->n_inc++] = in;
        }
        line = nl ? nl + 1 : NULL;
    }
    return 0;
}

/* One run, with the stub folder (NULL: none) after every real folder. */
static int run_once(const warm_pp_argv *a, const char *stubs, const char *files[3], char *why, size_t why_len)
{
    const char **argv = calloc(a->argc + 3, sizeof *argv);
    if (!argv) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i + 1 < a->argc; i++) argv[n++] = a->argv[i];
    if (stubs) argv[n++] = "-idirafter", argv[n++] = stubs;
    argv[n++] = a->argv[a->argc - 1];   /* the input, "-" */
    int rc = spawn_wait(argv, files[0], files[1], files[2], why, why_len);
    free(argv);
    return rc;
}

/* The next name of a make rule's prerequisites at *p (spaces escaped as
 * "\\ ", lines joined by "\\" newline), unescaped into buf; false at the end. */
static bool next_name(const char **p, char *buf, size_t len)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\n' || (*s == '\\' && s[1] == '\n')) s += *s == '\\' ? 2 : 1;
    if (!*s) return false;
    size_t n = 0;
    for (; *s && *s != ' ' && *s != '\n'; s++) {
        if (*s == '\\' && s[1] == '\n') break;
        if (*s == '\\' && (s[1] == ' ' || s[1] == '#')) s++;
        else if (*s == '$' && s[1] == '$') s++;
        if (n + 1 < len) buf[n++] = *s;
    }
    buf[n] = '\0';
    *p = s;
    return true;
}

/* Every header clang cannot find, at once: `-M -MG` lists each file read
 * and, as written, each one missing; every missing one becomes a stub.
 * Whether any did. */
static bool stub_all_missing(const warm_pp_argv *a, const char *stubs, const char *files[3])
{
    const char **argv = calloc(a->argc + 4, sizeof *argv);
    if (!argv) return false;
    size_t n = 0;
    argv[n++] = a->argv[0];
    argv[n++] = "-M", argv[n++] = "-MG", argv[n++] = "-MT", argv[n++] = "cckey-deps";
    for (size_t i = 3; i < a->argc; i++) argv[n++] = a->argv[i];   /* not -E -dI */
    char why[64];
    int rc = spawn_wait(argv, files[0], files[1], files[2], why, sizeof why);
    free(argv);
    size_t len = 0;
    char *rule = rc == 0 ? warm_read_file(files[1], &len) : NULL, name[1024];
    const char *p = rule ? strstr(rule, "cckey-deps:") : NULL;
    bool made = false;
    struct stat st;
    for (p = p ? p + 11 : NULL; p && next_name(&p, name, sizeof name);)
        if (strcmp(name, "-") != 0 && stat(name, &st) != 0 && name[0] != '/' && !strstr(name, ".."))
            made |= (made || mkdir(stubs, 0700) == 0 || errno == EEXIST) && make_stub(stubs, name);
    free(rule);
    return made;
}

int warm_pp_run(warm_deps_cfg *cfg, const warm_pp_argv *a, const char *src, size_t len, const char *name,
                warm_pp_result *out, char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    if (prepare(cfg, why, why_len) != 0) return -1;
    unsigned job = atomic_fetch_add(&cfg->serial, 1);
    char in[4200], o[4200], e[4200], stubs[4200];
    snprintf(in, sizeof in, "%s/%u.in", cfg->tmp, job);
    snprintf(o, sizeof o, "%s/%u.out", cfg->tmp, job);
    snprintf(e, sizeof e, "%s/%u.err", cfg->tmp, job);
    snprintf(stubs, sizeof stubs, "%s/%u.stubs", cfg->tmp, job);
    const char *files[3] = {in, o, e};
    FILE *f = fopen(in, "wb");
    bool wrote = f && fwrite(src, 1, len, f) == len;
    if (f && fclose(f) != 0) wrote = false;
    int rc = wrote ? 1 : -1;
    if (!wrote) snprintf(why, why_len, "%s: %s", in, strerror(errno));
    /* CUDA sources include NVRTC's own headers (cuda_runtime.h and the
     * like), which clang lacks: list them all first rather than fail once. */
    bool have_stubs = rc > 0 && a->cuda && stub_all_missing(a, stubs, files);
    for (int tries = 0; rc > 0 && tries <= PP_STUBS; tries++) {
        rc = run_once(a, have_stubs ? stubs : NULL, files, why, why_len);
        if (rc <= 0) break;
        size_t n = 0;
        char *err = warm_read_file(e, &n), header[1024];
        bool missing = err && tries < PP_STUBS && missing_header(err, header, sizeof header);
        /* The first time, every missing header at once; then one by one. */
        bool retry = missing && ((!have_stubs && stub_all_missing(a, stubs, files)) ||
                                 ((have_stubs || mkdir(stubs, 0700) == 0 || errno == EEXIST) &&
                                  make_stub(stubs, header)));
        have_stubs |= retry;
        if (!retry) first_error(err ? err : "", name, why, why_len), rc = -1;
        free(err);
    }
    size_t n = 0;
    if (rc == 0 && !(out->text = warm_read_file(o, &n)))
        snprintf(why, why_len, "reading the preprocessor's output failed"), rc = -1;
    if (rc == 0 && parse(cfg, out) != 0) snprintf(why, why_len, "out of memory"), rc = -1;
    unlink(in), unlink(o), unlink(e);
    if (have_stubs) warm_remove_tree(stubs);
    if (rc != 0) warm_pp_result_free(out);
    return rc == 0 ? 0 : -1;
}

void warm_pp_result_free(warm_pp_result *r)
{
    free(r->inc), free(r->read), free(r->text);
    memset(r, 0, sizeof *r);
}
