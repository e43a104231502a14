/* timeline.h - the reader's own timeline (docs/stats.md, "Timeline"): one CSV row per interval while the
 * reader lives, written by a small sampler thread, so rows keep coming while the training loop is busy
 * elsewhere (or stuck) and h5pack_next() never writes anything itself.
 *
 * The consumer brackets each h5pack_next() with enter/leave: leave copies the delivered-batch counters
 * (the stream's stats, any kind of stream) into the timeline under its lock, with the time spent inside.
 * The sampler wakes at open + k * interval, reads that copy (counting a call still blocked as blocked
 * up to now), asks the backend for its device copy time, and writes the differences as one row with one
 * write() (the file is opened O_APPEND: a crash keeps every finished row). Close writes the last, partial
 * row, so every count column sums to the reader's totals.
 *
 * The file: cfg->timeline_path, else $H5PACK_TIMELINE; "" = none. With world > 1 the rank goes into the
 * name (run.csv -> run.rank3.csv); a name another live reader holds (an flock, in this or another
 * process) gets ".1", ".2", ... before its extension (run.csv -> run.1.csv).
 * Thread-safety: enter/leave/close from the consumer thread. */
#ifndef H5PACK_READER_TIMELINE_H
#define H5PACK_READER_TIMELINE_H

#include <stddef.h>

#include "h5pack.h"
#include "stream.h"

typedef struct h5pack_timeline h5pack_timeline;

/* The CSV header (no newline), one name per column, in order. */
extern const char h5pack_timeline_header[];

/* Opens the timeline CFG asks for and starts its sampler; *OUT stays NULL when none is asked for.
 * T_OPEN is the reader's open time (h5pack_clock_s), the rows' time origin. Returns 0, or H5PACK_EIO
 * (cannot create the file: ERR names it and the reason), H5PACK_EINVAL (bad interval), H5PACK_ENOMEM. */
int h5pack_timeline_open(const h5pack_config *cfg, stream *s, double t_open, h5pack_timeline **out, char *err,
                         size_t err_len);

/* The consumer entered h5pack_next(). NULL is a no-op. */
void h5pack_timeline_enter(h5pack_timeline *t);

/* The consumer leaves h5pack_next(); B is the delivered batch (NULL when none was). NULL T is a no-op. */
void h5pack_timeline_leave(h5pack_timeline *t, const h5pack_batch *b);

/* The file actually written (after the rank and ".N" rules). */
const char *h5pack_timeline_file(const h5pack_timeline *t);

/* timeline_file.c: creates (truncates) the file for PATH by the rank and ".N" rules above, holding its
 * flock; *FD and *NAME (malloc'd) on success. With APPEND, PATH itself is continued when it is a timeline
 * that no live reader holds; else the rules apply and a file whose first line is the header is kept: *T_LAST
 * is then its last row's t_s (0 with no row) and *CONTINUED 1 (else 0: truncated, no header yet).
 * H5PACK_EIO naming the file and the reason, or ENOMEM. */
int h5pack_timeline_create_file(const char *path, uint32_t rank, uint32_t world, int append, int *fd, char **name,
                                int *continued, double *t_last, char *err, size_t err_len);

/* timeline_continue.c: with FD open read-write on a file that starts with the header, cuts a torn last
 * line and sets *T_LAST to the last complete row's t_s (0 with none): 1. 0: not a timeline (nothing
 * changed). -1: a read or cut error (errno). */
int h5pack_timeline_continue_fd(int fd, double *t_last);

/* Stops the sampler, writes the last row, closes the file. Call before the stream is closed. NULL is a
 * no-op. */
void h5pack_timeline_close(h5pack_timeline *t);

#endif
