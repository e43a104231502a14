/* test_chunksrc_corrupt.c - damaged files: truncated at many sizes, bytes flipped all over the metadata,
 * bytes flipped in chunk data. Each gives an error code and a message naming the file, or (for damage
 * HDF5 cannot see, such as a changed pixel in an unchecksummed chunk) reads without crashing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "chunk_compare.h"

/* HDF5 1.10.8 leaks internal structures (metadata cache entries, layout messages) when it meets damaged
 * metadata, and then cannot shut down ("HDF5: infinite loop closing library" at exit). Every such stack
 * lies inside libhdf5; LeakSanitizer (ASan builds) reads this hook, so only this program ignores them:
 * the tests on well-formed files run without it and still catch our own leaks. */
const char *__lsan_default_suppressions(void);
/* Exported: the sanitizer runtime looks this hook up dynamically (the build hides symbols by default). */
__attribute__((visibility("default"))) const char *__lsan_default_suppressions(void)
{
    return "leak:libhdf5\n";
}

typedef struct blob {
    uint8_t *data;
    size_t size;
} blob;

static blob load(const char *path)
{
    blob b = {NULL, 0};
    FILE *f = fopen(path, "rb");
    CHECK(f);
    fseek(f, 0, SEEK_END);
    b.size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    b.data = malloc(b.size + 1);
    CHECK(fread(b.data, 1, b.size, f) == b.size);
    fclose(f);
    return b;
}

static void write_bytes(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    CHECK(f);
    CHECK(fwrite(data, 1, size, f) == size);
    fclose(f);
}

/* Opens and, if that works, reads every chunk. Returns the first error code (0 if none); checks that
 * a failure comes with the file name. */
static int open_and_read_all(const char *path)
{
    char err[1024] = "";
    chunk_source *s = NULL;
    int rc = h5pack_chunksrc_open(path, "images", "labels", H5PACK_LAYOUT_AUTO, &s, err, sizeof err);
    if (rc) {
        CHECK(rc < 0 && s == NULL);
        CHECK_STR_CONTAINS(err, path);
        return rc;
    }
    const source_geometry *g = h5pack_chunksrc_geometry(s);
    uint8_t *buf = malloc(g->chunk_bytes);
    chunksrc_scratch *sc = h5pack_chunksrc_scratch_new(s);
    CHECK(buf && sc);
    for (uint64_t c = 0; c < g->n_chunks && rc == 0; c++) {
        rc = h5pack_chunksrc_read(s, c, buf, sc, NULL, err, sizeof err);
        if (rc) {
            CHECK(rc == H5PACK_ECORRUPT || rc == H5PACK_EIO || rc == H5PACK_EHDF5);
            CHECK_STR_CONTAINS(err, path);
            CHECK_STR_CONTAINS(err, "chunk");
        }
    }
    h5pack_chunksrc_scratch_free(sc);
    free(buf);
    h5pack_chunksrc_close(s);
    return rc;
}

static void test_truncated(const char *path, const blob *b)
{
    char cut[700];
    size_t sizes[] = {0, 1, 7, 8, 64, 200, 512, 1000, 2048, b->size / 3, b->size / 2, b->size - 100, b->size - 1};
    snprintf(cut, sizeof cut, "%s.cut", path);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (sizes[i] >= b->size)
            continue;
        write_bytes(cut, b->data, sizes[i]);
        int rc = open_and_read_all(cut);
        CHECK_MSG(rc != 0, "%s truncated to %zu bytes was accepted", path, sizes[i]);
    }
}

/* HDF5 files and objects still open (dataspaces and property lists are not countable through the
 * public API; the ASan build's leak check covers those). */
static long long open_ids(void)
{
    return (long long)H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
}

/* Flips each of the first LIMIT bytes (then every STRIDE-th): never a crash or hang, and a failure has a
 * message. Returns how many flips were detected. */
static int flip_sweep(const char *path, const blob *b, size_t limit, size_t stride, int *tried)
{
    char bad[700];
    int detected = 0;
    snprintf(bad, sizeof bad, "%s.flip", path);
    *tried = 0;
    for (size_t pos = 0; pos < b->size; pos += pos < limit ? 1 : stride) {
        b->data[pos] ^= 0x5a;
        write_bytes(bad, b->data, b->size);
        b->data[pos] ^= 0x5a;
        detected += open_and_read_all(bad) != 0;
        CHECK_MSG(open_ids() == 0, "%s with byte %zu flipped: %lld HDF5 identifiers left open", path, pos,
                  open_ids());
        ++*tried;
    }
    return detected;
}

static haddr_t chunk_addr(const char *path, uint64_t row, hsize_t *size)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "images", H5P_DEFAULT);
    hsize_t off[4] = {row, 0, 0, 0};
    unsigned mask;
    haddr_t addr = HADDR_UNDEF;
    CHECK(H5Dget_chunk_info_by_coord(d, off, &mask, &addr, size) >= 0);
    H5Dclose(d);
    H5Fclose(f);
    return addr;
}

/* Flips one byte in the middle of chunk 1 and reads chunk 1: returns its rc; *DIFFERS says whether the
 * bytes differed from the written pattern. */
static int read_flipped_chunk(const char *path, const blob *b, int *differs, char *err, size_t err_len)
{
    char bad[700];
    hsize_t size;
    haddr_t addr = chunk_addr(path, 4, &size);
    snprintf(bad, sizeof bad, "%s.data", path);
    b->data[addr + size / 2] ^= 0x10;
    write_bytes(bad, b->data, b->size);
    b->data[addr + size / 2] ^= 0x10;
    chunk_source *s = NULL;
    CHECK_OK(h5pack_chunksrc_open(bad, "images", "labels", H5PACK_LAYOUT_AUTO, &s, err, err_len));
    const source_geometry *g = h5pack_chunksrc_geometry(s);
    uint8_t *buf = calloc(1, g->chunk_bytes);
    int rc = h5pack_chunksrc_read(s, 1, buf, NULL, NULL, err, err_len);
    *differs = 0;
    for (uint64_t j = 0; rc == 0 && j < g->chunk_bytes; j++)
        *differs += buf[j] != h5fix_pixel_rows(NULL, 4 + j / g->image_bytes, j % g->image_bytes);
    free(buf);
    h5pack_chunksrc_close(s);
    return rc;
}

static void test_chunk_data(const char *dir)
{
    char path[600], err[1024];
    int differs;
    h5fix_file tf = CHUNKSRC_TEST_FILE;
    snprintf(path, sizeof path, "%s/data-implicit.h5", dir);
    CHECK_OK(h5fix_write(path, &tf));
    blob b = load(path);
    CHECK_OK(read_flipped_chunk(path, &b, &differs, err, sizeof err));
    CHECK_EQ_INT(differs, 1); /* no checksum: one different pixel, nothing else */
    free(b.data);

    tf.gzip = 4;
    snprintf(path, sizeof path, "%s/data-gzip.h5", dir);
    CHECK_OK(h5fix_write(path, &tf));
    b = load(path);
    int rc = read_flipped_chunk(path, &b, &differs, err, sizeof err);
    printf("gzip chunk flip: %d %s\n", rc, err);
    CHECK(rc == H5PACK_ECORRUPT || (rc == 0 && differs > 0));
    if (rc)
        CHECK_STR_CONTAINS(err, "chunk 1");
    free(b.data);

    tf.gzip = 0;
    tf.fletcher32 = 1;
    snprintf(path, sizeof path, "%s/data-fletcher.h5", dir);
    CHECK_OK(h5fix_write(path, &tf));
    b = load(path);
    rc = read_flipped_chunk(path, &b, &differs, err, sizeof err);
    printf("fletcher32 chunk flip: %d %s\n", rc, err);
    CHECK_EQ_INT(rc, H5PACK_ECORRUPT);
    CHECK_STR_CONTAINS(err, "chunk 1");
    free(b.data);
}

/* Flip sweep density: every byte of the first LIMIT, then every STRIDE-th (argv: LIMIT STRIDE). Sparser
 * under ASan, where each probe fork of the instrumented process costs milliseconds. */
#if defined(__SANITIZE_ADDRESS__)
static size_t g_limit = 48, g_stride = 151;
#else
static size_t g_limit = 96, g_stride = 61;
#endif

static void test_metadata(const char *dir)
{
    struct {
        const char *name;
        int h5py, contiguous; /* h5py: resizable, old format; contiguous: old format */
        int gzip, fletcher32, split; /* split: chunks (5,2,3,4), slabs of 2x3x3 HDF5 chunks */
    } cases[] = {{.name = "implicit"},
                 {.name = "gzip", .gzip = 4},
                 {.name = "fletcher", .fletcher32 = 1},
                 {.name = "resizable", .h5py = 1, .gzip = 4},
                 {.name = "contiguous", .contiguous = 1},
                 {.name = "split-gzip", .h5py = 1, .gzip = 4, .split = 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[600];
        h5fix_file tf = CHUNKSRC_TEST_FILE;
        tf.resizable = cases[i].h5py, tf.contiguous = cases[i].contiguous;
        tf.old_format = cases[i].h5py || cases[i].contiguous;
        tf.gzip = cases[i].gzip;
        tf.fletcher32 = cases[i].fletcher32;
        if (cases[i].split)
            memcpy(tf.chunk, (uint64_t[4]){5, 2, 3, 4}, sizeof tf.chunk);
        snprintf(path, sizeof path, "%s/meta-%s.h5", dir, cases[i].name);
        CHECK_OK(h5fix_write(path, &tf));
        blob b = load(path);
        CHECK_OK(open_and_read_all(path));
        test_truncated(path, &b);
        int tried = 0, detected = flip_sweep(path, &b, g_limit, g_stride, &tried);
        printf("%-10s %zu bytes: %d of %d flips detected, none crashed\n", cases[i].name, b.size, detected, tried);
        free(b.data);
    }
}

int main(int argc, char **argv)
{
    if (argc > 2) {
        g_limit = (size_t)strtoul(argv[1], NULL, 10);
        g_stride = (size_t)strtoul(argv[2], NULL, 10);
        CHECK(g_stride > 0);
    }
    const char *dir = h5fix_tmpdir("chunksrc-corrupt");
    test_chunk_data(dir);
    test_metadata(dir);
    printf("ok\n");
    return 0;
}
