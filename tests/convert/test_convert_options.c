/* test_convert_options.c - the h5pack command line parser: values, suffixes, errors, defaults. */
#include <string.h>

#include "check.h"
#include "image.h"
#include "options.h"

static options_result parse(pack_options *o, char *err, int argc, const char **argv)
{
    pack_options d = PACK_OPTIONS_DEFAULTS;
    *o = d;
    return options_parse(argc, (char **)argv, o, err, 256);
}

/* Counts follow the one size rule (K = 1024, common/sizes.h; the parser itself is tested on the
 * shared table by tests/common): here, that every count option goes through it with its own bounds. */
static void test_counts(void)
{
    pack_options o;
    char err[256];
    const char *a1[] = {"h5pack", "--max-pixels", "1K", "--batch", "2k", "--chunk", "1.5KiB", "-j", "1KB", "in", "out"};
    CHECK_EQ_INT(parse(&o, err, 11, a1), OPTIONS_RUN);
    CHECK_EQ_U64(o.max_pixels, 1024);
    CHECK_EQ_U64(o.batch, 2048);
    CHECK_EQ_U64(o.chunk_images, 1536);
    CHECK_EQ_INT(o.threads, 1024);
    const char *a2[] = {"h5pack", "--max-pixels=18446744073709551615", "--chunk", "auto", "in", "out"};
    CHECK_EQ_INT(parse(&o, err, 6, a2), OPTIONS_RUN);
    CHECK_EQ_U64(o.max_pixels, UINT64_MAX);
    CHECK_EQ_U64(o.chunk_images, 0);
    struct { const char *opt, *value, *needle; } bad[] = {
        {"--max-pixels", "0", "expected a pixel count >= 1"}, {"--max-pixels", "-1", "negative"},
        {"--max-pixels", "1X", "unknown suffix 'X'"}, {"--max-pixels", "16384P", "unknown suffix 'P'"},
        {"--max-pixels", "16777216T", "too large"}, {"--batch", "4G", "expected a batch size >= 1"},
        {"--chunk", "0", "expected auto or a number of images"}, {"-j", "1025", "thread count 0..1024"},
        {"--seed", "1K", "expected an unsigned integer"}, {"--batch", "1.5", "a fraction needs a unit"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *argv[] = {"h5pack", bad[i].opt, bad[i].value, "in", "out"};
        err[0] = '\0';
        CHECK_MSG(parse(&o, err, 5, argv) == OPTIONS_ERROR, "%s %s accepted", bad[i].opt, bad[i].value);
        CHECK_STR_CONTAINS(err, bad[i].opt);
        CHECK_STR_CONTAINS(err, bad[i].needle);
    }
}

static void test_sizes(void)
{
    uint32_t h = 0, w = 0;
    CHECK_OK(parse_size_hw("224x192", &h, &w));
    CHECK_EQ_INT(h, 224);
    CHECK_EQ_INT(w, 192);
    CHECK_OK(parse_size_hw("1X65535", &h, &w));
    CHECK_EQ_INT(w, 65535);
    const char *bad[] = {"224", "x224", "224x", "0x5", "5x0", "65536x1", "22 4x2", "2x2x2", "-2x2", "axb"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_MSG(parse_size_hw(bad[i], &h, &w) != 0, "parse_size_hw accepted '%s'", bad[i]);
}

static void test_compress(void)
{
    compress_kind k;
    int level = 0;
    CHECK_OK(parse_compress("none", &k, &level));
    CHECK_EQ_INT(k, COMPRESS_NONE);
    CHECK_OK(parse_compress("gzip", &k, &level));
    CHECK_EQ_INT(level, PACK_DEFAULT_GZIP_LEVEL);
    CHECK_OK(parse_compress("gzip:9", &k, &level));
    CHECK_EQ_INT(k, COMPRESS_GZIP);
    CHECK_EQ_INT(level, 9);
    CHECK(parse_compress("gzip:0", &k, &level) != 0);
    CHECK(parse_compress("gzip:10", &k, &level) != 0);
    CHECK(parse_compress("zstd", &k, &level) != 0);
}

static void test_full_lines(void)
{
    pack_options o;
    char err[256];
    const char *a1[] = {"h5pack", "--size", "224x192", "--resize=pad", "--channels", "1", "--layout", "nhwc",
                        "--seed", "7", "--keep-order", "--chunk", "8", "--batch", "128", "--compress", "gzip:2",
                        "--checksum", "-j3", "-v", "--strict", "--force", "--max-pixels", "10M", "in", "out.h5"};
    CHECK_EQ_INT(parse(&o, err, 26, a1), OPTIONS_RUN);
    CHECK(o.height == 224 && o.width == 192 && o.resize == RESIZE_PAD && o.channels == 1 && o.layout_nhwc);
    CHECK(o.seed == 7 && o.keep_order && o.chunk_images == 8 && o.batch == 128 && o.compress == COMPRESS_GZIP);
    CHECK(o.gzip_level == 2 && o.checksum && o.threads == 3 && o.verbosity == 2 && o.strict && o.force);
    CHECK_EQ_U64(o.max_pixels, 10ull << 20);
    CHECK(strcmp(o.src_dir, "in") == 0 && strcmp(o.out_path, "out.h5") == 0);

    const char *a2[] = {"h5pack", "in", "out.h5"};
    CHECK_EQ_INT(parse(&o, err, 3, a2), OPTIONS_RUN);
    CHECK(o.height == 0 && o.channels == 3 && !o.layout_nhwc && o.batch == 256 && o.threads == 0);
    CHECK(o.compress == COMPRESS_NONE && o.max_pixels == PACK_DEFAULT_MAX_PIXELS && o.verbosity == 1);

    const char *a3[] = {"h5pack", "-q", "-j", "2", "--", "-odd-dir", "out.h5"};
    CHECK_EQ_INT(parse(&o, err, 7, a3), OPTIONS_RUN);
    CHECK(o.verbosity == 0 && o.threads == 2 && strcmp(o.src_dir, "-odd-dir") == 0);

    const char *help[] = {"h5pack", "--help"};
    CHECK_EQ_INT(parse(&o, err, 2, help), OPTIONS_HELP);
    const char *ver[] = {"h5pack", "--version"};
    CHECK_EQ_INT(parse(&o, err, 2, ver), OPTIONS_VERSION);
}

static void expect_error(int argc, const char **argv, const char *needle)
{
    pack_options o;
    char err[256] = "";
    CHECK_EQ_INT(parse(&o, err, argc, argv), OPTIONS_ERROR);
    CHECK_STR_CONTAINS(err, needle);
}

static void test_errors(void)
{
    const char *a1[] = {"h5pack", "--size", "224", "in", "out"};
    expect_error(5, a1, "--size");
    const char *a2[] = {"h5pack", "in"};
    expect_error(2, a2, "missing OUT.h5");
    const char *a3[] = {"h5pack", "--bogus", "in", "out"};
    expect_error(4, a3, "unknown option '--bogus'");
    const char *a4[] = {"h5pack", "in", "out", "extra"};
    expect_error(4, a4, "unexpected argument 'extra'");
    const char *a5[] = {"h5pack", "in", "out", "--seed"};
    expect_error(4, a5, "needs a value");
    const char *a6[] = {"h5pack", "--resize", "pad", "in", "out"};
    expect_error(5, a6, "needs --size");
    const char *a7[] = {"h5pack", "--channels", "2", "in", "out"};
    expect_error(5, a7, "--channels");
    const char *a8[] = {"h5pack", "--keep-order=1", "in", "out"};
    expect_error(4, a8, "takes no value");
    const char *a9[] = {"h5pack", "-x", "in", "out"};
    expect_error(4, a9, "unknown option '-x'");
    const char *a10[] = {"h5pack", "--compress", "gzip:12", "in", "out"};
    expect_error(5, a10, "--compress");
}

/* --max-side N: 1..65535, not with --size; it makes --jpeg-scale dct meaningful. */
static void test_max_side(void)
{
    pack_options o;
    char err[256] = "";
    const char *ok[] = {"h5pack", "--max-side", "1K", "--jpeg-scale", "dct", "in", "out"};
    CHECK_EQ_INT(parse(&o, err, 7, ok), OPTIONS_RUN);
    CHECK_EQ_INT((int)o.max_side, 1024);
    CHECK_EQ_INT(o.jpeg_dct, 1);
    const char *zero[] = {"h5pack", "--max-side", "0", "in", "out"};
    expect_error(5, zero, "--max-side: expected a side length 1..65535");
    const char *big[] = {"h5pack", "--max-side", "65536", "in", "out"};
    expect_error(5, big, "--max-side");
    const char *both[] = {"h5pack", "--max-side", "256", "--size", "224x224", "in", "out"};
    expect_error(7, both, "--max-side and --size");
    const char *dct[] = {"h5pack", "--jpeg-scale", "dct", "in", "out"};
    expect_error(5, dct, "needs --size HxW, --max-side N or --short-side S");
}

/* --short-side S: 1..65535, not with --size nor --max-side (each decides the stored size) nor --tiles; it
 * makes --jpeg-scale dct meaningful. */
static void test_short_side(void)
{
    pack_options o;
    char err[256] = "";
    const char *ok[] = {"h5pack", "--short-side=256", "--jpeg-scale", "dct", "in", "out"};
    CHECK_EQ_INT(parse(&o, err, 6, ok), OPTIONS_RUN);
    CHECK_EQ_INT((int)o.short_side, 256);
    CHECK_EQ_INT((int)o.max_side, 0);
    CHECK_EQ_INT(o.jpeg_dct, 1);
    const char *zero[] = {"h5pack", "--short-side", "0", "in", "out"};
    expect_error(5, zero, "--short-side: expected a side length 1..65535");
    const char *big[] = {"h5pack", "--short-side", "65536", "in", "out"};
    expect_error(5, big, "--short-side");
    const char *size[] = {"h5pack", "--short-side", "256", "--size", "224x224", "in", "out"};
    expect_error(7, size, "--short-side and --size both size the images");
    const char *max[] = {"h5pack", "--max-side", "300", "--short-side", "256", "in", "out"};
    expect_error(7, max, "--short-side and --max-side both size the images");
    const char *tiles[] = {"h5pack", "--tiles", "--short-side", "256", "in", "out"};
    expect_error(6, tiles, "--short-side does not apply");
}

/* The stored sizes of --short-side: torchvision's Resize(S) (the longer side int(S * long / short),
 * truncated; w <= h decides which side is the shorter), smaller images enlarged; --max-side for contrast. */
static void test_side_sizes(void)
{
    static const struct { uint32_t h, w, s, want_h, want_w; } cases[] = {
        {375, 500, 256, 256, 341},   /* 341.33 */
        {300, 500, 256, 256, 426},   /* 426.67: truncated, not rounded */
        {500, 300, 256, 426, 256},   /* portrait */
        {400, 400, 256, 256, 256},   /* square */
        {256, 381, 256, 256, 381},   /* the shorter side is S already: unchanged */
        {100, 150, 256, 256, 384},   /* smaller: enlarged, as torchvision does */
        {1, 100000, 65535, 65535, UINT32_MAX}, /* 6.5e9: clamped (then skipped as too large) */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t h = 0, w = 0;
        image_short_side_size(cases[i].h, cases[i].w, cases[i].s, &h, &w);
        CHECK_EQ_INT((long long)h, (long long)cases[i].want_h);
        CHECK_EQ_INT((long long)w, (long long)cases[i].want_w);
    }
    uint32_t h = 0, w = 0;
    image_max_side_size(100, 150, 256, &h, &w); /* --max-side keeps smaller images as they are */
    CHECK_EQ_INT((int)h, 100);
    CHECK_EQ_INT((int)w, 150);
}

/* --alpha drop (default) | black | white, with --tiles too; the names the file's attribute records. */
static void test_alpha(void)
{
    pack_options o;
    char err[256] = "";
    const char *none[] = {"h5pack", "in", "out"};
    CHECK_EQ_INT(parse(&o, err, 3, none), OPTIONS_RUN);
    CHECK_EQ_INT(o.alpha, IMAGE_ALPHA_DROP);
    const char *names[] = {"drop", "black", "white"};
    const image_alpha modes[] = {IMAGE_ALPHA_DROP, IMAGE_ALPHA_BLACK, IMAGE_ALPHA_WHITE};
    for (int i = 0; i < 3; i++) {
        const char *a[] = {"h5pack", "--tiles", "--alpha", names[i], "in", "out"};
        CHECK_EQ_INT(parse(&o, err, 6, a), OPTIONS_RUN);
        CHECK_EQ_INT(o.alpha, modes[i]);
        CHECK(strcmp(alpha_mode_name(o.alpha), names[i]) == 0);
    }
    const char *eq[] = {"h5pack", "--alpha=white", "in", "out"};
    CHECK_EQ_INT(parse(&o, err, 4, eq), OPTIONS_RUN);
    CHECK_EQ_INT(o.alpha, IMAGE_ALPHA_WHITE);
    const char *bad[] = {"h5pack", "--alpha", "Black", "in", "out"};
    expect_error(5, bad, "--alpha: expected drop, black or white, got 'Black'");
    const char *missing[] = {"h5pack", "in", "out", "--alpha"};
    expect_error(4, missing, "needs a value");
}

int main(void)
{
    test_counts();
    test_alpha();
    test_max_side();
    test_short_side();
    test_side_sizes();
    test_sizes();
    test_compress();
    test_full_lines();
    test_errors();
    printf("options: ok\n");
    return 0;
}
