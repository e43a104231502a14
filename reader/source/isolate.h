/* isolate.h - HDF5 work on a file that may be damaged, run in another process first (isolate.c). HDF5
 * 1.10.8 trusts what it reads: on damaged metadata (old-format files carry no checksums) or a damaged global
 * heap (the variable-length strings of every format; no checksum either) it can read through a wild
 * pointer or loop forever, and no error handling of ours can catch that in this process. In a helper
 * process, a crash or a hang becomes a clear ECORRUPT here. Users: the chunk sources' open probe
 * (chunksrc_probe.c) and h5pack_read_strings (file_strings.c).
 *
 * No fork of this process: the caller may be a training process with CUDA contexts and dozens of threads,
 * where a forked child can hang on a lock another thread held (seen under the sanitizers' allocators).
 * Instead the job runs in h5pack-isolate (tools/isolate_main.c), a small program installed with the library
 * and started with posix_spawn: a fresh process that opens the file itself, does the HDF5 work, and streams
 * its reply back over a pipe, its only descriptor besides 0-2 (stdin and stdout /dev/null, stderr ours
 * until it starts, so that a loader's complaint is seen). Where it lies, in order:
 *   $H5PACK_ISOLATE_HELPER (a path; nothing else is searched then);
 *   DIR/h5pack-isolate, DIR being the folder of the binary holding libh5pack (dladdr): the build tree
 *     (reader/, beside libh5pack.so) and pip installs (site-packages/h5pack/ beside the package's
 *     libh5pack.so, and the scripts folder beside the programs linked with libh5pack.a);
 *   DIR/h5pack/h5pack-isolate: `cmake --install` (LIBDIR/h5pack/, beside the Python package's folder);
 *   the build tree's own helper (compiled in, not in wheels): for the build tree's programs and tests
 *     linked with libh5pack.a, whose DIR is their own.
 * Without a usable helper (none found; it does not start, greets as another h5pack's, or stays silent past
 * the limit before greeting) the work runs in this process, as with H5PACK_PROBE=never, after one warning
 * per process on stderr naming the helper or where it was looked for.
 *
 * Which bytes: the helper opens the same location. "mem://PATH" (the file read whole into memory at open)
 * is read from PATH instead (no second copy of the file in memory): the same bytes unless the file was
 * rewritten since, the race a plain path has too between the open here and the helper's. Either way a
 * size that differs from this process's store is EIO ("changed since it was opened").
 *
 * H5PACK_PROBE=always runs every such job in the helper (a file crafted with valid checksums), =never none
 * (debugging); H5PACK_PROBE_TIMEOUT=S sets the silence limit (default 20 s). */
#ifndef H5PACK_SOURCE_ISOLATE_H
#define H5PACK_SOURCE_ISOLATE_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* H5PACK_PROBE: 1 for "always", -1 for "never", 0 when unset (each caller's own rule decides). */
int h5pack_isolate_setting(void);

/* The rule for metadata: the helper for files without metadata checksums (superblock version 0 or 1) and
 * for no other, unless H5PACK_PROBE says otherwise. A store without an HDF5 signature needs none (the open
 * fails before HDF5 parses anything). */
int h5pack_isolate_wanted(store *st);

/* Seconds of silence after which the helper counts as stuck (H5PACK_PROBE_TIMEOUT, default 20). */
int h5pack_isolate_silence_s(void);

/* ---- this process's side ------------------------------------------------------------------------- */

/* Reads the helper's reply from FD into CTX, each read waiting at most SILENCE_MS for a byte
 * (h5pack_isolate_read). Returns 1 when the whole reply arrived, 0 when it ended early (the helper
 * died), -2 when the helper fell silent. */
typedef int (*isolate_parent_fn)(int fd, int silence_ms, void *ctx);

/* Runs the job ARGS (NULL-terminated: the job's name, then its arguments, all text) in the helper and
 * PARENT here on its reply. Returns 0 when PARENT got the whole reply (the job's own result is in CTX),
 * ECORRUPT with "PATH: HDF5 crashed / made no progress / failed hard WHAT: the file is damaged" in ERR
 * otherwise, or 1 when no helper could be run (none found, it did not start, no pipe): do the work here. */
int h5pack_isolate_run(const char *path, const char *what, const char *const *args, isolate_parent_fn parent,
                       void *ctx, char *err, size_t err_len);

/* Reads LEN bytes from FD: 0 (with *GOT short at EOF), -2 after SILENCE_MS without a byte, -1 on error. */
int h5pack_isolate_read(int fd, void *buf, size_t len, size_t *got, int silence_ms);

/* ---- the helper's side (h5pack-isolate) ---------------------------------------------------------- */

/* A job: ARGS (N of them) as given after its name; writes its reply to FD. Malformed arguments: exit 2. */
typedef void (*isolate_job_fn)(int fd, int n, char **args);
typedef struct isolate_job {
    const char *name;
    isolate_job_fn run;
} isolate_job;

/* The jobs h5pack-isolate knows (chunksrc_probe.c, file_strings.c). */
void h5pack_chunksrc_probe_job(int fd, int n, char **args);
void h5pack_read_strings_job(int fd, int n, char **args);

/* The helper's main: ARGV[1] names the job among JOBS, the rest are its arguments; the reply goes to
 * descriptor 3 after a greeting this process checks (the helper's protocol and h5pack version). Does not
 * return when a job ran (_exit: nothing of HDF5's runs at exit); 2 for a bad command line. */
int h5pack_isolate_main(int argc, char **argv, const isolate_job *jobs, size_t n_jobs);

/* In the helper: opens LOCATION as this process's store had it: SIZE (text) bytes; mem://PATH from PATH
 * (see above). 0, or the store's error / EIO when the size differs, with the reason in ERR. */
int h5pack_isolate_open_store(const char *location, const char *size, store **out, char *err, size_t err_len);

/* In the helper: TEXT as a decimal number (the whole of it), or exit 2. */
uint64_t h5pack_isolate_arg_u64(const char *text);

/* Writes LEN bytes to FD: 0, or -1 (the parent is gone). */
int h5pack_isolate_write(int fd, const void *buf, size_t len);

#endif
