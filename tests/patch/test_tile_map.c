/* tile_map (reader/patch/tile_map.h) against a plain array over 200,000 random puts, gets and removes on
 * keys from a small range (many collisions, long probe runs, removals inside them), with growth from the
 * smallest size; then clear. */
#include <stdint.h>

#include "check.h"
#include "rng.h"
#include "tile_map.h"

#define KEYS 5000

int main(void)
{
    static uint64_t ref[KEYS];
    static int present[KEYS];
    tile_map m;
    CHECK_OK(h5pack_tile_map_init(&m, 0));
    rng_state r = {42};
    size_t n = 0;
    for (int op = 0; op < 200000; op++) {
        uint64_t k = rng_below(&r, KEYS) * 0x10001ull, v; /* spread keys, same home cells now and then */
        size_t i = (size_t)(k / 0x10001ull);
        switch (rng_below(&r, 3)) {
        case 0:
            CHECK_OK(h5pack_tile_map_put(&m, k, (uint64_t)op));
            n += !present[i];
            present[i] = 1, ref[i] = (uint64_t)op;
            break;
        case 1:
            h5pack_tile_map_remove(&m, k);
            n -= present[i];
            present[i] = 0;
            break;
        default:
            CHECK_EQ_INT(h5pack_tile_map_get(&m, k, &v), present[i]);
            if (present[i])
                CHECK_EQ_U64(v, ref[i]);
        }
        CHECK_EQ_U64(m.n, n);
    }
    for (size_t i = 0; i < KEYS; i++) { /* every key once more, after all the shifting */
        uint64_t v;
        CHECK_EQ_INT(h5pack_tile_map_get(&m, i * 0x10001ull, &v), present[i]);
        if (present[i])
            CHECK_EQ_U64(v, ref[i]);
    }
    h5pack_tile_map_clear(&m);
    uint64_t v;
    CHECK(m.n == 0 && !h5pack_tile_map_get(&m, 0x10001ull, &v));
    h5pack_tile_map_free(&m);
    printf("tile_map: 200000 random operations agree with the reference (%zu keys at the end)\n", n);
    return 0;
}
