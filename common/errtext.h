/* errtext.h - the one "say why in the caller's buffer, return the code" step. Every function that reports
 * a failure as (code, text in ERR of LEN bytes) formats through it, so none repeats the va_list dance or
 * forgets that ERR may be NULL. */
#ifndef H5PACK_COMMON_ERRTEXT_H
#define H5PACK_COMMON_ERRTEXT_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes FMT into ERR (nothing when ERR is NULL or LEN 0; cut to fit) and returns RC. */
int h5pack_errf(int rc, char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int h5pack_verrf(int rc, char *err, size_t len, const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));

/* The same with "WHERE: " first (a file's path: every error about a file names it); WHERE NULL: FMT alone. */
int h5pack_verrf_at(int rc, char *err, size_t len, const char *where, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));

#ifdef __cplusplus
}
#endif

#endif
