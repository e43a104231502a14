/* test_order.c - the order contract of reader/plan/order.h: coverage, ranks, determinism, the CHUNK
 * order's window bound, and the access sequence. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "order.h"

static order_params params(h5pack_order kind, uint64_t n, uint64_t k, uint64_t w, uint64_t seed)
{
    order_params p = {kind, n, k, w, seed, 0, 1, 0, 7};
    return p;
}

/* every sample of 0..n-1 exactly once */
static void check_permutation(const uint64_t *a, uint64_t n)
{
    char *seen = calloc(n, 1);
    for (uint64_t i = 0; i < n; i++) {
        CHECK_MSG(a[i] < n, "sample %llu out of range", (unsigned long long)a[i]);
        CHECK_MSG(!seen[a[i]], "sample %llu twice", (unsigned long long)a[i]);
        seen[a[i]] = 1;
    }
    free(seen);
}

static void test_each_sample_once(void)
{
    const h5pack_order kinds[] = {H5PACK_ORDER_SEQUENTIAL, H5PACK_ORDER_RANDOM, H5PACK_ORDER_CHUNK};
    const uint64_t sizes[] = {1, 2, 9, 100, 1003};
    for (int ki = 0; ki < 3; ki++)
        for (int si = 0; si < 5; si++)
            for (uint64_t k = 1; k <= 17; k += 8)
                for (uint64_t w = 1; w <= 9; w += 4) {
                    order_params p = params(kinds[ki], sizes[si], k, w, 42);
                    uint64_t *a = malloc(sizes[si] * sizeof *a);
                    for (uint64_t e = 0; e < 3; e++) {
                        CHECK_OK(h5pack_order_epoch(&p, e, a));
                        check_permutation(a, sizes[si]);
                    }
                    free(a);
                }
}

static void test_determinism(void)
{
    const uint64_t n = 500;
    uint64_t *a = malloc(n * 8), *b = malloc(n * 8);
    for (int kind = H5PACK_ORDER_RANDOM; kind <= H5PACK_ORDER_CHUNK; kind++) {
        order_params p = params((h5pack_order)kind, n, 10, 4, 1);
        CHECK_OK(h5pack_order_epoch(&p, 0, a));
        CHECK_OK(h5pack_order_epoch(&p, 0, b));
        CHECK(memcmp(a, b, n * 8) == 0); /* same seed, same order */
        CHECK_OK(h5pack_order_epoch(&p, 1, b));
        CHECK(memcmp(a, b, n * 8) != 0); /* next epoch differs */
        p.seed = 2;
        CHECK_OK(h5pack_order_epoch(&p, 0, b));
        CHECK(memcmp(a, b, n * 8) != 0); /* different seed differs */
    }
    order_params s = params(H5PACK_ORDER_SEQUENTIAL, n, 10, 4, 1);
    CHECK_OK(h5pack_order_epoch(&s, 3, a));
    for (uint64_t i = 0; i < n; i++)
        CHECK_EQ_U64(a[i], i);
    free(a), free(b);
}

static void test_ranks(void)
{
    for (uint64_t n = 1; n <= 60; n += 7)
        for (uint32_t world = 1; world <= 4; world++)
            for (int drop_last = 0; drop_last <= 1; drop_last++) {
                order_params p = params(H5PACK_ORDER_CHUNK, n, 4, 3, 9);
                p.world = world;
                p.drop_last = drop_last;
                p.batch_size = 3;
                uint64_t per = h5pack_order_samples_per_epoch(&p), batches = h5pack_order_batches_per_epoch(&p);
                if (drop_last) {
                    CHECK_EQ_U64(per, (n / world) / 3 * 3);
                    CHECK_EQ_U64(batches, (n / world) / 3);
                } else {
                    CHECK_EQ_U64(per, (n + world - 1) / world);
                    CHECK_EQ_U64(batches, (per + 2) / 3);
                }
                unsigned *count = calloc(n, sizeof *count);
                uint64_t *a = malloc((per + 1) * 8);
                for (uint32_t r = 0; r < world; r++) {
                    p.rank = r;
                    CHECK_EQ_U64(h5pack_order_samples_per_epoch(&p), per); /* equal on every rank */
                    CHECK_OK(h5pack_order_epoch(&p, 0, a));
                    for (uint64_t i = 0; i < per; i++)
                        count[a[i]]++;
                }
                uint64_t total = 0, padded = per * world > n ? per * world - n : 0;
                for (uint64_t i = 0; i < n; i++) {
                    if (!drop_last)
                        CHECK_MSG(count[i] >= 1, "n=%llu world=%u: sample %llu on no rank", (unsigned long long)n,
                                  world, (unsigned long long)i);
                    CHECK(count[i] <= (per * world + n - 1) / n); /* padding repeats only to fill */
                    total += count[i];
                }
                CHECK_EQ_U64(total, per * world);
                if (!drop_last && n % world == 0)
                    CHECK_EQ_U64(padded, 0); /* disjoint and complete */
                free(count), free(a);
            }
}

/* Chunks "open" at once (first access done, last access not yet): never more than the window. */
static void test_chunk_window(void)
{
    const uint64_t n = 997, k = 8;
    for (uint64_t w = 1; w <= 16; w *= 2) {
        order_params p = params(H5PACK_ORDER_CHUNK, n, k, w, 5);
        uint64_t *a = malloc(n * 8);
        CHECK_OK(h5pack_order_epoch(&p, 0, a));
        uint64_t nc = h5pack_order_n_chunks(&p);
        uint64_t *first = malloc(nc * 8), *last = malloc(nc * 8);
        for (uint64_t c = 0; c < nc; c++)
            first[c] = UINT64_MAX, last[c] = 0;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t c = a[i] / k;
            if (first[c] == UINT64_MAX)
                first[c] = i;
            last[c] = i;
        }
        for (uint64_t i = 0; i < n; i++) {
            uint64_t open = 0;
            for (uint64_t c = 0; c < nc; c++)
                open += first[c] <= i && i <= last[c];
            CHECK_MSG(open <= w, "w=%llu: %llu chunks open at %llu", (unsigned long long)w, (unsigned long long)open,
                      (unsigned long long)i);
        }
        free(a), free(first), free(last);
    }
}

static void test_accesses(void)
{
    order_params p = params(H5PACK_ORDER_SEQUENTIAL, 10, 3, 1, 0);
    p.batch_size = 4;
    const uint64_t s[10] = {0, 1, 2, 3, 4, 5, 6, 9, 8, 7};
    uint64_t acc[10], starts[4];
    uint64_t n = h5pack_order_accesses(&p, s, 10, acc, starts);
    /* batches {0,1,2,3} {4,5,6,9} {8,7}: chunks {0,1} {1,2,3} {2} */
    const uint64_t want[] = {0, 1, 1, 2, 3, 2};
    CHECK_EQ_U64(n, 6);
    for (int i = 0; i < 6; i++)
        CHECK_EQ_U64(acc[i], want[i]);
    CHECK_EQ_U64(starts[0], 0);
    CHECK_EQ_U64(starts[1], 2);
    CHECK_EQ_U64(starts[2], 5);
    CHECK_EQ_U64(starts[3], 6);
}

/* The default window: 256 MiB of chunks, at least 16, at most all of them; geometry only. */
static void test_default_window(void)
{
    const uint64_t mib = (uint64_t)1 << 20;
    CHECK_EQ_U64(h5pack_order_default_window(12500, 8 * 150528), 222); /* 224x224 RGB, chunks of 8 */
    CHECK_EQ_U64(h5pack_order_default_window(100000, 2 * mib), 128);  /* the converter's 2 MiB target */
    CHECK_EQ_U64(h5pack_order_default_window(196, 768 * 1024), 196);  /* CIFAR: the whole file */
    CHECK_EQ_U64(h5pack_order_default_window(1000, 64 * mib), 16);    /* huge chunks: at least 16 */
    CHECK_EQ_U64(h5pack_order_default_window(5, 64 * mib), 5);        /* ... but never more than there are */
    CHECK_EQ_U64(h5pack_order_default_window(1000000, 1024), 262144); /* tiny chunks: the byte budget */
    CHECK_EQ_U64(h5pack_order_default_window(1, 1), 1);
    CHECK_EQ_U64(h5pack_order_default_window(100, 0), 16);
    CHECK_EQ_U64(h5pack_order_default_window(100, 256 * mib + 1), 16);
    CHECK_EQ_U64(h5pack_order_default_window(100000, 256 * mib / 40), 40);
}

int main(void)
{
    test_default_window();
    test_each_sample_once();
    test_determinism();
    test_ranks();
    test_chunk_window();
    test_accesses();
    printf("order: all checks passed\n");
    return 0;
}
