/* write_only.c - the converter benchmark's other floor: a durable write of BYTES bytes to a new file
 * PATH (1 MiB write() calls from a buffer of non-zero bytes, then fdatasync), nothing else. The file is
 * removed afterwards. Prints one line:
 *   durable write: B bytes in S s = R MB/s
 * Usage: bench_convert_write PATH BYTES */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLOCK (1u << 20)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int write_all(int fd, const unsigned char *buf, size_t n)
{
    while (n) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: bench_convert_write PATH BYTES\n");
        return 1;
    }
    const char *path = argv[1];
    unsigned long long total = strtoull(argv[2], NULL, 10), left = total;
    unsigned char *buf = malloc(BLOCK);
    if (!buf)
        return 1;
    for (size_t i = 0; i < BLOCK; i++) /* pixels-like bytes, not zeros */
        buf[i] = (unsigned char)(i * 2654435761u >> 13);
    double t0 = now();
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int rc = fd < 0 ? -1 : 0;
    while (rc == 0 && left) {
        size_t n = left < BLOCK ? (size_t)left : BLOCK;
        rc = write_all(fd, buf, n);
        left -= n;
    }
    if (rc == 0)
        rc = fdatasync(fd);
    if (fd >= 0 && close(fd) != 0)
        rc = -1;
    double dt = now() - t0;
    if (rc != 0)
        fprintf(stderr, "bench_convert_write: %s: %s\n", path, strerror(errno));
    unlink(path);
    free(buf);
    if (rc != 0)
        return 1;
    printf("durable write: %llu bytes in %.3f s = %.1f MB/s\n", total, dt, total / dt / 1e6);
    return 0;
}
