/* test_convert_layout.c - layout_store (vector code where the CPU has it) gives the same bytes and the
 * same per-channel sums as a naive per-pixel loop, and as layout_store_plain: sizes around the 16-pixel
 * vector width and past the 65,536-pixel blocks whose 32-bit square sums must not overflow (all-255
 * images), one and three channels, both layouts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "layout.h"

/* The definition, written as plainly as possible. */
static void naive(const uint8_t *hwc, size_t count, uint32_t channels, int nhwc, uint8_t *dst, uint64_t sum[3],
                  uint64_t sum_sq[3])
{
    for (uint32_t c = 0; c < 3; c++)
        sum[c] = sum_sq[c] = 0;
    for (size_t i = 0; i < count; i++)
        for (uint32_t c = 0; c < channels; c++) {
            uint8_t v = hwc[i * channels + c];
            sum[c] += v;
            sum_sq[c] += (uint64_t)v * v;
            dst[nhwc ? i * channels + c : c * count + i] = v;
        }
}

typedef void (*layout_fn)(const uint8_t *, size_t, uint32_t, int, uint8_t *, uint64_t *, uint64_t *);

static void check_case(const uint8_t *src, size_t count, uint32_t channels, int nhwc, layout_fn fn, const char *name)
{
    size_t bytes = count * channels;
    uint8_t *want = malloc(bytes + 1), *got = malloc(bytes + 1);
    uint64_t ws[3], wq[3], gs[3] = {1, 1, 1}, gq[3] = {1, 1, 1};
    CHECK(want && got);
    naive(src, count, channels, nhwc, want, ws, wq);
    memset(got, 0xA5, bytes + 1);
    fn(src, count, channels, nhwc, got, gs, gq);
    CHECK_MSG(memcmp(want, got, bytes) == 0, "%s: bytes differ (count %zu, channels %u, nhwc %d)", name, count,
              channels, nhwc);
    CHECK_MSG(got[bytes] == 0xA5, "%s: wrote past the end (count %zu)", name, count);
    for (uint32_t c = 0; c < channels; c++) {
        CHECK_EQ_U64(gs[c], ws[c]);
        CHECK_EQ_U64(gq[c], wq[c]);
    }
    free(want);
    free(got);
}

int main(void)
{
    static const size_t counts[] = {0, 1, 15, 16, 17, 31, 47, 48, 49, 178 * 218, 65536, 65536 + 16 + 3, 3 * 65536 + 7,
                                    300001};
    size_t max = 300001 * 3;
    uint8_t *random = malloc(max), *full = malloc(max);
    CHECK(random && full);
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < max; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        random[i] = (uint8_t)(s >> 56);
    }
    memset(full, 255, max); /* the largest squares: the 32-bit block sums' worst case */
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
        for (uint32_t channels = 1; channels <= 3; channels += 2)
            for (int nhwc = 0; nhwc < 2; nhwc++) {
                check_case(random, counts[k], channels, nhwc, layout_store, "layout_store");
                check_case(full, counts[k], channels, nhwc, layout_store, "layout_store");
                check_case(random, counts[k], channels, nhwc, layout_store_plain, "layout_store_plain");
                check_case(full, counts[k], channels, nhwc, layout_store_plain, "layout_store_plain");
            }
    /* An unaligned source and destination (decoders' buffers come from malloc, chunk rows do not). */
    check_case(random + 1, 1001, 3, 0, layout_store, "layout_store (unaligned)");
    free(random);
    free(full);
    printf("layout: vector and plain code match the definition\n");
    return 0;
}
