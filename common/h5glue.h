/* h5glue.h - what every part that calls HDF5 needs around its calls: the process-wide lock, silence,
 * error text, names of types and shapes, and small attribute reads. The reader, the converter and
 * h5pack-stats all use these (files h5lock.c, h5error.c, h5describe.c, h5attr.c). */
#ifndef H5PACK_COMMON_H5GLUE_H
#define H5PACK_COMMON_H5GLUE_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the lock (h5lock.c) ------------------------------------------------------------------------
 * One process-wide mutex around the HDF5 calls of h5pack's threads. HDF5 serialises all calls on its
 * own global lock anyway, so nothing is lost. (The reader's open probe once forked and relied on this
 * lock to fork while none of our threads was inside HDF5; it now runs in a helper process: isolate.h.)
 *
 * ONE lock per process, by construction: h5lock.c is not part of h5pack_common (which programs that
 * load libh5pack.so link a second copy of) but its own object library, h5pack_h5lock, in libh5pack and
 * in programs without libh5pack (the converter). A program that loads libh5pack.so and needs the lock
 * (h5pack-stats, tests) reaches it through these exported functions (default visibility, not in
 * h5pack.h); no symbol interposition is involved, so a compiler that inlines them inside the library
 * (clang does) still takes the same mutex. tests/common/test_one_lock.c checks it, also built with
 * clang in CI. */
#define H5PACK_H5_EXPORT __attribute__((visibility("default")))
H5PACK_H5_EXPORT void h5pack_h5_lock_global(void);
H5PACK_H5_EXPORT void h5pack_h5_unlock_global(void);

/* HDF5 prints its error stack on stderr unless told not to; the setting is per thread (thread-safe
 * build), so every thread that calls HDF5 silences it around its calls and restores it afterwards. */
typedef struct h5pack_h5_quiet {
    H5E_auto2_t func;
    void *data;
} h5pack_h5_quiet;

/* Lock + quiet: every HDF5 call of the reader's chunk sources runs between these two. */
H5PACK_H5_EXPORT void h5pack_h5_enter(h5pack_h5_quiet *q);
H5PACK_H5_EXPORT void h5pack_h5_leave(const h5pack_h5_quiet *q);

/* ---- errors (h5error.c) ------------------------------------------------------------------------- */

void h5pack_h5_quiet_begin(h5pack_h5_quiet *q);
void h5pack_h5_quiet_end(const h5pack_h5_quiet *q);

/* The text of error stack STACK for messages: "outermost: innermost" description (one of them when they
 * are the same), with the long text of HDF5's sec2 driver cut to its first words and the system's reason
 * ("file write failed: File too large"); "no detail from HDF5" for an empty stack. */
void h5pack_h5_stack_text(hid_t stack, char *buf, size_t len);

/* h5pack_h5_stack_text of the current thread's stack: call it right after the failing call. */
void h5pack_h5_error_text(char *buf, size_t len);

/* Whether the innermost error of the current stack is of class I/O (a failed system read, as opposed
 * to a checksum or filter failure, which HDF5 also reports under "can't read data"). */
int h5pack_h5_error_is_io(void);

/* For code that cannot read the stack right after a failure (its clean-up calls clear it): makes HDF5
 * write the text of every failing API call of this thread into C->text instead of printing it, from now
 * until another handler is installed. C must outlive that. */
typedef struct h5pack_h5_capture {
    char text[512];
} h5pack_h5_capture;
void h5pack_h5_capture_install(h5pack_h5_capture *c);

/* Copies the captured text (or "no detail from HDF5") into BUF and clears it for the next failure. */
void h5pack_h5_capture_take(h5pack_h5_capture *c, char *buf, size_t len);

/* ---- names (h5describe.c) ----------------------------------------------------------------------- */

/* Writes "uint8", "int16", "float32", "string", "compound", ... for TYPE into BUF. */
void h5pack_h5_type_name(hid_t type, char *buf, size_t len);

/* "(3,224,224)"-style text of DIMS. */
void h5pack_h5_dims_text(const hsize_t *dims, int rank, char *buf, size_t len);

/* Appends a filter's name to the comma-separated list in BUF: "deflate(LEVEL)", "shuffle", "fletcher32",
 * or "NAME(id N)" (NAME as HDF5 reports it, "filter" when empty). The reader and `h5pack-stats info`
 * both name filters this way. */
void h5pack_h5_filter_append(H5Z_filter_t id, unsigned level, const char *name, char *buf, size_t len);

/* ---- small reads (h5attr.c) --------------------------------------------------------------------- */

/* Whether PATH (may contain '/') names an existing link below LOC; no error stack output. */
int h5pack_h5_path_exists(hid_t loc, const char *path);

/* Reads a string attribute (fixed or variable length) NAME of OBJ into BUF. Returns 1 when read,
 * 0 when absent, -1 when present but not a readable string. */
int h5pack_h5_read_string_attr(hid_t obj, const char *name, char *buf, size_t len);

/* Reads a float64 attribute of exactly N values. Returns 1 when read, 0 when absent or of another shape. */
int h5pack_h5_read_doubles_attr(hid_t obj, const char *name, double *out, size_t n);

/* Reads an integer attribute holding one value (scalar or 1 element). Returns 1 when read, 0 when
 * absent, -1 when present but not one integer or unreadable: then WHY says what it holds ("string",
 * "3 values", ...). */
int h5pack_h5_read_int_attr(hid_t obj, const char *name, int64_t *out, char *why, size_t why_len);

#endif
