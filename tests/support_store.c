/* Helpers of support.h that call the store: they need the library, so they
 * live apart from the oracles (an archive member is linked only when used). */
#include "support.h"

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int cckey_test_look(const char *dir, const char *present, const char *absent, int hits, int misses)
{
    cckey_store *c;
    if (cckey_store_open(&c, dir, 0) != CCKEY_OK) return 1;
    for (int i = 0; i < hits + misses; i++) {
        void *buf;
        size_t len;
        cckey_status st = cckey_store_get(c, i < hits ? present : absent, &buf, &len);
        if (st != (i < hits ? CCKEY_OK : CCKEY_ERR_NOT_FOUND)) return 2;
        if (st == CCKEY_OK) cckey_store_free_buffer(buf);
    }
    cckey_store_close(c);
    return 0;
}

pid_t cckey_test_spawn_look(const char *dir, const char *present, const char *absent, int hits, int misses)
{
    fflush(NULL);   /* nothing buffered is written twice */
    pid_t pid = fork();
    if (pid == 0) _exit(cckey_test_look(dir, present, absent, hits, misses));
    return pid;
}

bool cckey_test_reap(int n)
{
    bool ok = true;
    for (int k = 0; k < n; k++) {
        int status;
        if (wait(&status) == -1) return false;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "a child failed: status %d\n", status);
            ok = false;
        }
    }
    return ok;
}

cckey_store *cckey_test_open_sound(const char *dir, uint64_t *ok)
{
    cckey_store *s;
    cckey_store_report r;
    cckey_store_usage u;
    if (cckey_store_open(&s, dir, 0) != CCKEY_OK) {
        fprintf(stderr, "%s: cannot open: %s\n", dir, cckey_last_error());
        return NULL;
    }
    const char *bad = cckey_store_verify(s, &r) != CCKEY_OK  ? "verify failed"
                      : r.removed                             ? "verify removed entries"
                      : cckey_store_stats(s, &u) != CCKEY_OK ? "stats failed"
                      : u.temp_files                          ? "temporary files left"
                                                              : NULL;
    if (bad) {
        fprintf(stderr, "%s: %s (%s)\n", dir, bad, cckey_last_error());
        cckey_store_close(s);
        return NULL;
    }
    *ok = r.ok;
    return s;
}
