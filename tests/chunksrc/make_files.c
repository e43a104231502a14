/* make_files.c - see make_files.h. */
#include "make_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

test_file test_file_defaults(void)
{
    test_file tf;
    memset(&tf, 0, sizeof tf);
    tf.n = 23;
    tf.c = 3;
    tf.h = 8;
    tf.w = 10;
    tf.k = 4;
    tf.storage = STORE_IMPLICIT;
    tf.labels = 1;
    tf.n_classes = 5;
    tf.write_classes = 1;
    return tf;
}

uint8_t test_pixel(uint64_t i, uint64_t j)
{
    return (uint8_t)(i * 37u + (j / 8u) * 3u + (j & 1u));
}

static char g_tmpdir[512];

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Removes the test's directory at exit, unless H5PACK_KEEP_TEST_FILES is set (for debugging). */
static void remove_tmpdir(void)
{
    if (g_tmpdir[0] && !getenv("H5PACK_KEEP_TEST_FILES"))
        nftw(g_tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *test_tmpdir(const char *test_name)
{
    char *dir = g_tmpdir;
    if (!dir[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(dir, sizeof g_tmpdir, "%s/h5pack-%s-XXXXXX", base && base[0] ? base : "/tmp", test_name);
        if (!mkdtemp(dir)) {
            perror("mkdtemp");
            exit(1);
        }
        atexit(remove_tmpdir);
    }
    return dir;
}

/* The dataset's shape: 4-D by layout; rank 3 is (N,H,W) (gray: set c = 1); rank 2 is (N,H). */
static void image_dims(const test_file *tf, hsize_t *dims)
{
    int rank = tf->rank ? tf->rank : 4;
    dims[0] = tf->n;
    dims[1] = rank < 4 ? tf->h : tf->nhwc ? tf->h : tf->c;
    dims[2] = rank < 4 ? tf->w : tf->nhwc ? tf->w : tf->h;
    dims[3] = tf->nhwc ? tf->c : tf->w;
}

static hid_t make_fapl(const test_file *tf)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (tf->storage == STORE_IMPLICIT)
        H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
    return fapl;
}

static hid_t make_dcpl(const test_file *tf, const hsize_t *dims, int rank)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_obj_track_times(dcpl, 0);
    if (tf->storage == STORE_CONTIGUOUS || tf->storage == STORE_EMPTY_CONTIGUOUS)
        return dcpl;
    hsize_t chunk[4] = {tf->k, dims[1], dims[2], dims[3]}; /* the first RANK entries count */
    if (tf->chunk_override[0])
        memcpy(chunk, tf->chunk_override, sizeof chunk);
    H5Pset_chunk(dcpl, rank, chunk);
    if (tf->fletcher32)
        H5Pset_fletcher32(dcpl);
    if (tf->shuffle)
        H5Pset_shuffle(dcpl);
    if (tf->gzip)
        H5Pset_deflate(dcpl, (unsigned)tf->gzip);
    if (tf->storage == STORE_IMPLICIT)
        H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
    return dcpl;
}

static uint8_t *make_pixels(const test_file *tf)
{
    uint64_t image = (uint64_t)tf->c * tf->h * tf->w;
    uint8_t *px = malloc(tf->n * image + 1);
    for (uint64_t i = 0; i < tf->n; i++)
        for (uint64_t j = 0; j < image; j++)
            px[i * image + j] = test_pixel(i, j);
    return px;
}

/* Writes all rows, or (skip_chunks_from) only the rows of the chunks before it. */
static int write_pixels(hid_t dset, hid_t space, const test_file *tf, const hsize_t *dims, int rank)
{
    uint8_t *px = make_pixels(tf);
    herr_t rc;
    if (tf->skip_chunks_from > 0) {
        hsize_t k = tf->chunk_override[0] ? tf->chunk_override[0] : tf->k;
        hsize_t start[4] = {0, 0, 0, 0}, count[4] = {(hsize_t)tf->skip_chunks_from * k, dims[1], dims[2], dims[3]};
        hid_t mem = H5Screate_simple(rank, count, NULL);
        H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
        rc = H5Dwrite(dset, H5T_NATIVE_UINT8, mem, space, H5P_DEFAULT, px);
        H5Sclose(mem);
    } else { /* H5S_ALL: HDF5 converts the uint8 pattern to the file's type and rank's extent */
        rc = tf->n ? H5Dwrite(dset, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, px) : 0;
    }
    free(px);
    return rc < 0 ? -1 : 0;
}

static void write_string_attr(hid_t obj, const char *name, const char *value)
{
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, strlen(value));
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(attr, type, value);
    H5Aclose(attr);
    H5Sclose(space);
    H5Tclose(type);
}

static int write_images(hid_t file, const test_file *tf)
{
    hsize_t dims[4], maxdims[4] = {H5S_UNLIMITED, 0, 0, 0};
    int rank = tf->rank ? tf->rank : 4;
    image_dims(tf, dims);
    for (int i = 1; i < 4; i++)
        maxdims[i] = dims[i];
    int resizable = tf->storage == STORE_CHUNKED;
    hid_t space = H5Screate_simple(rank, dims, resizable ? maxdims : NULL);
    hid_t dcpl = make_dcpl(tf, dims, rank);
    hid_t type = tf->image_type ? tf->image_type : H5T_NATIVE_UINT8;
    hid_t dset = H5Dcreate2(file, "images", type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    int rc = dset < 0 ? -1 : 0;
    if (!rc && tf->storage != STORE_EMPTY_CONTIGUOUS && tf->skip_chunks_from >= 0)
        rc = write_pixels(dset, space, tf, dims, rank);
    if (!rc && tf->layout_attr)
        write_string_attr(dset, "layout", tf->layout_attr);
    if (dset >= 0)
        H5Dclose(dset);
    H5Pclose(dcpl);
    H5Sclose(space);
    return rc;
}

static int write_labels(hid_t file, const test_file *tf)
{
    hsize_t len = (hsize_t)((int64_t)tf->n + tf->label_len_delta);
    int64_t *v = malloc((len + 1) * sizeof *v);
    for (hsize_t i = 0; i < len; i++)
        v[i] = (int64_t)(i % (tf->n_classes ? tf->n_classes : 1));
    if (tf->negative_label && len > 2)
        v[len / 2] = -1;
    hid_t space = H5Screate_simple(1, &len, NULL);
    hid_t type = tf->label_type ? tf->label_type : H5T_STD_U8LE;
    hid_t d = H5Dcreate2(file, "labels", type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int rc = d >= 0 && H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0 ? 0 : -1;
    if (d >= 0)
        H5Dclose(d);
    H5Sclose(space);
    free(v);
    return rc;
}

static int write_classes(hid_t file, const test_file *tf)
{
    hsize_t n = tf->n_classes;
    const char **names = malloc((n + 1) * sizeof *names);
    char(*buf)[32] = malloc((n + 1) * sizeof *buf);
    for (hsize_t i = 0; i < n; i++) {
        snprintf(buf[i], sizeof buf[i], "class%llu", (unsigned long long)i);
        names[i] = buf[i];
    }
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    hid_t space = H5Screate_simple(1, &n, NULL);
    hid_t d = H5Dcreate2(file, "classes", type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int rc = d >= 0 && H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, names) >= 0 ? 0 : -1;
    if (d >= 0)
        H5Dclose(d);
    H5Sclose(space);
    H5Tclose(type);
    free(names);
    free(buf);
    return rc;
}

static void write_mean_std(hid_t file, const test_file *tf)
{
    double mean[4] = {0.1, 0.2, 0.3, 0.4}, std[4] = {0.5, 0.6, 0.7, 0.8};
    hsize_t c = tf->c;
    hid_t space = H5Screate_simple(1, &c, NULL);
    hid_t a = H5Acreate2(file, "mean", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_DOUBLE, mean);
    H5Aclose(a);
    a = H5Acreate2(file, "std", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_DOUBLE, std);
    H5Aclose(a);
    H5Sclose(space);
}

int test_file_write(const char *path, const test_file *tf)
{
    hid_t fapl = make_fapl(tf), fcpl = H5Pcreate(H5P_FILE_CREATE);
    if (tf->userblock)
        H5Pset_userblock(fcpl, tf->userblock);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
    H5Pclose(fapl);
    H5Pclose(fcpl);
    if (file < 0) {
        fprintf(stderr, "cannot create %s\n", path);
        return -1;
    }
    int rc = write_images(file, tf);
    if (!rc && tf->labels)
        rc = write_labels(file, tf);
    if (!rc && tf->write_classes)
        rc = write_classes(file, tf);
    if (!rc && tf->mean_std)
        write_mean_std(file, tf);
    if (H5Fclose(file) < 0)
        rc = -1;
    if (rc)
        fprintf(stderr, "writing %s failed\n", path);
    return rc;
}

static int read_rows(hid_t dset, uint64_t first, uint64_t count, uint8_t *out)
{
    hsize_t cnt[4];
    hid_t fspace = H5Dget_space(dset);
    int rank = H5Sget_simple_extent_dims(fspace, cnt, NULL); /* 4, or 3 for gray images */
    hsize_t start[4] = {first, 0, 0, 0};
    cnt[0] = count;
    hid_t mem = H5Screate_simple(rank, cnt, NULL);
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, cnt, NULL);
    herr_t rc = H5Dread(dset, H5T_NATIVE_UINT8, mem, fspace, H5P_DEFAULT, out);
    H5Sclose(mem);
    H5Sclose(fspace);
    return rc < 0 ? -1 : 0;
}

static int compare_chunk(chunk_source *s, hid_t dset, uint64_t chunk, uint8_t *got, uint8_t *want, int pattern)
{
    const source_geometry *g = h5pack_chunksrc_geometry(s);
    char err[512];
    uint64_t n = h5pack_chunksrc_chunk_samples(s, chunk), first = chunk * g->samples_per_chunk;
    int rc = h5pack_chunksrc_read(s, chunk, got, NULL, NULL, err, sizeof err);
    if (rc) {
        fprintf(stderr, "h5pack_chunksrc_read(%llu) = %d: %s\n", (unsigned long long)chunk, rc, err);
        return -1;
    }
    if (read_rows(dset, first, n, want) != 0) {
        fprintf(stderr, "H5Dread of chunk %llu failed\n", (unsigned long long)chunk);
        return -1;
    }
    for (uint64_t b = 0; b < n * g->image_bytes; b++) {
        uint64_t img = first + b / g->image_bytes, off = b % g->image_bytes;
        if (got[b] != want[b] || (pattern && got[b] != test_pixel(img, off))) {
            fprintf(stderr, "chunk %llu byte %llu: chunksrc %u, H5Dread %u, expected %u\n", (unsigned long long)chunk,
                    (unsigned long long)b, got[b], want[b], test_pixel(img, off));
            return -1;
        }
    }
    return 0;
}

int test_compare_all_chunks(chunk_source *s, const char *path, const char *images, int pattern)
{
    const source_geometry *g = h5pack_chunksrc_geometry(s);
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t dset = file >= 0 ? H5Dopen2(file, images, H5P_DEFAULT) : -1;
    uint8_t *got = malloc(g->chunk_bytes), *want = malloc(g->chunk_bytes);
    int rc = dset < 0 ? -1 : 0;
    for (uint64_t c = 0; rc == 0 && c < g->n_chunks; c++)
        rc = compare_chunk(s, dset, c, got, want, pattern);
    free(got);
    free(want);
    if (dset >= 0)
        H5Dclose(dset);
    if (file >= 0)
        H5Fclose(file);
    return rc;
}
