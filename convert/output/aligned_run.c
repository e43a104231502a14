/* aligned_run.c - see aligned_run.h. */
#include "aligned_run.h"

#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "pwrite_full.h"

int aligned_run_init(aligned_run *r, int fd)
{
    *r = (aligned_run){.fd = fd};
    r->buf = malloc((size_t)ALIGNED_RUN_STEP);
    return r->buf ? 0 : -1;
}

int aligned_run_flush(aligned_run *r, size_t *written)
{
    *written = 0;
    if (r->len == 0)
        return 0;
    if (pwrite_full(r->fd, r->buf, r->len, (off_t)r->at) != 0)
        return -1;
    *written = r->len;
    r->at += r->len, r->len = 0;
    return 0;
}

/* Tops up the buffered piece with the first bytes of [*SRC, *SRC + *LEFT), up to its block's end, and
 * writes the piece once it reaches that end. */
static int top_up(aligned_run *r, const uint8_t **src, size_t *left, size_t *written)
{
    uint64_t end = (r->at / ALIGNED_RUN_STEP + 1) * ALIGNED_RUN_STEP, room = end - (r->at + r->len);
    size_t take = *left < room ? *left : (size_t)room;
    memcpy(r->buf + r->len, *src, take);
    r->len += take, *src += take, *left -= take;
    if (r->at + r->len < end)
        return 0;
    size_t w = 0;
    int rc = aligned_run_flush(r, &w);
    *written += w;
    return rc;
}

int aligned_run_add(aligned_run *r, uint64_t at, const void *p, size_t n, size_t *written)
{
    const uint8_t *src = p;
    size_t left = n, w = 0;
    *written = 0;
    if (r->len && at != r->at + r->len) { /* not a continuation: what is buffered goes as it is */
        if (aligned_run_flush(r, &w) != 0)
            return -1;
        *written += w;
    }
    if (r->len == 0)
        r->at = at;
    if ((r->len || at % ALIGNED_RUN_STEP) && top_up(r, &src, &left, written) != 0)
        return -1;
    if (left == 0)
        return 0;
    uint64_t pos = r->at + r->len; /* on a block boundary now, with nothing buffered */
    size_t whole = left / ALIGNED_RUN_STEP * ALIGNED_RUN_STEP;
    if (whole) {
        if (pwrite_full(r->fd, src, whole, (off_t)pos) != 0)
            return -1;
        *written += whole, src += whole, left -= whole, pos += whole;
    }
    memcpy(r->buf, src, left); /* the start of the next block */
    r->at = pos, r->len = left;
    return 0;
}

void aligned_run_free(aligned_run *r)
{
    free(r->buf);
    r->buf = NULL, r->len = 0;
}
