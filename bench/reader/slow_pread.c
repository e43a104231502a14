/* slow_pread.c - LD_PRELOAD shim that makes every large pread() (>= 64 KiB: chunk reads, not HDF5's
 * metadata reads) take SLOW_PREAD_US microseconds longer, like network storage does. Used with
 * `bench_reader --only scaling` to show that the workers overlap slow reads even on a machine with few
 * cores. Not part of the library. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

__attribute__((visibility("default"))) ssize_t pread(int fd, void *buf, size_t count, off_t offset)
{
    static pread_fn real;
    if (!real)
        real = (pread_fn)dlsym(RTLD_NEXT, "pread");
    const char *us = getenv("SLOW_PREAD_US");
    if (us && count >= 65536)
        sleep_us(atol(us));
    return real(fd, buf, count, offset);
}

__attribute__((visibility("default"))) ssize_t pread64(int fd, void *buf, size_t count, off_t offset)
{
    return pread(fd, buf, count, offset);
}
