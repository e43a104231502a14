/* test_convert_chunking.c - the chunk shape rule for a few image sizes, batches and counts. */
#include "check.h"
#include "chunking.h"

static uint64_t choose(uint64_t image_bytes, uint64_t n, uint64_t batch, uint64_t requested, chunk_choice *c)
{
    char err[256];
    CHECK_MSG(choose_chunk(image_bytes, n, batch, requested, c, err, sizeof err) == 0, "%s", err);
    CHECK(c->images >= 1 && c->images <= n);
    CHECK(c->images * image_bytes <= CHUNK_MAX_BYTES);
    CHECK(c->reason[0] != '\0');
    return c->images;
}

int main(void)
{
    chunk_choice c;
    char err[256];
    /* 224x224x3 = 147 KiB: 2 MiB holds 13; the largest divisor of 256 not above 13 is 8. */
    CHECK_EQ_U64(choose(3 * 224 * 224, 100000, 256, 0, &c), 8);
    CHECK_STR_CONTAINS(c.reason, "largest divisor of --batch 256");
    CHECK_EQ_U64(c.target_bytes, CHUNK_TARGET_BYTES);
    /* CIFAR 32x32x3: 682 fit, capped at the batch. */
    CHECK_EQ_U64(choose(3 * 32 * 32, 50000, 256, 0, &c), 256);
    CHECK_STR_CONTAINS(c.reason, "capped at --batch 256");
    /* CelebA 3x218x178 = 116,412 B: 18 fit; divisors of 256 up to 18: 16 (>= 18/2). */
    CHECK_EQ_U64(choose(3 * 218 * 178, 200000, 256, 0, &c), 16);
    /* A batch with poor divisors (251 is prime): keep the 13 that fit. */
    CHECK_EQ_U64(choose(3 * 224 * 224, 100000, 251, 0, &c), 13);
    /* An image above the target: one per chunk. */
    CHECK_EQ_U64(choose(3 * 1024 * 1024, 1000, 256, 0, &c), 1);
    CHECK_STR_CONTAINS(c.reason, "above the target");
    /* Fewer images than the choice. */
    CHECK_EQ_U64(choose(3 * 32 * 32, 10, 256, 0, &c), 10);
    CHECK_STR_CONTAINS(c.reason, "reduced to the 10 images");
    /* --chunk K, and K above N. */
    CHECK_EQ_U64(choose(3 * 224 * 224, 1000, 256, 64, &c), 64);
    CHECK_STR_CONTAINS(c.reason, "set by --chunk 64");
    CHECK_EQ_U64(choose(3 * 224 * 224, 20, 256, 64, &c), 20);
    /* HDF5's chunk limit: 2^32-2 bytes. */
    CHECK_EQ_U64(choose(3ull * 20000 * 20000, 100, 256, 0, &c), 1);
    CHECK(choose_chunk(3ull * 20000 * 20000, 100, 256, 4, &c, err, sizeof err) != 0);
    CHECK_STR_CONTAINS(err, "HDF5 allows at most");
    /* --chunk K above N is reduced to N, which must still respect the limit (5 x 1.2 GB here). */
    CHECK(choose_chunk(3ull * 20000 * 20000, 5, 256, 10, &c, err, sizeof err) != 0);
    CHECK_STR_CONTAINS(err, "HDF5 allows at most");
    CHECK_EQ_U64(choose(3ull * 20000 * 20000, 3, 256, 10, &c), 3);
    CHECK(choose_chunk(3ull * 40000 * 40000, 100, 256, 0, &c, err, sizeof err) != 0);
    CHECK_STR_CONTAINS(err, "above HDF5's chunk limit");
    /* Auto for a huge count stays bounded by the limit: 1 MiB images, batch 4096 -> 2. */
    CHECK_EQ_U64(choose(1 << 20, 1000000, 4096, 0, &c), 2);
    printf("chunking: ok\n");
    return 0;
}
