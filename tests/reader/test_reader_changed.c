/* test_reader_changed.c - a file truncated or rewritten while a reader streams it: h5pack_next refuses
 * with ECORRUPT naming the file and the change, again on every later call, and never raises SIGBUS (the
 * mapped path's guard, reader/store/map_guard.h); the same with pread (H5PACK_NO_MMAP=1) and 1 or 2
 * threads. A SIGBUS handler the program installed before still receives the SIGBUS it raises itself. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"

/* chunks of 64 images, batches of 8: each chunk serves 8 batches from the cache after it was brought in */
static const h5fix_file spec = {.n = 512, .c = 3, .h = 16, .w = 16, .k = 64, .layout_attr = "NCHW", .labels = 1};

static h5pack_config config(int threads)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.batch_size = 8, c.threads = threads, c.prefetch = 2, c.epochs = 2;
    c.cache_bytes = 1 << 20, c.dtype = H5PACK_DTYPE_UINT8;
    return c;
}

static void cut_to_third(const char *path)
{
    CHECK_OK(truncate(path, (off_t)(h5fix_storage_bytes(path) / 3)));
}

static void rewrite_first_bytes(const char *path)
{
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL);
    char head[4096];
    CHECK(fread(head, 1, sizeof head, f) == sizeof head);
    CHECK_OK(fseek(f, 0, SEEK_SET));
    CHECK(fwrite(head, 1, sizeof head, f) == sizeof head);
    CHECK_OK(fclose(f)); /* a new modification time (nanoseconds on ext4, xfs, tmpfs) */
}

/* 5 batches, CHANGE, then on: the first failure is ECORRUPT naming the file and "changed", and so is the
 * next call. */
static void run_case(const char *tag, int threads, void (*change)(const char *), const char *word)
{
    char path[256];
    h5fix_local_name(path, sizeof path, tag);
    CHECK_OK(h5fix_write(path, &spec));
    h5pack_config c = config(threads);
    h5pack_reader *r = NULL;
    CHECK_MSG(h5pack_open(path, &c, &r) == 0, "open %s: %s", path, h5pack_last_error(r));
    h5pack_batch b = H5PACK_BATCH_INIT;
    for (int i = 0; i < 5; i++) {
        CHECK_OK(h5pack_next(r, &b));
        CHECK_OK(h5pack_release(r, &b));
    }
    change(path);
    int rc, delivered = 0;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK && delivered < 10000) {
        CHECK_OK(h5pack_release(r, &b));
        delivered++;
    }
    const char *e = h5pack_last_error(r);
    CHECK_MSG(rc == H5PACK_ECORRUPT, "%s: %d after %d batches: %s", tag, rc, delivered, e);
    CHECK_MSG(strstr(e, path) && strstr(e, "changed") && strstr(e, word), "%s: the message: %s", tag, e);
    CHECK_MSG(h5pack_next(r, &b) == H5PACK_ECORRUPT, "%s: a later next is refused too", tag);
    printf("%s, %d thread(s): refused after %d more batches: %s\n", tag, threads, delivered, e);
    h5pack_close(r);
    remove(path);
}

static volatile sig_atomic_t g_own_handler_calls;

static void own_handler(int sig)
{
    (void)sig;
    g_own_handler_calls++;
}

/* The program's own SIGBUS handler, installed before any reader, still gets its raise() with a guarded
 * map open: the guard chains to it. */
static void check_chaining(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = own_handler;
    CHECK_OK(sigaction(SIGBUS, &sa, &old));
    char path[256];
    h5fix_local_name(path, sizeof path, "chain");
    CHECK_OK(h5fix_write(path, &spec));
    h5pack_config c = config(1);
    h5pack_reader *r = NULL;
    CHECK_OK(h5pack_open(path, &c, &r));
    raise(SIGBUS);
    CHECK_MSG(g_own_handler_calls == 1, "the program's handler got %d of 1 SIGBUS", (int)g_own_handler_calls);
    h5pack_close(r);
    remove(path);
}

int main(void)
{
    check_chaining(); /* first: the guard's handler is installed at the first mapped open, after the program's */
    for (int threads = 1; threads <= 2; threads++) {
        run_case("truncated", threads, cut_to_third, "truncated");
        run_case("rewritten", threads, rewrite_first_bytes, "written");
    }
    setenv("H5PACK_NO_MMAP", "1", 1);
    run_case("truncated_pread", 2, cut_to_third, "truncated");
    printf("reader_changed: all checks passed\n");
    return 0;
}
