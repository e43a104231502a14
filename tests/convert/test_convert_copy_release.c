/* test_convert_copy_release.c - the copy that skipped images make necessary (h5out_copy.c) hands the first
 * file's disk space back while it goes (space_release.h), and still copies every byte.
 *
 * Writes a first file as the converter does (every chunk in place, non-zero bytes), copies it with
 * h5out_copy_ragged (images of several sizes with gaps between them; unfiltered and gzip) and with
 * h5out_copy_chunks (one size, fewer rows), then checks that the first file's allocated blocks fell to
 * a few chunks before it is removed (so the first file and the copy never hold twice the output on disk),
 * that the first file still has its length, and that the copy holds exactly the source's bytes. And
 * space_release itself: a run of adjacent ranges is handed back in steps while it grows (not only at the
 * end), and an unaligned range reads back as zeros with its neighbours' bytes intact. On a file system that
 * cannot punch holes, only the copies are checked. */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "chunk_filter.h"
#include "h5out.h"
#include "space_release.h"

#define CHUNK (256u << 10) /* bytes per chunk of the ragged store; one-size chunks are as large */
#define N_CHUNKS 59u      /* 15 MiB: the release goes in steps of 8 MiB (space_release.c), then the rest */
#define N_IMAGES 40u

static char dir[64];
static int can_punch;
static uint64_t stored; /* bytes of chunks written to the first file being made */

static uint8_t byte_at(uint64_t off)
{
    return (uint8_t)((off * 2654435761u >> 13) | 1); /* never 0: a lost byte shows */
}

/* Whether this file system deallocates punched ranges (ext4, xfs, btrfs, tmpfs do; some others do not). */
static int probe_punch(void)
{
    char path[96];
    snprintf(path, sizeof path, "%s/probe", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600), ok = 0;
    static uint8_t block[1 << 16];
    memset(block, 7, sizeof block);
    if (fd >= 0 && write(fd, block, sizeof block) == (ssize_t)sizeof block && fsync(fd) == 0)
        ok = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, sizeof block) == 0;
    if (fd >= 0)
        close(fd);
    unlink(path);
    return ok;
}

static uint64_t allocated(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_blocks * 512 : 0;
}

static uint64_t length(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Writes raw chunk I (RAW_BYTES of the pattern from byte I * RAW_BYTES on), filtered as G says. */
static void write_chunk(h5out *o, const h5out_geometry *g, uint64_t i, size_t raw_bytes)
{
    static struct libdeflate_compressor *comp;
    char err[512] = "";
    uint8_t *raw = malloc(raw_bytes), *out = malloc(chunk_filter_bound(raw_bytes));
    CHECK_MSG(raw && out, "out of memory");
    for (size_t k = 0; raw && k < raw_bytes; k++)
        raw[k] = byte_at(i * raw_bytes + k);
    size_t size = raw_bytes;
    const uint8_t *data = raw;
    if (g->gzip_level) {
        size = chunk_filter_apply(g->gzip_level, 0, &comp, raw, raw_bytes, out);
        data = out;
    }
    CHECK_MSG(h5out_write_chunk(o, i, data, size, err, sizeof err) == 0, "chunk %llu: %s", (unsigned long long)i, err);
    stored += size;
    free(raw);
    free(out);
}

/* BYTES bytes at AT of the images dataset of PATH (1-D, or the first rows of a 4-D one read flat). */
static uint8_t *read_images(const char *path, uint64_t bytes)
{
    uint8_t *buf = malloc(bytes ? bytes : 1);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d = f >= 0 ? H5Dopen2(f, "images", H5P_DEFAULT) : -1;
    CHECK_MSG(buf && d >= 0 && H5Dread(d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0,
              "%s: cannot read the images", path);
    if (d >= 0)
        H5Dclose(d);
    if (f >= 0)
        H5Fclose(f);
    return buf;
}

/* The first file's blocks once the copy is done: a few chunks at most (the store's tail after the last
 * image, HDF5's metadata), far below the stored chunks. */
static void check_released(const char *what, const char *first, uint64_t before, uint64_t first_length)
{
    uint64_t after = allocated(first);
    printf("%s: first file %llu bytes allocated before the copy, %llu after (%llu bytes of chunks)\n", what,
           (unsigned long long)before, (unsigned long long)after, (unsigned long long)stored);
    CHECK_MSG(before >= stored, "%s: the first file is written out (%llu of %llu)", what, (unsigned long long)before,
              (unsigned long long)stored);
    CHECK_MSG(length(first) == first_length, "%s: the first file keeps its length", what);
    if (can_punch)
        CHECK_MSG(after <= 4 * (uint64_t)CHUNK + (64u << 10), "%s: the copy handed the first file's blocks back "
                  "(%llu bytes left)", what, (unsigned long long)after);
}

/* Images of several sizes: N_IMAGES images with gaps between some, copied together. */
static void test_ragged(int gzip)
{
    const char *what = gzip ? "ragged, gzip" : "ragged";
    char first[96], second[96], err[512] = "";
    snprintf(first, sizeof first, "%s/first%d.h5", dir, gzip);
    snprintf(second, sizeof second, "%s/second%d.h5", dir, gzip);
    uint64_t from[N_IMAGES], to[N_IMAGES], at = 0, kept = 0, total = (uint64_t)N_CHUNKS * CHUNK;
    uint32_t shapes[2 * N_IMAGES];
    for (uint32_t i = 0; i < N_IMAGES; i++) { /* about 380 KiB each, a gap of 4 KiB after every third one */
        shapes[2 * i] = 400, shapes[2 * i + 1] = 700 + 13 * i;
        from[i] = at, to[i] = kept;
        at += 400u * shapes[2 * i + 1] + (i % 3 == 2 ? 4096 : 0);
        kept += 400u * shapes[2 * i + 1];
    }
    CHECK_MSG(at <= total && total - at < CHUNK, "%s: the images fill the store up to its last chunk", what);
    h5out_geometry g = {.n = N_IMAGES, .channels = 1, .height = 400, .width = 1207, .nhwc = 1, .ragged = 1,
                        .total_bytes = total, .chunk_bytes = CHUNK, .gzip_level = gzip ? 1 : 0};
    h5out *o = NULL;
    stored = 0;
    CHECK_MSG(h5out_create(first, &g, &o, err, sizeof err) == 0, "%s: %s", what, err);
    for (uint64_t i = 0; o && i < N_CHUNKS; i++)
        write_chunk(o, &g, i, CHUNK);
    CHECK_MSG(h5out_close(o, err, sizeof err) == 0, "%s: %s", what, err);
    uint64_t before = allocated(first), first_length = length(first);
    h5out_geometry g2 = g;
    g2.total_bytes = kept, g2.chunk_bytes = CHUNK - 4096; /* the converter evens the chunks out anew */
    CHECK_MSG(h5out_create(second, &g2, &o, err, sizeof err) == 0, "%s: %s", what, err);
    CHECK_MSG(h5out_copy_ragged(o, first, from, to, shapes, N_IMAGES, err, sizeof err) == 0, "%s: copy: %s", what, err);
    check_released(what, first, before, first_length);
    CHECK_MSG(h5out_close(o, err, sizeof err) == 0, "%s: %s", what, err);
    uint8_t *got = read_images(second, kept);
    size_t wrong = 0;
    for (uint32_t i = 0; got && i < N_IMAGES; i++)
        for (uint64_t k = 0; k < 400u * shapes[2 * i + 1]; k++)
            wrong += got[to[i] + k] != byte_at(from[i] + k);
    CHECK_MSG(wrong == 0, "%s: the copy holds every image's bytes (%zu wrong)", what, wrong);
    free(got);
    unlink(first);
    unlink(second);
}

/* One size: 59 chunks of 4 images of 256 x 256 gray, of which 229 images are kept. */
static void test_one_size(void)
{
    char first[96], second[96], err[512] = "";
    snprintf(first, sizeof first, "%s/first_fixed.h5", dir);
    snprintf(second, sizeof second, "%s/second_fixed.h5", dir);
    const uint64_t k = 4, rows = k * N_CHUNKS, n = rows - 7, image = 256 * 256;
    h5out_geometry g = {.n = rows, .channels = 1, .height = 256, .width = 256, .nhwc = 1, .chunk_images = k};
    h5out *o = NULL;
    stored = 0;
    CHECK_MSG(h5out_create(first, &g, &o, err, sizeof err) == 0, "one size: %s", err);
    for (uint64_t i = 0; o && i < N_CHUNKS; i++)
        write_chunk(o, &g, i, k * image);
    CHECK_MSG(h5out_close(o, err, sizeof err) == 0, "one size: %s", err);
    uint64_t before = allocated(first), first_length = length(first);
    h5out_geometry g2 = g;
    g2.n = n;
    CHECK_MSG(h5out_create(second, &g2, &o, err, sizeof err) == 0, "one size: %s", err);
    CHECK_MSG(h5out_copy_chunks(o, first, (n + k - 1) / k, err, sizeof err) == 0, "one size: copy: %s", err);
    check_released("one size", first, before, first_length);
    CHECK_MSG(h5out_close(o, err, sizeof err) == 0, "one size: %s", err);
    uint8_t *got = read_images(second, n * image);
    size_t wrong = 0;
    for (uint64_t b = 0; got && b < n * image; b++)
        wrong += got[b] != byte_at(b);
    CHECK_MSG(wrong == 0, "one size: the copy holds every row's bytes (%zu wrong)", wrong);
    free(got);
    unlink(first);
    unlink(second);
}

/* 24 MiB of the pattern; 12 MiB of it released 1 MiB at a time, then 4900 unaligned bytes further on. */
static void test_space_release(void)
{
    const uint64_t mib = 1u << 20, size = 24 * mib, odd_at = 12 * mib + 100, odd_len = 4900;
    char path[96];
    snprintf(path, sizeof path, "%s/release", dir);
    uint8_t *data = malloc(size), back[8192];
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK_MSG(data && fd >= 0, "cannot write %s", path);
    for (uint64_t k = 0; k < size; k++)
        data[k] = byte_at(k);
    CHECK_MSG(write(fd, data, size) == (ssize_t)size && fsync(fd) == 0, "cannot write %s", path);
    space_release r;
    space_release_open(&r, path);
    for (uint64_t i = 0; i < 12; i++)
        space_release_range(&r, i * mib, mib);
    uint64_t during = allocated(path);
    space_release_range(&r, odd_at, odd_len); /* not adjacent: the first run's rest goes, a new run starts */
    space_release_close(&r);
    uint64_t after = allocated(path);
    printf("space_release: %llu bytes allocated while releasing, %llu after\n", (unsigned long long)during,
           (unsigned long long)after);
    if (can_punch) {
        CHECK_MSG(during <= size - 8 * mib, "space_release: a growing run is handed back in steps (%llu allocated)",
                  (unsigned long long)during);
        CHECK_MSG(after <= size - 12 * mib + 8192, "space_release: the whole run is handed back (%llu allocated)",
                  (unsigned long long)after);
        CHECK_MSG(r.released == 12 * mib + odd_len, "space_release: counts %llu bytes", (unsigned long long)r.released);
    }
    CHECK_MSG(pread(fd, back, sizeof back, (off_t)(12 * mib)) == (ssize_t)sizeof back, "cannot read %s", path);
    size_t wrong = 0;
    for (uint64_t k = 0; k < sizeof back; k++) {
        uint64_t at = 12 * mib + k;
        int released = can_punch && at >= odd_at && at < odd_at + odd_len;
        wrong += back[k] != (released ? 0 : data[at]);
    }
    CHECK_MSG(wrong == 0, "space_release: an unaligned range reads back as zeros, its neighbours intact (%zu wrong)",
              wrong);
    CHECK_MSG(length(path) == size, "space_release: the file keeps its length");
    close(fd);
    free(data);
    unlink(path);
}

int main(void)
{
    snprintf(dir, sizeof dir, "copy_release.XXXXXX");
    CHECK_MSG(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
    can_punch = probe_punch();
    if (!can_punch)
        printf("this file system does not punch holes: only the copies are checked\n");
    test_space_release();
    test_ragged(0);
    test_ragged(1);
    test_one_size();
    rmdir(dir);
    printf("copy_release: ok\n");
    return 0;
}
