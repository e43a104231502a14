/* progress.h - the progress bar on stderr: only when stderr is a terminal, about 6 updates a second,
 * with images/s and the estimated time left. */
#ifndef H5PACK_PROGRESS_H
#define H5PACK_PROGRESS_H

#include <stdint.h>

typedef struct progress {
    int enabled;
    double start, last_draw;
    uint64_t last_done;
    int drawn; /* a bar is on screen */
} progress;

/* ENABLED: the caller's choice (not -q); the bar still stays off when stderr is not a terminal. */
void progress_init(progress *p, int enabled);

/* A pipeline_progress_fn: redraws at most ~6 times a second. CTX is a progress*. */
void progress_update(void *ctx, uint64_t done, uint64_t total, uint64_t converted);

/* Erases the bar so that the next lines start clean. */
void progress_finish(progress *p);

#endif
