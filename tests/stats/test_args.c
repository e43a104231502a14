/* test_args.c - h5pack-stats option parsing: size suffixes, lists, names, numbers. */
#include <stdint.h>
#include <stdlib.h>

#include "args.h"
#include "check.h"

static uint64_t size_of(const char *text)
{
    uint64_t v = 0;
    CHECK_MSG(parse_size(text, &v) == 0, "parse_size(\"%s\") failed", text);
    return v;
}

static void test_sizes(void)
{
    CHECK_EQ_U64(size_of("1073741824"), 1073741824ull);
    CHECK_EQ_U64(size_of("512k"), 512ull << 10);
    CHECK_EQ_U64(size_of("512K"), 512ull << 10);
    CHECK_EQ_U64(size_of("64M"), 64ull << 20);
    CHECK_EQ_U64(size_of("64MB"), 64ull << 20);
    CHECK_EQ_U64(size_of("64MiB"), 64ull << 20);
    CHECK_EQ_U64(size_of("1GiB"), 1ull << 30);
    CHECK_EQ_U64(size_of("1g"), 1ull << 30);
    CHECK_EQ_U64(size_of("1.5G"), 3ull << 29);
    CHECK_EQ_U64(size_of("2T"), 2ull << 40);
    CHECK_EQ_U64(size_of("100B"), 100);
    const char *bad[] = {"", "-1M", "M", "64X", "64MiBs", "1e30G", " 64M", "64 M", "+5", "nan", "inf"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        uint64_t v = 0;
        CHECK_MSG(parse_size(bad[i], &v) != 0, "parse_size(\"%s\") accepted", bad[i]);
    }
    char buf[32];
    format_size(64ull << 20, buf, sizeof buf);
    CHECK_STR_CONTAINS(buf, "64 MiB");
    format_size(3ull << 29, buf, sizeof buf);
    CHECK_STR_CONTAINS(buf, "1.5 GiB");
    format_size(100, buf, sizeof buf);
    CHECK_STR_CONTAINS(buf, "100 B");
}

static void test_lists_and_names(void)
{
    char *store = NULL;
    const char *items[4];
    CHECK_EQ_INT(split_list("64M,256M,1G", &store, items, 4), 3);
    CHECK_STR_CONTAINS(items[2], "1G");
    free(store);
    CHECK_EQ_INT(split_list("a,,b", &store, items, 4), -1);
    free(store);
    CHECK_EQ_INT(split_list("a,b,c,d,e", &store, items, 4), -1);
    free(store);
    CHECK_EQ_INT(split_list("a,", &store, items, 4), -1);
    free(store);
    h5pack_order o;
    h5pack_policy p;
    h5pack_device d;
    CHECK(parse_order("chunk", &o) == 0 && o == H5PACK_ORDER_CHUNK);
    CHECK(parse_order("Chunk", &o) != 0);
    CHECK(parse_policy("hdf5", &p) == 0 && p == H5PACK_POLICY_HDF5);
    CHECK(parse_policy("fifo", &p) != 0);
    CHECK(parse_device("cuda", &d) == 0 && d == H5PACK_DEVICE_CUDA);
    uint64_t n;
    double x;
    CHECK(parse_u64("12", 1, 100, &n) == 0 && n == 12);
    CHECK(parse_u64("0", 1, 100, &n) != 0);
    CHECK(parse_u64("12x", 1, 100, &n) != 0);
    CHECK(parse_u64("-3", 0, 100, &n) != 0);
    CHECK(parse_double("0.75", 0, 1, &x) == 0 && x == 0.75);
    CHECK(parse_double("1.5", 0, 1, &x) != 0);
}

int main(void)
{
    test_sizes();
    test_lists_and_names();
    return 0;
}
