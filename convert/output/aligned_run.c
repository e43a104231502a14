/* aligned_run.c - see aligned_run.h. */
#include "aligned_run.h"

#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "pwrite_full.h"

int aligned_run_init(aligned_run *r, int fd, size_t max_add)
{
    *r = (aligned_run){.fd = fd, .cap = (size_t)ALIGNED_RUN_STEP + max_add};
    r->buf = malloc(r->cap);
    return r->buf ? 0 : -1;
}

/* Writes the first N bytes of the run and keeps the rest. */
static int write_head(aligned_run *r, size_t n, size_t *written)
{
    if (n == 0)
        return 0;
    if (pwrite_full(r->fd, r->buf, n, (off_t)r->at) != 0)
        return -1;
    memmove(r->buf, r->buf + n, r->len - n);
    r->len -= n, r->at += n;
    *written += n;
    return 0;
}

int aligned_run_flush(aligned_run *r, size_t *written)
{
    *written = 0;
    return write_head(r, r->len, written);
}

int aligned_run_add(aligned_run *r, uint64_t at, const void *p, size_t n, size_t *written)
{
    *written = 0;
    if (r->len && at != r->at + r->len && write_head(r, r->len, written) != 0)
        return -1;
    if (r->len == 0)
        r->at = at;
    memcpy(r->buf + r->len, p, n); /* fits: below one step is kept, and N <= max_add */
    r->len += n;
    uint64_t end = r->at + r->len, boundary = end / ALIGNED_RUN_STEP * ALIGNED_RUN_STEP;
    return boundary > r->at ? write_head(r, (size_t)(boundary - r->at), written) : 0;
}

void aligned_run_free(aligned_run *r)
{
    free(r->buf);
    r->buf = NULL, r->len = 0;
}
