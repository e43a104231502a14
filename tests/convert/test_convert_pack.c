/* test_convert_pack.c - pack generated folders and read them back with the HDF5 C API: pixels equal a
 * direct decode + the same image_fit, labels, classes, file names (torchvision order), skipped files with
 * reasons, attributes, mean/std; nhwc, gray, flat folders, no --size, --strict, --force. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "h5pack.h"
#include "h5read.h"
#include "image.h"
#include "packer.h"
#include "scan.h"
#include "testimages.h"

static char root[256];

static void path_in(char *buf, size_t len, const char *rel)
{
    snprintf(buf, len, "%s/%s", root, rel);
}

static void write_jpeg(const char *rel, uint32_t w, uint32_t h, uint32_t seed)
{
    char p[512];
    path_in(p, sizeof p, rel);
    CHECK_OK(write_test_jpeg(p, w, h, 3, seed));
}

static void write_png(const char *rel, uint32_t w, uint32_t h, uint32_t seed)
{
    char p[512];
    path_in(p, sizeof p, rel);
    CHECK_OK(write_test_png(p, w, h, 3, seed));
}

static void mkdir_in(const char *rel)
{
    char p[512];
    path_in(p, sizeof p, rel);
    CHECK_OK(make_dir(p));
}

static void write_bytes_in(const char *rel, const void *data, size_t len)
{
    char p[512];
    path_in(p, sizeof p, rel);
    CHECK_OK(write_file_bytes(p, data, len));
}

/* src/: cat (4 images), dog (a.jpg + sub/x.jpg + sub/y.png + a broken JPEG), empty/, zebra (2 + random
 * bytes named .png), cat/notes.txt. Valid images: 8. */
static void build_imagefolder(void)
{
    mkdir_in("src");
    mkdir_in("src/cat");
    mkdir_in("src/dog");
    mkdir_in("src/dog/sub");
    mkdir_in("src/empty");
    mkdir_in("src/zebra");
    write_jpeg("src/cat/c1.jpg", 64, 48, 1);
    write_png("src/cat/c2.PNG", 50, 70, 2);
    write_jpeg("src/cat/c3.JPEG", 33, 33, 3);
    write_jpeg("src/cat/c4.jpg", 120, 90, 4);
    write_jpeg("src/dog/a.jpg", 80, 60, 5);
    write_jpeg("src/dog/sub/x.jpg", 41, 77, 6);
    write_png("src/dog/sub/y.png", 64, 64, 7);
    write_jpeg("src/zebra/z1.jpg", 100, 40, 8);
    write_png("src/zebra/z2.png", 40, 100, 9);
    write_bytes_in("src/cat/notes.txt", "hello", 5);
    static const char junk[] = "\x01\x02\x03 random bytes, not an image";
    write_bytes_in("src/zebra/fake.png", junk, sizeof junk - 1);
    char p[512];
    path_in(p, sizeof p, "src/cat/c1.jpg");
    size_t len;
    uint8_t *jpeg = read_whole_file(p, &len);
    write_bytes_in("src/dog/broken.jpg", jpeg, len / 3); /* truncated mid-scan */
    free(jpeg);
}

static pack_options base_options(const char *src, const char *out)
{
    static char s[512], o[512];
    pack_options opt = PACK_OPTIONS_DEFAULTS;
    path_in(s, sizeof s, src);
    path_in(o, sizeof o, out);
    opt.src_dir = s;
    opt.out_path = o;
    opt.verbosity = 0;
    opt.threads = 2;
    opt.force = 1;
    return opt;
}

static pack_status run(const pack_options *o, pack_report *rep, char *err)
{
    pack_status st = pack_run(o, rep, err, 1024);
    return st;
}

/* The stored image equals image_load + image_fit of the source, in the file's layout. */
static void check_pixels(const packed_file *pf, const pack_options *o, long row, const char *rel)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", o->src_dir, rel);
    decode_opts d = {o->channels, o->height, o->width, o->resize, o->max_pixels, o->jpeg_dct, o->alpha};
    image_u8 src = {0}, fit = {0};
    char why[256];
    CHECK_MSG(image_load(p, &d, &src, why, sizeof why) == IMAGE_OK, "%s: %s", rel, why);
    const image_u8 *img = &src;
    if (o->height) {
        CHECK(image_fit(&src, o->height, o->width, o->resize, &fit) == IMAGE_OK);
        img = &fit;
    }
    size_t plane = (size_t)img->width * img->height, c = img->channels;
    CHECK_EQ_U64(plane * c, pf->image_bytes);
    const uint8_t *stored = pf->images + (size_t)row * pf->image_bytes;
    for (size_t i = 0; i < plane; i++)
        for (size_t ch = 0; ch < c; ch++) {
            uint8_t want = img->pixels[i * c + ch];
            uint8_t got = o->layout_nhwc ? stored[i * c + ch] : stored[ch * plane + i];
            CHECK_MSG(want == got, "%s: pixel %zu channel %zu: stored %u, direct decode %u", rel, i, ch, got, want);
        }
    image_free(&fit);
    image_free(&src);
}

static void check_mean_std(const packed_file *pf, uint32_t channels, int nhwc)
{
    double mean[3], std[3];
    attr_doubles(pf->file, "mean", mean, channels);
    attr_doubles(pf->file, "std", std, channels);
    size_t plane = pf->image_bytes / channels;
    for (uint32_t c = 0; c < channels; c++) {
        double s = 0, q = 0, count = (double)pf->n * plane;
        for (uint64_t r = 0; r < pf->n; r++)
            for (size_t i = 0; i < plane; i++) {
                const uint8_t *img = pf->images + r * pf->image_bytes;
                double v = (nhwc ? img[i * channels + c] : img[c * plane + i]) / 255.0;
                s += v;
                q += v * v;
            }
        double m = s / count;
        CHECK_NEAR(mean[c], m, 1e-9);
        CHECK_NEAR(std[c], sqrt(q / count - m * m), 1e-7);
    }
}

static const char *valid_files[] = {"cat/c1.jpg", "cat/c2.PNG", "cat/c3.JPEG", "cat/c4.jpg",
                                    "dog/a.jpg",  "dog/sub/x.jpg", "dog/sub/y.png", "zebra/z1.jpg",
                                    "zebra/z2.png"};
static const uint32_t valid_labels[] = {0, 0, 0, 0, 1, 1, 1, 3, 3};
#define N_VALID (sizeof valid_files / sizeof valid_files[0])

static long skipped_row(const packed_file *pf, const char *name)
{
    for (size_t i = 0; i < pf->n_skipped; i++)
        if (strcmp(pf->skipped_files[i], name) == 0)
            return (long)i;
    return -1;
}

static void check_skips(const packed_file *pf)
{
    long r;
    CHECK_EQ_U64(pf->n_skipped, 3);
    CHECK((r = skipped_row(pf, "cat/notes.txt")) >= 0);
    CHECK_STR_CONTAINS(pf->skipped_reasons[r], "unsupported format");
    CHECK((r = skipped_row(pf, "zebra/fake.png")) >= 0);
    CHECK_STR_CONTAINS(pf->skipped_reasons[r], "unsupported format");
    CHECK((r = skipped_row(pf, "dog/broken.jpg")) >= 0);
    CHECK_MSG(strstr(pf->skipped_reasons[r], "corrupt") != NULL, "reason: %s", pf->skipped_reasons[r]);
}

static void check_string_attr(hid_t loc, const char *name, const char *want)
{
    char *s = attr_string(loc, name);
    CHECK_MSG(strcmp(s, want) == 0, "attribute %s = '%s', expected '%s'", name, s, want);
    free(s);
}

static void test_imagefolder_crop(void)
{
    pack_options o = base_options("src", "crop.h5");
    o.height = 40;
    o.width = 56;
    pack_report rep;
    char err[1024];
    CHECK_MSG(run(&o, &rep, err) == PACK_OK, "%s", err);
    CHECK_EQ_U64(rep.converted, N_VALID);
    CHECK_EQ_U64(rep.skipped.count, 3);
    CHECK_EQ_U64(rep.n_warnings, 1);
    CHECK_STR_CONTAINS(rep.warnings[0], "'empty' holds no images");
    pack_report_free(&rep);

    packed_file pf;
    packed_open(o.out_path, &pf);
    CHECK(pf.dims[1] == 3 && pf.dims[2] == 40 && pf.dims[3] == 56);
    CHECK_EQ_U64(pf.n, N_VALID);
    CHECK_EQ_U64(pf.n_classes, 4);
    const char *classes[] = {"cat", "dog", "empty", "zebra"};
    for (int i = 0; i < 4; i++)
        CHECK(strcmp(pf.classes[i], classes[i]) == 0);
    int in_sorted_order = 1;
    for (size_t i = 0; i < N_VALID; i++) {
        long row = packed_find(&pf, valid_files[i]);
        CHECK_MSG(row >= 0, "%s missing", valid_files[i]);
        CHECK_EQ_INT(pf.labels[row], valid_labels[i]);
        in_sorted_order &= row == (long)i;
        check_pixels(&pf, &o, row, valid_files[i]);
    }
    CHECK_MSG(!in_sorted_order, "default order should be shuffled");
    check_skips(&pf);
    check_mean_std(&pf, 3, 0);
    CHECK_EQ_INT(attr_int(pf.file, "h5pack_format_version"), 1);
    CHECK_EQ_INT(attr_int(pf.file, "height"), 40);
    CHECK_EQ_INT(attr_int(pf.file, "width"), 56);
    CHECK_EQ_INT(attr_int(pf.file, "channels"), 3);
    CHECK_EQ_INT(attr_int(pf.file, "shuffled"), 1);
    CHECK_EQ_INT(attr_int(pf.file, "seed"), 0);
    CHECK_EQ_INT(attr_int(pf.file, "batch_size"), 256);
    CHECK_EQ_INT(attr_int(pf.file, "checksum"), 0);
    CHECK_EQ_INT(attr_int(pf.file, "chunk_target_bytes"), 2 << 20);
    check_string_attr(pf.file, "layout", "NCHW");
    check_string_attr(pf.file, "resize_mode", "crop");
    check_string_attr(pf.file, "compression", "none");
    check_string_attr(pf.file, "h5pack_version", H5PACK_VERSION_STRING);
    hid_t d = H5Dopen2(pf.file, "images", H5P_DEFAULT);
    check_string_attr(d, "layout", "NCHW");
    hid_t dcpl = H5Dget_create_plist(d);
    hsize_t chunk[4];
    CHECK_EQ_INT(H5Pget_chunk(dcpl, 4, chunk), 4);
    CHECK_EQ_INT(chunk[0], attr_int(pf.file, "chunk_images"));
    CHECK(chunk[1] == 3 && chunk[2] == 40 && chunk[3] == 56);
    H5Pclose(dcpl);
    H5Dclose(d);
    packed_close(&pf);
}

static void test_keep_order_pad_nhwc(void)
{
    pack_options o = base_options("src", "nhwc.h5");
    o.height = 32;
    o.width = 32;
    o.resize = RESIZE_PAD;
    o.layout_nhwc = 1;
    o.keep_order = 1;
    pack_report rep;
    char err[1024];
    CHECK_MSG(run(&o, &rep, err) == PACK_OK, "%s", err);
    pack_report_free(&rep);
    packed_file pf;
    packed_open(o.out_path, &pf);
    CHECK(pf.dims[1] == 32 && pf.dims[2] == 32 && pf.dims[3] == 3);
    for (size_t i = 0; i < N_VALID; i++) { /* sorted: class by class, dog/a.jpg before dog/sub/ */
        CHECK_MSG(strcmp(pf.filenames[i], valid_files[i]) == 0, "row %zu: %s", i, pf.filenames[i]);
        check_pixels(&pf, &o, (long)i, valid_files[i]);
    }
    check_mean_std(&pf, 3, 1);
    check_string_attr(pf.file, "layout", "NHWC");
    check_string_attr(pf.file, "resize_mode", "pad");
    CHECK_EQ_INT(attr_int(pf.file, "shuffled"), 0);
    packed_close(&pf);
}

static void test_gray_stretch(void)
{
    pack_options o = base_options("src", "gray.h5");
    o.height = 24;
    o.width = 30;
    o.resize = RESIZE_STRETCH;
    o.channels = 1;
    o.seed = 5;
    pack_report rep;
    char err[1024];
    CHECK_MSG(run(&o, &rep, err) == PACK_OK, "%s", err);
    pack_report_free(&rep);
    packed_file pf;
    packed_open(o.out_path, &pf);
    CHECK(pf.dims[1] == 1 && pf.dims[2] == 24 && pf.dims[3] == 30);
    for (size_t i = 0; i < N_VALID; i++)
        check_pixels(&pf, &o, packed_find(&pf, valid_files[i]), valid_files[i]);
    check_mean_std(&pf, 1, 0);
    CHECK_EQ_INT(attr_int(pf.file, "seed"), 5);
    packed_close(&pf);
}

/* A flat folder of same-size images, no --size: no labels or classes, resize_mode none. */
static void test_flat_no_size(void)
{
    mkdir_in("flat");
    write_jpeg("flat/b.jpg", 36, 20, 11);
    write_png("flat/a.png", 36, 20, 12);
    write_jpeg("flat/c.jpeg", 36, 20, 13);
    pack_options o = base_options("flat", "flat.h5");
    o.keep_order = 1;
    pack_report rep;
    char err[1024];
    CHECK_MSG(run(&o, &rep, err) == PACK_OK, "%s", err);
    CHECK(!rep.has_classes);
    pack_report_free(&rep);
    packed_file pf;
    packed_open(o.out_path, &pf);
    CHECK(pf.labels == NULL && !dataset_exists(pf.file, "classes"));
    CHECK(pf.dims[0] == 3 && pf.dims[1] == 3 && pf.dims[2] == 20 && pf.dims[3] == 36);
    const char *names[] = {"a.png", "b.jpg", "c.jpeg"};
    for (int i = 0; i < 3; i++) {
        CHECK(strcmp(pf.filenames[i], names[i]) == 0);
        check_pixels(&pf, &o, i, names[i]);
    }
    check_string_attr(pf.file, "resize_mode", "none");
    CHECK_EQ_U64(pf.n_skipped, 0);
    packed_close(&pf);

    /* Different sizes without --size: each image kept at its own size (format version 2; its contents are
     * checked against PIL by tests/convert/test_convert_ragged.py). */
    write_jpeg("flat/d.jpg", 37, 20, 14);
    char out2[512];
    path_in(out2, sizeof out2, "mixed.h5");
    o.out_path = out2;
    CHECK_MSG(run(&o, &rep, err) == PACK_OK, "%s", err);
    CHECK(rep.ragged && rep.converted == 4);
    CHECK(rep.bytes_raw == 3 * (3 * 20 * 36 + 37 * 20));
    CHECK(access(out2, F_OK) == 0);
    pack_report_free(&rep);
}

/* --max-pixels: a larger image is skipped with the reason, the others are converted. */
static void test_max_pixels(void)
{
    mkdir_in("bomb");
    write_jpeg("bomb/small.jpg", 30, 30, 21); /* 900 pixels */
    write_png("bomb/large.png", 40, 30, 22);  /* 1200 pixels */
    pack_options o = base_options("bomb", "bomb.h5");
    o.height = 8;
    o.width = 8;
    o.max_pixels = 1000;
    pack_report rep;
    char err[1024];
    CHECK_MSG(run(&o, &rep, err) == PACK_OK, "%s", err);
    CHECK_EQ_U64(rep.converted, 1);
    CHECK_EQ_U64(rep.skipped.count, 1);
    CHECK(strcmp(rep.skipped.names[0], "large.png") == 0);
    CHECK_STR_CONTAINS(rep.skipped.reasons[0], image_status_text(IMAGE_TOO_LARGE));
    pack_report_free(&rep);
}

static void test_strict_and_force(void)
{
    pack_options o = base_options("src", "strict.h5");
    o.height = 16;
    o.width = 16;
    o.strict = 1;
    pack_report rep;
    char err[1024];
    CHECK_EQ_INT(run(&o, &rep, err), PACK_STRICT);
    CHECK_STR_CONTAINS(err, "cat/notes.txt");
    CHECK(access(o.out_path, F_OK) != 0);
    pack_report_free(&rep);

    /* Only a decode failure left: --strict stops at it. */
    char p[512];
    path_in(p, sizeof p, "src/cat/notes.txt");
    unlink(p);
    path_in(p, sizeof p, "src/zebra/fake.png");
    unlink(p);
    CHECK_EQ_INT(run(&o, &rep, err), PACK_STRICT);
    CHECK_STR_CONTAINS(err, "dog/broken.jpg");
    CHECK(access(o.out_path, F_OK) != 0);
    pack_report_free(&rep);

    /* An existing output needs --force. */
    o.strict = 0;
    o.force = 0;
    write_bytes_in("strict.h5", "keep me", 7);
    CHECK_EQ_INT(run(&o, &rep, err), PACK_ERROR);
    CHECK_STR_CONTAINS(err, "--force");
    size_t len;
    uint8_t *kept = read_whole_file(o.out_path, &len);
    CHECK(len == 7 && memcmp(kept, "keep me", 7) == 0);
    free(kept);
    pack_report_free(&rep);
    o.force = 1;
    CHECK_MSG(run(&o, &rep, err) == PACK_OK, "%s", err);
    CHECK_EQ_U64(rep.converted, N_VALID);
    pack_report_free(&rep);
}

int main(void)
{
    snprintf(root, sizeof root, "%s/h5pack-convert-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    CHECK(mkdtemp(root) != NULL);
    build_imagefolder();
    test_imagefolder_crop();
    test_keep_order_pad_nhwc();
    test_gray_stretch();
    test_flat_no_size();
    test_max_pixels();
    test_strict_and_force();
    remove_tree(root);
    printf("pack: ok\n");
    return 0;
}
