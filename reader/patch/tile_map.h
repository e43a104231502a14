/* tile_map.h - a hash map from tile numbers to 64-bit values (open addressing, linear probing, deletion by
 * backward shift), so that the patch reader's memory follows the tiles it caches and the accesses it plans,
 * not the tiles in the file (a slide collection can hold hundreds of millions). Not thread-safe. */
#ifndef H5PACK_TILE_MAP_H
#define H5PACK_TILE_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct tile_map {
    uint64_t *keys;   /* TILE_MAP_EMPTY marks a free cell */
    uint64_t *values;
    size_t cap, n;    /* cap: a power of two, kept at least twice n */
} tile_map;

#define TILE_MAP_EMPTY UINT64_MAX

/* Room for EXPECTED entries without growing. 0 or H5PACK_ENOMEM. */
int h5pack_tile_map_init(tile_map *m, size_t expected);
void h5pack_tile_map_free(tile_map *m);

/* Forgets every entry (keeps the memory). */
void h5pack_tile_map_clear(tile_map *m);

/* The value of TILE in *VALUE: 1 when present, else 0. */
int h5pack_tile_map_get(const tile_map *m, uint64_t tile, uint64_t *value);

/* Sets TILE's value (inserting it). 0 or H5PACK_ENOMEM (then the map is unchanged). */
int h5pack_tile_map_put(tile_map *m, uint64_t tile, uint64_t value);

/* Removes TILE (absent: nothing). */
void h5pack_tile_map_remove(tile_map *m, uint64_t tile);

#endif
