/* soak_c - the soak of issue 41 through the public C API (include/h5pack.h), short enough for valgrind
 * memcheck and the sanitizer builds: CYCLES open / iterate / close cycles, each with a random configuration
 * over every read path: uncompressed mapped (implicit index), pread (H5PACK_NO_MMAP=1 around the open: the
 * library reads it there), h5py's old format (the open's probe in the helper h5pack-isolate), gzip, images
 * of several sizes with a centre or random resized crop, patches of images in tiles (random and sliding),
 * random resized crops, batch echo and sample echo; 1-4 threads, prefetch 2-4, a random number of
 * deliveries (across epoch ends, or an early stop with batches still held), up to prefetch - 1 batches held
 * unreleased at a time. Batches are kept past their reader with h5pack_detach (at most 8, shared by the
 * cycles): their bytes must never change, also after h5pack_close. Resumes: the delivery after a random
 * point is noted, the reader closed and reopened at that position (start_epoch / start_batch /
 * start_echo): its first delivery must be the same (data, labels, indices, where, boxes).
 *
 * After each close: open descriptors (/proc/self/fd), threads (/proc/self/task: read again for up to 2 s while
 * a joined thread is still listed) and child processes (any, zombies too) must be what they were before the
 * open, after WARMUP cycles; resident memory (statm) is
 * sampled and, natively without a sanitizer, the mean of the last quarter of the cycles may exceed the
 * second quarter's by at most --rss-growth MiB. At the end every detached batch is freed and h5pack_trim()
 * gives the kept ring buffers back: under valgrind --leak-check=full nothing is definitely lost.
 *
 *   soak_c [--cycles N] [--seed S] [--warmup W] [--sizes FILE] [--tiles FILE] [--rss-growth MIB]
 * Exit 0 when every check passed, 1 otherwise (each failure printed). The files of the mapped, pread, old
 * and gzip paths are written here (tests/fixtures); --sizes and --tiles name the converter's files. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5fixture.h"
#include "h5pack.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

#define KEPT_MAX 8
#define HELD_MAX 4

enum { K_MAPPED, K_PREAD, K_OLD, K_GZIP, K_SIZES, K_TILES, K_RRC, K_ECHO, K_SAMPLE_ECHO, K_COUNT };
static const char *const kind_names[K_COUNT] = {"mapped", "pread", "old",  "gzip",       "sizes",
                                               "tiles",  "rrc",   "echo", "sample_echo"};

static int failures;
#define FAIL(...)                                                                                            \
    do {                                                                                                     \
        failures++;                                                                                          \
        fprintf(stderr, "FAIL: " __VA_ARGS__);                                                               \
        fputc('\n', stderr);                                                                                 \
    } while (0)

/* ---- randomness and digests ---------------------------------------------------------------------- */

static uint64_t rng_state;
static uint32_t rnd(uint32_t n) /* 0 .. n-1 (splitmix64) */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (uint32_t)((z ^ (z >> 31)) % n);
}

static uint64_t fnv(const void *p, size_t n, uint64_t h)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* Everything a delivery carries, bit for bit (the host parts). */
static uint64_t delivery_digest(const h5pack_batch *b)
{
    uint64_t h = fnv(b->data, b->bytes, 1469598103934665603ull);
    h = fnv(b->indices, b->count * sizeof *b->indices, h);
    if (b->labels)
        h = fnv(b->labels, b->count * b->label_columns * sizeof *b->labels, h);
    if (b->labels_float)
        h = fnv(b->labels_float, b->count * b->label_columns * sizeof *b->labels_float, h);
    if (b->where)
        h = fnv(b->where, b->count * 3 * sizeof *b->where, h);
    if (b->boxes)
        h = fnv(b->boxes, b->count * sizeof *b->boxes, h);
    uint64_t pos[4] = {b->epoch, b->index, b->echo, b->count};
    return fnv(pos, sizeof pos, h);
}

/* ---- this process's resources -------------------------------------------------------------------- */

typedef struct resources {
    long fds, threads, children;
    long rss_kib;
} resources;

static long count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    long n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static resources measure(void)
{
    resources r = {0};
    r.fds = count_entries("/proc/self/fd") - 1; /* less opendir's own */
    r.threads = count_entries("/proc/self/task");
    DIR *d = opendir("/proc/self/task");
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char path[300];
        snprintf(path, sizeof path, "/proc/self/task/%s/children", e->d_name);
        FILE *f = fopen(path, "r");
        for (long pid; f && fscanf(f, "%ld", &pid) == 1;)
            r.children++;
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, resident = 0;
    if (f && fscanf(f, "%ld %ld", &size, &resident) == 2)
        r.rss_kib = resident * (sysconf(_SC_PAGESIZE) / 1024);
    if (f)
        fclose(f);
    return r;
}

/* ---- kept (detached) batches --------------------------------------------------------------------- */

typedef struct kept {
    h5pack_detached *mem;
    size_t bytes; /* the batch's (the memory taken may be longer: its slot, rounded up) */
    uint64_t digest;
    int cycle;
} kept;

static kept kept_pool[KEPT_MAX];
static int kept_n;

static void keep(h5pack_reader *r, const h5pack_batch *b, int cycle)
{
    h5pack_detached *d = NULL;
    int copied = 0;
    int rc = h5pack_detach(r, b, &d, &copied);
    if (rc != H5PACK_OK) {
        FAIL("cycle %d: h5pack_detach: %s", cycle, h5pack_last_error(r));
        return;
    }
    if (h5pack_detached_bytes(d) < b->bytes || (!copied && h5pack_detached_data(d) != b->data) ||
        fnv(h5pack_detached_data(d), b->bytes, 1) != fnv(b->data, b->bytes, 1))
        FAIL("cycle %d: a detached batch is not the delivered one (%p, %zu bytes; delivered %p, %zu; copied %d)", cycle,
             h5pack_detached_data(d), h5pack_detached_bytes(d), b->data, b->bytes, copied);
    if (kept_n == KEPT_MAX) { /* the pool is full: one goes */
        int victim = (int)rnd(KEPT_MAX);
        h5pack_detached_free(kept_pool[victim].mem);
        kept_pool[victim] = kept_pool[--kept_n];
    }
    kept_pool[kept_n++] = (kept){d, b->bytes, fnv(h5pack_detached_data(d), b->bytes, 1), cycle};
}

static void check_kept(int cycle)
{
    for (int i = 0; i < kept_n; i++) {
        uint64_t now = fnv(h5pack_detached_data(kept_pool[i].mem), kept_pool[i].bytes, 1);
        if (now != kept_pool[i].digest) {
            FAIL("cycle %d: a batch detached in cycle %d changed value", cycle, kept_pool[i].cycle);
            kept_pool[i].digest = now; /* reported once */
        }
    }
}

/* ---- one cycle ------------------------------------------------------------------------------------ */

typedef struct files {
    const char *path[K_COUNT];
} files;

typedef struct tally {
    long cycles, deliveries, early, resumes, kept, held_at_close;
} tally;
static tally tallies[K_COUNT];

static int draw_kind(const files *fl)
{
    for (;;) {
        int k = (int)rnd(K_COUNT);
        if (fl->path[k])
            return k;
    }
}

static h5pack_config draw_config(int kind)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    static const size_t batches[] = {3, 4, 8, 16};
    static const size_t caches[] = {8 << 10, 64 << 10, 1 << 20};
    c.device = H5PACK_DEVICE_CPU;
    c.batch_size = batches[rnd(4)];
    c.cache_bytes = caches[rnd(3)];
    c.order = (h5pack_order)rnd(3);
    c.seed = rnd(1u << 16);
    c.threads = 1 + (int)rnd(4);
    c.prefetch = 2 + (int)rnd(3);
    c.dtype = rnd(3) ? H5PACK_DTYPE_FLOAT32 : H5PACK_DTYPE_UINT8;
    c.epochs = rnd(2) ? H5PACK_EPOCHS_ENDLESS : 2;
    c.drop_last = kind != K_SIZES && kind != K_TILES && rnd(4) == 0; /* those have fewer samples than a batch */
    int flip = c.dtype == H5PACK_DTYPE_FLOAT32 && rnd(2);
    static const uint32_t outs[] = {8, 12, 20};
    switch (kind) {
    case K_SIZES:
        c.crop = rnd(2) ? H5PACK_CROP_CENTER : H5PACK_CROP_RANDOM_RESIZED;
        c.output_height = c.output_width = outs[rnd(3)];
        c.random_flip = flip;
        break;
    case K_TILES:
        c.patch_size = outs[rnd(3)];
        c.random_flip = flip;
        if (rnd(2))
            c.patch_mode = H5PACK_PATCH_RANDOM, c.patches_per_epoch = rnd(2) ? 0 : 24;
        else
            c.patch_overlap = rnd(2) ? 0 : 2;
        break;
    case K_RRC:
        c.crop = H5PACK_CROP_RANDOM_RESIZED;
        c.output_height = c.output_width = outs[rnd(3)];
        c.random_flip = flip;
        break;
    case K_ECHO:
    case K_SAMPLE_ECHO:
        c.echo = 2 + rnd(2);
        c.echo_mode = kind == K_SAMPLE_ECHO ? H5PACK_ECHO_SAMPLE : H5PACK_ECHO_BATCH;
        c.random_flip = flip;
        break;
    default:
        break;
    }
    return c;
}

static h5pack_reader *open_reader(const char *path, const h5pack_config *c, int kind, int cycle)
{
    if (kind == K_PREAD)
        setenv("H5PACK_NO_MMAP", "1", 1);
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, c, &r);
    if (kind == K_PREAD)
        unsetenv("H5PACK_NO_MMAP"); /* read at open: the reader keeps its choice */
    if (rc != H5PACK_OK) {
        FAIL("cycle %d (%s): h5pack_open %s: %s", cycle, kind_names[kind], path, h5pack_last_error(r));
        h5pack_close(r);
        return NULL;
    }
    return r;
}

/* Batches held unreleased: a FIFO (the reader's ring is refilled in delivery order). */
typedef struct held {
    h5pack_batch b[HELD_MAX];
    int n;
} held;

static void release_oldest(h5pack_reader *r, held *h, int cycle)
{
    if (h5pack_release(r, &h->b[0]) != H5PACK_OK)
        FAIL("cycle %d: h5pack_release: %s", cycle, h5pack_last_error(r));
    memmove(&h->b[0], &h->b[1], (size_t)(h->n - 1) * sizeof h->b[0]);
    h->n--;
}

static int cycle_once(const files *fl, int cycle)
{
    int kind = draw_kind(fl);
    h5pack_config c = draw_config(kind);
    tally *t = &tallies[kind];
    t->cycles++;
    h5pack_reader *r = open_reader(fl->path[kind], &c, kind, cycle);
    if (!r)
        return kind;
    h5pack_info info = H5PACK_INFO_INIT;
    if (h5pack_info_get(r, &info) != H5PACK_OK) {
        FAIL("cycle %d: h5pack_info_get: %s", cycle, h5pack_last_error(r));
        h5pack_close(r);
        return kind;
    }
    uint64_t per_epoch = info.batches_per_epoch * (c.echo > 1 ? c.echo : 1);
    uint64_t total = 1 + rnd((uint32_t)(2 * per_epoch + 2)); /* deliveries asked for: past epoch ends too */
    int hold = c.echo > 1 ? 0 : (int)rnd((uint32_t)c.prefetch); /* held at a time: at most prefetch - 1 */
    uint64_t resume_at = rnd(10) < 3 ? rnd((uint32_t)total) : UINT64_MAX;
    held h = {.n = 0};
    int ended = 0;
    for (uint64_t k = 0; k < total && !ended; k++) {
        while (h.n > hold) /* asking for the next with at most prefetch - 1 held */
            release_oldest(r, &h, cycle);
        h5pack_batch b = H5PACK_BATCH_INIT;
        int rc = h5pack_next(r, &b);
        if (rc == H5PACK_END) {
            ended = 1;
            break;
        }
        if (rc != H5PACK_OK) {
            FAIL("cycle %d (%s): h5pack_next: %s", cycle, kind_names[kind], h5pack_last_error(r));
            break;
        }
        t->deliveries++;
        if (k == resume_at) {
            /* this delivery is the reference: release everything, close, reopen at its position */
            uint64_t want = delivery_digest(&b);
            c.start_epoch = b.epoch, c.start_batch = b.index, c.start_echo = b.echo;
            while (h.n)
                release_oldest(r, &h, cycle);
            if (h5pack_release(r, &b) != H5PACK_OK)
                FAIL("cycle %d: h5pack_release: %s", cycle, h5pack_last_error(r));
            h5pack_close(r);
            r = open_reader(fl->path[kind], &c, kind, cycle);
            if (!r)
                return kind;
            b = (h5pack_batch)H5PACK_BATCH_INIT;
            if (h5pack_next(r, &b) != H5PACK_OK)
                FAIL("cycle %d (%s): h5pack_next after the resume: %s", cycle, kind_names[kind], h5pack_last_error(r));
            else if (delivery_digest(&b) != want)
                FAIL("cycle %d (%s): resumed at (%llu, %llu, %u): the delivery differs from the uninterrupted one",
                     cycle, kind_names[kind], (unsigned long long)c.start_epoch, (unsigned long long)c.start_batch,
                     c.start_echo);
            t->resumes++;
        }
        if (b.token && rnd(8) == 0) {
            keep(r, &b, cycle);
            t->kept++;
        }
        if (b.token)
            h.b[h.n++] = b;
    }
    t->early += !ended; /* stopped before H5PACK_END: mid-epoch, or an endless reader */
    if (h.n && rnd(2))
        while (h.n)
            release_oldest(r, &h, cycle);
    t->held_at_close += h.n;
    h5pack_close(r); /* half the time with batches still held */
    return kind;
}

/* A thread that pthread_join has seen end can stay listed in /proc/self/task for a moment (the kernel
 * wakes the joiner when it clears the thread's tid, before it unlists the task): the count after a close
 * is read again, every 0.1 ms for up to 2 s, until it is back to WANT. Returns the count then and the
 * microseconds it took in *WAITED_US. */
static long threads_settled(long want, long *waited_us)
{
    long n = count_entries("/proc/self/task");
    *waited_us = 0;
    for (int i = 0; i < 20000 && n > want; i++) {
        usleep(100);
        *waited_us += 100;
        n = count_entries("/proc/self/task");
    }
    return n;
}

static char *argument(int argc, char **argv, const char *name)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return NULL;
}

int main(int argc, char **argv)
{
    int cycles = argument(argc, argv, "--cycles") ? atoi(argument(argc, argv, "--cycles")) : 40;
    int warmup = argument(argc, argv, "--warmup") ? atoi(argument(argc, argv, "--warmup")) : 4;
    rng_state = argument(argc, argv, "--seed") ? strtoull(argument(argc, argv, "--seed"), NULL, 10) : 41;
    double rss_growth = argument(argc, argv, "--rss-growth") ? atof(argument(argc, argv, "--rss-growth")) : 16;
    if (cycles < 1 || warmup < 0 || warmup >= cycles) {
        fprintf(stderr, "usage: soak_c [--cycles N] [--seed S] [--warmup W < N] [--sizes FILE] [--tiles FILE] "
                        "[--rss-growth MIB]\n");
        return 2;
    }
    const char *dir = h5fix_tmpdir("soak_c");
    char mapped[512], old[512], gzip[512];
    snprintf(mapped, sizeof mapped, "%s/mapped.h5", dir);
    snprintf(old, sizeof old, "%s/old.h5", dir);
    snprintf(gzip, sizeof gzip, "%s/gzip.h5", dir);
    h5fix_file spec = {.n = 61, .c = 3, .h = 12, .w = 10, .k = 6, .labels = 1, .n_classes = 5};
    if (h5fix_write(mapped, &spec) != 0)
        return 1;
    spec.old_format = 1;
    if (h5fix_write(old, &spec) != 0)
        return 1;
    spec.old_format = 0, spec.gzip = 4, spec.pixel = h5fix_pixel_sparse;
    if (h5fix_write(gzip, &spec) != 0)
        return 1;
    files fl = {{[K_MAPPED] = mapped, [K_PREAD] = mapped, [K_OLD] = old, [K_GZIP] = gzip, [K_RRC] = mapped,
                 [K_ECHO] = mapped, [K_SAMPLE_ECHO] = gzip, [K_SIZES] = argument(argc, argv, "--sizes"),
                 [K_TILES] = argument(argc, argv, "--tiles")}};

    long *rss = calloc((size_t)cycles, sizeof *rss);
    if (!rss)
        return 1;
    resources first = measure(), warm = first;
    long late = 0, late_max_us = 0;
    for (int i = 0; i < cycles; i++) {
        resources before = measure();
        int kind = cycle_once(&fl, i);
        check_kept(i);
        resources after = measure();
        rss[i] = after.rss_kib;
        if (i == warmup)
            warm = before;
        if (after.threads > before.threads) { /* listed a moment longer than joined, or left behind */
            long waited = 0;
            after.threads = threads_settled(before.threads, &waited);
            if (after.threads <= before.threads) {
                late++;
                late_max_us = waited > late_max_us ? waited : late_max_us;
            }
        }
        if (i >= warmup && (after.fds != before.fds || after.threads != before.threads))
            FAIL("cycle %d (%s): descriptors %ld -> %ld, threads %ld -> %ld across the cycle (2 s after the close)",
                 i, kind_names[kind], before.fds, after.fds, before.threads, after.threads);
        if (after.children)
            FAIL("cycle %d (%s): %ld child process(es) left after the close", i, kind_names[kind], after.children);
    }
    resources last = measure();
    int q = cycles / 4 ? cycles / 4 : 1;
    double early = 0, late_kib = 0;
    for (int i = 0; i < q; i++)
        early += rss[q + i < cycles ? q + i : cycles - 1], late_kib += rss[cycles - 1 - i];
    early /= q, late_kib /= q;
    printf("%-12s %6s %10s %6s %6s %7s %12s\n", "path", "cycles", "deliveries", "early", "kept", "resumes",
           "held@close");
    for (int k = 0; k < K_COUNT; k++)
        printf("%-12s %6ld %10ld %6ld %6ld %7ld %12ld\n", kind_names[k], tallies[k].cycles, tallies[k].deliveries,
               tallies[k].early, tallies[k].kept, tallies[k].resumes, tallies[k].held_at_close);
    printf("%d cycles: descriptors %ld -> %ld (after warm-up %ld), threads %ld -> %ld (%ld; %ld cycle(s) with a "
           "joined thread still listed right after the close, gone within %ld us), RSS %ld -> %ld KiB, mean of "
           "cycles %d..%d %.0f KiB, last %d %.0f KiB (%+.0f KiB)%s\n",
           cycles, first.fds, last.fds, warm.fds, first.threads, last.threads, warm.threads, late, late_max_us,
           first.rss_kib, last.rss_kib, q, 2 * q - 1, early, q, late_kib, late_kib - early,
           SANITIZED ? " (sanitizer build: RSS not checked)" : "");
    if (last.fds > warm.fds || last.threads > warm.threads)
        FAIL("left behind: descriptors %ld (%ld after the warm-up), threads %ld (%ld)", last.fds, warm.fds,
             last.threads, warm.threads);
    if (!SANITIZED && rss_growth > 0 && late_kib - early > rss_growth * 1024)
        FAIL("RSS grew by %.0f KiB between cycles %d..%d and the last %d: more than %g MiB", late_kib - early, q,
             2 * q - 1, q, rss_growth);
    for (int i = 0; i < kept_n; i++)
        h5pack_detached_free(kept_pool[i].mem);
    h5pack_trim();
    free(rss);
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("soak passed: descriptors, threads and children flat, detached batches unchanged, resumes exact\n");
    return 0;
}
