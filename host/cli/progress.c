/* A one-line progress bar, redrawn at most ten times a second. */
#include "cli.h"

#include <time.h>
#include <unistd.h>

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void cli_progress_init(cli_progress *p, const char *what)
{
    *p = (cli_progress){.enabled = isatty(STDERR_FILENO) == 1, .what = what};
    p->start = p->last = cli_now();
}

void cli_progress_update(cli_progress *p, uint64_t done, uint64_t total, uint64_t items)
{
    if (!p->enabled) return;
    double now = cli_now();
    /* Short work finishes before a bar would help; don't flicker. */
    if (now - p->start < 1.0 || now - p->last < 0.1) return;
    p->last = now;
    p->drawn = true;
    double mb = done / 1e6, rate = mb / (now - p->start);
    if (total) {
        int width = 30, fill = (int)(width * (double)done / (double)total);
        if (fill > width) fill = width;
        fprintf(stderr, "\r%s [%.*s%*s] %3.0f%%  %llu items  %.1f MB/s ", p->what, fill,
                "##############################", width - fill, "", 100.0 * done / total,
                (unsigned long long)items, rate);
    } else {
        fprintf(stderr, "\r%s %llu items  %.1f MB  %.1f MB/s ", p->what, (unsigned long long)items, mb, rate);
    }
    fflush(stderr);
}

void cli_progress_finish(cli_progress *p)
{
    if (p->drawn) fputs("\r\033[K", stderr);
    p->drawn = false;
}
