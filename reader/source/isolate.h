/* isolate.h - HDF5 work on a file that may be damaged, run in a forked child first (isolate.c). HDF5 1.10.8
 * trusts what it reads: on damaged metadata (old-format files carry no checksums) or a damaged global heap
 * (the variable-length strings of every format; no checksum either) it can read through a wild pointer or
 * loop forever, and no error handling of ours can catch that in this process. In a child, a crash or a hang
 * becomes a clear ECORRUPT in the parent. Users: the chunk sources' open probe (chunksrc_probe.c) and
 * h5pack_read_strings (file_strings.c).
 *
 * Fork safety: the parent holds the process's HDF5 lock (h5glue.h) across fork(), so no h5pack thread is
 * inside HDF5 at that moment; the child is single-threaded, uses only HDF5, write() and _exit(). An HDF5
 * call from outside h5pack in another thread at that instant could leave HDF5's own lock held in the
 * child: the child then makes no progress, reported as such after the silence limit.
 *
 * H5PACK_PROBE=always runs every such job in a child (a file crafted with valid checksums), =never none
 * (debugging); H5PACK_PROBE_TIMEOUT=S sets the silence limit (default 20 s). */
#ifndef H5PACK_SOURCE_ISOLATE_H
#define H5PACK_SOURCE_ISOLATE_H

#include <stddef.h>

#include "store.h"

/* H5PACK_PROBE: 1 for "always", -1 for "never", 0 when unset (each caller's own rule decides). */
int h5pack_isolate_setting(void);

/* The rule for metadata: a child for files without metadata checksums (superblock version 0 or 1) and for
 * no other, unless H5PACK_PROBE says otherwise. A store without an HDF5 signature needs none (the open
 * fails before HDF5 parses anything). */
int h5pack_isolate_wanted(store *st);

/* Seconds of silence after which a child counts as stuck (H5PACK_PROBE_TIMEOUT, default 20). */
int h5pack_isolate_silence_s(void);

/* The child's side: writes its reply to FD (a pipe), then returns (the child then _exits). CTX is the
 * caller's, as it was at fork (the child's own copy). */
typedef void (*isolate_child_fn)(int fd, void *ctx);

/* The parent's side: reads the child's reply from FD into CTX, each read waiting at most SILENCE_MS for
 * a byte (h5pack_isolate_read). Returns 1 when the whole reply arrived, 0 when it ended early (the child
 * died), -2 when the child fell silent. */
typedef int (*isolate_parent_fn)(int fd, int silence_ms, void *ctx);

/* Forks; CHILD runs in the child, PARENT here. Returns 0 when PARENT got the whole reply (the child's own
 * result is in CTX), ECORRUPT with "PATH: HDF5 crashed / made no progress / failed hard WHAT: the file is
 * damaged" in ERR otherwise, or 1 when no child could be started (no pipe, no fork: do the work here). */
int h5pack_isolate_run(const char *path, const char *what, isolate_child_fn child, isolate_parent_fn parent,
                       void *ctx, char *err, size_t err_len);

/* Reads LEN bytes from FD: 0 (with *GOT short at EOF), -2 after SILENCE_MS without a byte, -1 on error. */
int h5pack_isolate_read(int fd, void *buf, size_t len, size_t *got, int silence_ms);

/* Writes LEN bytes to FD: 0, or -1 (the parent is gone). */
int h5pack_isolate_write(int fd, const void *buf, size_t len);

#endif
