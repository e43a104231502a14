/* test_convert_options.c - the h5pack command line parser: values, suffixes, errors, defaults. */
#include <string.h>

#include "check.h"
#include "options.h"

static options_result parse(pack_options *o, char *err, int argc, const char **argv)
{
    pack_options d = PACK_OPTIONS_DEFAULTS;
    *o = d;
    return options_parse(argc, (char **)argv, o, err, 256);
}

static void test_counts(void)
{
    uint64_t v = 0;
    CHECK_OK(parse_count("64", &v));
    CHECK_EQ_U64(v, 64);
    CHECK_OK(parse_count("64k", &v));
    CHECK_EQ_U64(v, 64000);
    CHECK_OK(parse_count("64M", &v));
    CHECK_EQ_U64(v, 64000000);
    CHECK_OK(parse_count("1GiB", &v));
    CHECK_EQ_U64(v, 1ull << 30);
    CHECK_OK(parse_count("3Ki", &v));
    CHECK_EQ_U64(v, 3072);
    CHECK_OK(parse_count("7B", &v));
    CHECK_EQ_U64(v, 7);
    CHECK_OK(parse_count("18446744073709551615", &v));
    CHECK_EQ_U64(v, UINT64_MAX);
    const char *bad[] = {"", "-1", "+1", " 1", "1 ", "1x", "18446744073709551616", "20000000000G", "1iB", "M", "1MM"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_MSG(parse_count(bad[i], &v) != 0, "parse_count accepted '%s'", bad[i]);
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

static void test_compress_and_chunk(void)
{
    compress_kind k;
    int level = 0;
    uint64_t chunk = 99;
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
    CHECK_OK(parse_chunk("auto", &chunk));
    CHECK_EQ_U64(chunk, 0);
    CHECK_OK(parse_chunk("16", &chunk));
    CHECK_EQ_U64(chunk, 16);
    CHECK(parse_chunk("0", &chunk) != 0);
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
    CHECK_EQ_U64(o.max_pixels, 10000000);
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

int main(void)
{
    test_counts();
    test_sizes();
    test_compress_and_chunk();
    test_full_lines();
    test_errors();
    printf("options: ok\n");
    return 0;
}
