/* errtext.c - see errtext.h. */
#include <stdio.h>

#include "errtext.h"

int h5pack_verrf(int rc, char *err, size_t len, const char *fmt, va_list ap)
{
    if (err && len)
        vsnprintf(err, len, fmt, ap);
    return rc;
}

int h5pack_errf(int rc, char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    h5pack_verrf(rc, err, len, fmt, ap);
    va_end(ap);
    return rc;
}

int h5pack_verrf_at(int rc, char *err, size_t len, const char *where, const char *fmt, va_list ap)
{
    if (!err || !len)
        return rc;
    int n = where ? snprintf(err, len, "%s: ", where) : 0;
    if (n >= 0 && (size_t)n < len)
        vsnprintf(err + n, len - (size_t)n, fmt, ap);
    return rc;
}
