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
    double elapsed = now - p->start;
    if (total) {
        int width = 30, fill = (int)(width * (double)done / (double)total);
        if (fill > width) fill = width;
        double frac = (double)done / (double)total;
        fprintf(stderr, "\r%s [%.*s%*s] %3.0f%%  %llu items  %.0f s", p->what, fill,
                "##############################", width - fill, "", 100.0 * frac, (unsigned long long)items,
                elapsed);
        /* A time left only once there is enough behind us to guess from. */
        if (frac > 0.02 && frac < 1) fprintf(stderr, ", about %.0f s left", elapsed * (1 - frac) / frac);
        if (p->note) fprintf(stderr, "  (%s)", p->note);
        fputs("\033[K", stderr);
    } else {
        fprintf(stderr, "\r%s %llu items  %.0f s%s%s%s\033[K", p->what, (unsigned long long)items, elapsed,
                p->note ? "  (" : "", p->note ? p->note : "", p->note ? ")" : "");
    }
    fflush(stderr);
}

void cli_progress_finish(cli_progress *p)
{
    if (p->drawn) fputs("\r\033[K", stderr);
    p->drawn = false;
}
