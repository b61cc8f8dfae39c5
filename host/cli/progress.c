/* A one-line progress bar, redrawn at most ten times a second. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

/* The bar on the terminal now, if any: whatever else is written to the
 * terminal clears it first (cli_progress_interrupt), so keys and messages
 * never land on the bar's line. */
static cli_progress *active;

void cli_progress_interrupt(void)
{
    if (!active || !active->drawn) return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    active->drawn = false;   /* the next update draws it again */
}

/* Standard output through a stream that clears the bar before each write,
 * when both go to a terminal (the same one, as far as anyone can tell). */
static ssize_t guarded_write(void *cookie, const char *buf, size_t n)
{
    (void)cookie;
    cli_progress_interrupt();
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(STDOUT_FILENO, buf + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return done ? (ssize_t)done : -1;
        done += (size_t)w;
    }
    return (ssize_t)done;
}

void cli_progress_guard_stdout(void)
{
    if (isatty(STDOUT_FILENO) != 1 || isatty(STDERR_FILENO) != 1) return;
    FILE *f = fopencookie(NULL, "w", (cookie_io_functions_t){.write = guarded_write});
    if (!f) return;
    setvbuf(f, NULL, _IOLBF, BUFSIZ);
    fflush(stdout);
    stdout = f;
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void cli_progress_init(cli_progress *p, const char *what)
{
    *p = (cli_progress){.enabled = isatty(STDERR_FILENO) == 1 && !cli_quiet, .what = what};
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
    active = p;
    double elapsed = now - p->start;
    char count[64];
    if (p->items_total)
        snprintf(count, sizeof count, "%llu/%llu %s", (unsigned long long)items, (unsigned long long)p->items_total,
                 p->unit ? p->unit : "items");
    else
        snprintf(count, sizeof count, "%llu %s", (unsigned long long)items, p->unit ? p->unit : "items");
    if (total) {
        int width = 30, fill = (int)(width * (double)done / (double)total);
        if (fill > width) fill = width;
        double frac = (double)done / (double)total;
        fprintf(stderr, "\r%s [%.*s%*s] %3.0f%%  %s  %.0f s", p->what, fill, "##############################",
                width - fill, "", 100.0 * frac, count, elapsed);
        /* A time left only once there is enough behind us to guess from. */
        if (frac > 0.02 && frac < 1) fprintf(stderr, ", about %.0f s left", elapsed * (1 - frac) / frac);
        if (p->note) fprintf(stderr, "  (%s)", p->note);
        fputs("\033[K", stderr);
    } else {
        fprintf(stderr, "\r%s %s  %.0f s%s%s%s\033[K", p->what, count, elapsed, p->note ? "  (" : "",
                p->note ? p->note : "", p->note ? ")" : "");
    }
    fflush(stderr);
}

void cli_progress_finish(cli_progress *p)
{
    if (p->drawn) fputs("\r\033[K", stderr);
    p->drawn = false;
    if (active == p) active = NULL;
}
