/* pwrite_full.c - see pwrite_full.h. */
#include "pwrite_full.h"

#include <errno.h>
#include <stdint.h>
#include <unistd.h>

int pwrite_full(int fd, const void *p, size_t n, off_t at)
{
    const uint8_t *b = p;
    for (size_t done = 0; done < n;) {
        ssize_t r = pwrite(fd, b + done, n - done, at + (off_t)done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                errno = ENOSPC;
            return -1;
        }
        done += (size_t)r;
    }
    return 0;
}
