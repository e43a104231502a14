/* test_convert_determinism.c - the same inputs and options give the same bytes (also across thread
 * counts and with skipped images); gzip and gzip+fletcher32 files read back (H5Dread) equal to the
 * uncompressed one; compress none has the implicit chunk index: chunk i at addr0 + i * chunk bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "h5read.h"
#include "packer.h"
#include "testimages.h"

static char root[256], src[300];

static void pack(const char *out_name, int threads, int gzip_level, int checksum, uint64_t chunk, char *out)
{
    pack_options o = PACK_OPTIONS_DEFAULTS;
    snprintf(out, 512, "%s/%s", root, out_name);
    o.src_dir = src;
    o.out_path = out;
    o.height = 24;
    o.width = 32;
    o.threads = threads;
    o.verbosity = 0;
    o.force = 1;
    o.chunk_images = chunk;
    o.compress = gzip_level ? COMPRESS_GZIP : COMPRESS_NONE;
    o.gzip_level = gzip_level ? gzip_level : PACK_DEFAULT_GZIP_LEVEL;
    o.checksum = checksum;
    pack_report rep;
    char err[1024];
    CHECK_MSG(pack_run(&o, &rep, err, sizeof err) == PACK_OK, "%s", err);
    pack_report_free(&rep);
}

static void check_same_images(const char *a, const char *b)
{
    packed_file x, y;
    packed_open(a, &x);
    packed_open(b, &y);
    CHECK_EQ_U64(x.n, y.n);
    CHECK(memcmp(x.dims, y.dims, sizeof x.dims) == 0);
    CHECK_MSG(memcmp(x.images, y.images, x.n * x.image_bytes) == 0, "%s and %s hold different pixels", a, b);
    for (uint64_t i = 0; i < x.n; i++)
        CHECK(strcmp(x.filenames[i], y.filenames[i]) == 0 && x.labels[i] == y.labels[i]);
    packed_close(&x);
    packed_close(&y);
}

static void check_filters(const char *path, int deflate, int fletcher)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(f, "images", H5P_DEFAULT);
    hid_t dcpl = H5Dget_create_plist(d);
    int n = H5Pget_nfilters(dcpl), has_deflate = 0, has_fletcher = 0;
    for (int i = 0; i < n; i++) {
        unsigned flags, cd[4];
        size_t ncd = 4;
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, 0, NULL, NULL);
        has_deflate |= id == H5Z_FILTER_DEFLATE;
        has_fletcher |= id == H5Z_FILTER_FLETCHER32;
    }
    CHECK_EQ_INT(has_deflate, deflate);
    CHECK_EQ_INT(has_fletcher, fletcher);
    H5Pclose(dcpl);
    H5Dclose(d);
    H5Fclose(f);
}

/* Compress none: chunk i lies at addr(chunk 0) + i * chunk bytes, each chunk unfiltered and full size. */
static void check_implicit_index(const char *path)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(f, "images", H5P_DEFAULT);
    hid_t space = H5Dget_space(d), dcpl = H5Dget_create_plist(d);
    hsize_t nchunks = 0, chunk[4];
    H5Pget_chunk(dcpl, 4, chunk);
    size_t chunk_bytes = (size_t)(chunk[0] * chunk[1] * chunk[2] * chunk[3]);
    CHECK(H5Dget_num_chunks(d, space, &nchunks) >= 0 && nchunks > 1);
    haddr_t addr0 = 0;
    for (hsize_t i = 0; i < nchunks; i++) {
        hsize_t offset[4], size;
        unsigned mask;
        haddr_t addr;
        CHECK(H5Dget_chunk_info(d, space, i, offset, &mask, &addr, &size) >= 0);
        if (i == 0)
            addr0 = addr;
        CHECK_EQ_U64(offset[0], i * chunk[0]);
        CHECK_EQ_U64(size, chunk_bytes);
        CHECK_EQ_U64(mask, 0);
        CHECK_EQ_U64(addr, addr0 + i * chunk_bytes);
    }
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Dclose(d);
    H5Fclose(f);
}

int main(void)
{
    char a[512], b[512], c[512], g[512], gc[512], s1[512], s2[512], p[600];
    snprintf(root, sizeof root, "%s/h5pack-determinism-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    CHECK(mkdtemp(root) != NULL);
    snprintf(src, sizeof src, "%s/src", root);
    CHECK(make_image_folder(src, 3, 14, 48, 40, 1) == 42);

    pack("a.h5", 1, 0, 0, 5, a);
    sleep(1); /* a time stamp anywhere would now differ */
    pack("b.h5", 2, 0, 0, 5, b);
    pack("c.h5", 3, 0, 0, 5, c);
    CHECK_MSG(files_identical(a, b), "-j 1 and -j 2 outputs differ");
    CHECK_MSG(files_identical(a, c), "-j 1 and -j 3 outputs differ");
    check_implicit_index(a);
    check_filters(a, 0, 0);

    pack("g.h5", 2, 6, 0, 5, g);
    pack("gc.h5", 2, 1, 1, 5, gc);
    check_filters(g, 1, 0);
    check_filters(gc, 1, 1);
    check_same_images(a, g);
    check_same_images(a, gc);
    pack("ck.h5", 2, 0, 1, 5, p); /* fletcher32 alone */
    check_filters(p, 0, 1);
    check_same_images(a, p);
    snprintf(p, sizeof p, "%s/gc2.h5", root);
    pack("gc2.h5", 1, 1, 1, 5, p);
    CHECK_MSG(files_identical(gc, p), "gzip+checksum outputs differ between -j 2 and -j 1");

    /* A corrupt image shifts the later ones: still deterministic, and the same pixels otherwise. */
    snprintf(p, sizeof p, "%s/class_01/img_0003.jpg", src);
    CHECK_OK(write_file_bytes(p, "\xff\xd8\xff\xe0 truncated", 15));
    pack("s1.h5", 1, 4, 1, 5, s1);
    pack("s2.h5", 2, 4, 1, 5, s2);
    CHECK_MSG(files_identical(s1, s2), "outputs with a skipped image differ between -j 1 and -j 2");
    packed_file pf;
    packed_open(s1, &pf);
    CHECK_EQ_U64(pf.n, 41);
    CHECK_EQ_U64(pf.n_skipped, 1);
    CHECK(strcmp(pf.skipped_files[0], "class_01/img_0003.jpg") == 0);
    packed_close(&pf);
    pack("s3.h5", 2, 0, 0, 5, s2);
    check_implicit_index(s2);
    remove_tree(root);
    printf("determinism: ok\n");
    return 0;
}
