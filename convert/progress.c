/* progress.c - a one-line progress bar on stderr (terminal only). */
#include "progress.h"

#include <stdio.h>
#include <unistd.h>

#include "clock.h"

void progress_init(progress *p, int enabled)
{
    p->enabled = enabled && isatty(STDERR_FILENO);
    p->start = h5pack_clock_s();
    p->last_draw = 0;
    p->last_done = UINT64_MAX;
    p->drawn = 0;
}

static void format_duration(double s, char *buf, size_t len)
{
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

void progress_update(void *ctx, uint64_t done, uint64_t total, uint64_t converted)
{
    progress *p = ctx;
    if (!p->enabled)
        return;
    double now = h5pack_clock_s();
    int first_complete = done == total && p->last_done != total; /* always show 100% once */
    if (now - p->last_draw < 1.0 / 6 && !first_complete)
        return;
    p->last_draw = now;
    p->last_done = done;
    double elapsed = now - p->start, rate = elapsed > 0 ? done / elapsed : 0;
    char eta[32] = "?";
    if (rate > 0)
        format_duration((double)(total - done) / rate, eta, sizeof eta);
    const int width = 30;
    int fill = total ? (int)((double)done / total * width) : width;
    char bar[64];
    for (int i = 0; i < width; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[width] = '\0';
    fprintf(stderr, "\r[%s] %3d%% %llu/%llu images (%llu converted) %.0f img/s ETA %s\033[K", bar,
            total ? (int)(100.0 * done / total) : 100, (unsigned long long)done, (unsigned long long)total,
            (unsigned long long)converted, rate, eta);
    fflush(stderr);
    p->drawn = 1;
}

void progress_finish(progress *p)
{
    if (p->drawn)
        fprintf(stderr, "\r\033[K");
    p->drawn = 0;
}
