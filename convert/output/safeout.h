/* safeout.h - never a broken file under the final name: write a hidden temporary file beside OUT, then
 * H5Fclose, fsync and rename() it into place. SIGINT, SIGTERM and SIGHUP remove the temporary files that
 * are registered here before the default action ends the process. A kill -9 can leave a
 * ".NAME.h5pack-XXXXXX" file beside OUT, never a partial OUT; the next conversion to the same OUT removes
 * it (safeout_remove_leftovers), never a live writer's. */
#ifndef H5PACK_SAFEOUT_H
#define H5PACK_SAFEOUT_H

#include <stddef.h>
#include <stdint.h>

/* OUT must not exist (a dangling symbolic link counts) unless FORCE, must not be a folder, and must name a
 * file (not "" nor end with '/'). Returns 0, or -1 with a message. */
int safeout_check_destination(const char *out, int force, char *err, size_t err_len);

/* Creates an empty hidden temp file in OUT's folder and registers it for removal on signals; its path goes
 * to TEMP (TEMP_LEN >= 4096 is enough). Returns 0, or -1 with a message. */
int safeout_create_temp(const char *out, char *temp, size_t temp_len, char *err, size_t err_len);

/* Removes TEMP and unregisters it. */
void safeout_discard(const char *temp);

/* fsync TEMP, rename it to OUT, fsync OUT's folder, unregister TEMP. Without FORCE an OUT that appeared
 * meanwhile is not replaced: -2, the finished file kept under TEMP's name without its leading dot (TEMP
 * is updated: a visible name, which leftover cleaning never takes) and named in the message. Returns 0,
 * or -1 with a message. */
int safeout_commit(char *temp, const char *out, int force, char *err, size_t err_len);

/* Removes the temp files of OUT that killed conversions left (".NAME.h5pack-XXXXXX" beside OUT, locked by
 * no process, unchanged for 10 s), calling REPORT (if not NULL) with each one's path and size. Returns how
 * many were removed. */
int safeout_remove_leftovers(const char *out, void (*report)(void *ctx, const char *path, uint64_t bytes),
                             void *ctx);

/* SIGINT/SIGTERM/SIGHUP: remove the registered temp files, then die of the signal as usual. Signals that
 * were ignored when the program started (nohup, background jobs) stay ignored. */
void safeout_install_signal_handlers(void);

#endif
