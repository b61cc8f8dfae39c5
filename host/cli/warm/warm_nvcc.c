/* What CUDA's own tools say a source's entry points are, for
 * `cckey scan --exact`: the .entry names of PTX, and nvcc run on a file
 * (nvcc takes host code, which NVRTC refuses). */
#include "warm.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static bool ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

char *warm_ptx_entries(const char *ptx, size_t len, size_t *n_out)
{
    char *out = malloc(len + 1), *w = out;
    if (!out) return NULL;
    const char *end = ptx + len;
    for (const char *p = ptx; (p = memmem(p, (size_t)(end - p), ".entry", 6)); p += 6) {
        /* A directive, not part of a longer word or a comment's text. */
        if (p > ptx && (ident_char(p[-1]) || p[-1] == '.')) continue;
        const char *q = p + 6;
        if (q >= end || (*q != ' ' && *q != '\t')) continue;
        while (q < end && (*q == ' ' || *q == '\t')) q++;
        const char *name = q;
        while (q < end && ident_char(*q)) q++;
        if (q == name) continue;
        memcpy(w, name, (size_t)(q - name));
        w += q - name;
        *w++ = '\n';
    }
    *w = '\0';
    *n_out = (size_t)(w - out);
    return out;
}

bool warm_nvcc_find(char *buf, size_t len)
{
    const char *path = getenv("PATH");
    for (const char *p = path ? path : ""; *p;) {
        size_t n = strcspn(p, ":");
        if (n && (size_t)snprintf(buf, len, "%.*s/nvcc", (int)n, p) < len && access(buf, X_OK) == 0) return true;
        p += n + (p[n] == ':');
    }
    snprintf(buf, len, "/usr/local/cuda/bin/nvcc");
    return access(buf, X_OK) == 0;
}

char *warm_read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, len = 0;
    char *b = malloc(cap + 1);
    for (size_t r; b && (r = fread(b + len, 1, cap - len, f)) > 0;) {
        len += r;
        if (len == cap) {
            char *nb = realloc(b, (cap *= 2) + 1);
            if (!nb) free(b);
            b = nb;
        }
    }
    fclose(f);
    if (b) b[len] = '\0';
    *n = len;
    return b;
}

int warm_nvcc_entries(const char *nvcc, const char *path, const warm_flags *flags, const char *tmpdir,
                       size_t job, warm_build *out)
{
    memset(out, 0, sizeof *out);
    char ptx[4096], err[4096];
    snprintf(ptx, sizeof ptx, "%s/%zu.ptx", tmpdir, job);
    snprintf(err, sizeof err, "%s/%zu.err", tmpdir, job);
    const char **argv = calloc(flags->argc + 8, sizeof *argv);
    if (!argv) {
        snprintf(out->error, sizeof out->error, "out of memory");
        return -1;
    }
    size_t argc = 0;
    argv[argc++] = nvcc;
    argv[argc++] = "-x";   /* .cuh and .hip too */
    argv[argc++] = "cu";
    argv[argc++] = "-ptx";
    for (size_t i = 0; i < flags->argc; i++) argv[argc++] = flags->argv[i];
    argv[argc++] = "-o";
    argv[argc++] = ptx;
    argv[argc++] = path;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int r = posix_spawn(&pid, nvcc, &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    free(argv);
    if (r != 0) {
        snprintf(out->error, sizeof out->error, "cannot run %s: %s", nvcc, strerror(r));
        return -1;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    size_t n = 0;
    out->log = warm_read_file(err, &n);
    unlink(err);
    if (out->log && n == 0) {
        free(out->log);
        out->log = NULL;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        unlink(ptx);
        if (WIFEXITED(status)) snprintf(out->error, sizeof out->error, "nvcc exited with status %d", WEXITSTATUS(status));
        else snprintf(out->error, sizeof out->error, "nvcc was killed by signal %d", WTERMSIG(status));
        return -1;
    }
    char *text = warm_read_file(ptx, &n);
    unlink(ptx);
    if (!text) {
        snprintf(out->error, sizeof out->error, "nvcc wrote no PTX");
        return -1;
    }
    out->binary = warm_ptx_entries(text, n, &out->binary_len);
    free(text);
    if (!out->binary) {
        snprintf(out->error, sizeof out->error, "out of memory");
        return -1;
    }
    return 0;
}
