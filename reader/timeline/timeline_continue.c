/* timeline_continue.c - taking up an existing timeline file (h5pack_config.timeline_append, see
 * timeline.h): is it one, where does its last complete row end, and what is that row's t_s. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "timeline.h"

#define WINDOW 4096 /* bytes read per step backwards: rows are far shorter, damaged tails need not be */

/* Offset of the last '\n' in FD's bytes [LO, HI), or -1 without one (read window by window backwards:
 * a torn or zero-filled tail of any length is crossed). -2: a read error. */
static off_t last_newline(int fd, off_t lo, off_t hi)
{
    char buf[WINDOW];
    while (hi > lo) {
        off_t from = hi - WINDOW > lo ? hi - WINDOW : lo;
        ssize_t n = pread(fd, buf, (size_t)(hi - from), from);
        if (n != (ssize_t)(hi - from))
            return -2;
        for (ssize_t i = n; i > 0; i--)
            if (buf[i - 1] == '\n')
                return from + i - 1;
        hi = from;
    }
    return -1;
}

int h5pack_timeline_continue_fd(int fd, double *t_last)
{
    size_t hl = strlen(h5pack_timeline_header);
    char head[WINDOW];
    *t_last = 0;
    if (hl + 1 > sizeof head || pread(fd, head, hl + 1, 0) != (ssize_t)(hl + 1) ||
        memcmp(head, h5pack_timeline_header, hl) || head[hl] != '\n')
        return 0;
    off_t body = (off_t)(hl + 1), size = lseek(fd, 0, SEEK_END);
    off_t end = size < 0 ? -2 : last_newline(fd, body, size); /* the end of the last complete row */
    if (end == -2)
        return -1;
    off_t keep = end >= 0 ? end + 1 : body;
    if (keep < size && ftruncate(fd, keep) != 0) /* a row torn by a crash: the next starts a line */
        return -1;
    if (end < 0)
        return 1; /* the header alone */
    off_t start = last_newline(fd, body, end);
    if (start == -2)
        return -1;
    start = start >= 0 ? start + 1 : body;
    char field[64];
    size_t len = (size_t)(end - start) < sizeof field - 1 ? (size_t)(end - start) : sizeof field - 1;
    if (pread(fd, field, len, start) != (ssize_t)len)
        return -1;
    field[len] = '\0';
    double t = strtod(field, NULL);
    *t_last = isfinite(t) && t > 0 ? t : 0;
    return 1;
}
