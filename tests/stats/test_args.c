/* test_args.c - h5pack-stats option parsing: counts, lists, names, numbers. */
#include <stdint.h>
#include <stdlib.h>

#include "args.h"
#include "check.h"

/* Counts take the one size rule (common/sizes.h, tested on its table by tests/common): here, that
 * parse_u64 goes through it and keeps its bounds. */
static void test_counts(void)
{
    uint64_t n = 0;
    CHECK(parse_u64("4K", 1, UINT32_MAX, &n) == 0 && n == 4096);
    CHECK(parse_u64("1.5k", 1, UINT32_MAX, &n) == 0 && n == 1536);
    CHECK(parse_u64("4G", 1, UINT32_MAX, &n) != 0); /* above max */
    CHECK(parse_u64("1X", 0, UINT64_MAX, &n) != 0);
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
    test_counts();
    test_lists_and_names();
    return 0;
}
