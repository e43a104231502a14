/* tile_map.c - see tile_map.h. */
#include "tile_map.h"

#include <stdlib.h>
#include <string.h>

#include "h5pack.h"
#include "rng.h"

static size_t cell_of(const tile_map *m, uint64_t tile)
{
    return (size_t)(rng_mix64(tile) & (m->cap - 1));
}

static int alloc_cells(tile_map *m, size_t cap)
{
    m->keys = malloc(cap * sizeof *m->keys), m->values = malloc(cap * sizeof *m->values);
    if (!m->keys || !m->values) {
        free(m->keys), free(m->values);
        m->keys = m->values = NULL;
        return H5PACK_ENOMEM;
    }
    memset(m->keys, 0xFF, cap * sizeof *m->keys); /* every key TILE_MAP_EMPTY */
    m->cap = cap, m->n = 0;
    return 0;
}

int h5pack_tile_map_init(tile_map *m, size_t expected)
{
    size_t cap = 16;
    while (cap < 2 * expected)
        cap *= 2;
    return alloc_cells(m, cap);
}

void h5pack_tile_map_free(tile_map *m)
{
    free(m->keys), free(m->values);
    memset(m, 0, sizeof *m);
}

void h5pack_tile_map_clear(tile_map *m)
{
    memset(m->keys, 0xFF, m->cap * sizeof *m->keys);
    m->n = 0;
}

/* The cell holding TILE, or the free cell where it would go. */
static size_t find(const tile_map *m, uint64_t tile)
{
    size_t i = cell_of(m, tile);
    while (m->keys[i] != TILE_MAP_EMPTY && m->keys[i] != tile)
        i = (i + 1) & (m->cap - 1);
    return i;
}

int h5pack_tile_map_get(const tile_map *m, uint64_t tile, uint64_t *value)
{
    size_t i = find(m, tile);
    if (m->keys[i] == TILE_MAP_EMPTY)
        return 0;
    *value = m->values[i];
    return 1;
}

static int grow(tile_map *m)
{
    tile_map bigger;
    if (alloc_cells(&bigger, 2 * m->cap))
        return H5PACK_ENOMEM;
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i] != TILE_MAP_EMPTY) {
            size_t j = find(&bigger, m->keys[i]);
            bigger.keys[j] = m->keys[i], bigger.values[j] = m->values[i], bigger.n++;
        }
    h5pack_tile_map_free(m);
    *m = bigger;
    return 0;
}

int h5pack_tile_map_put(tile_map *m, uint64_t tile, uint64_t value)
{
    size_t i = find(m, tile);
    if (m->keys[i] == TILE_MAP_EMPTY) {
        if (2 * (m->n + 1) > m->cap) {
            if (grow(m))
                return H5PACK_ENOMEM;
            i = find(m, tile);
        }
        m->keys[i] = tile, m->n++;
    }
    m->values[i] = value;
    return 0;
}

void h5pack_tile_map_remove(tile_map *m, uint64_t tile)
{
    size_t i = find(m, tile), mask = m->cap - 1;
    if (m->keys[i] == TILE_MAP_EMPTY)
        return;
    m->n--;
    /* backward shift: move later entries of the run into the hole when their home allows it */
    for (size_t j = (i + 1) & mask;; j = (j + 1) & mask) {
        if (m->keys[j] == TILE_MAP_EMPTY)
            break;
        size_t home = cell_of(m, m->keys[j]);
        int between = i <= j ? (i < home && home <= j) : (i < home || home <= j); /* home in (i, j]: stays */
        if (between)
            continue;
        m->keys[i] = m->keys[j], m->values[i] = m->values[j];
        i = j;
    }
    m->keys[i] = TILE_MAP_EMPTY;
}
