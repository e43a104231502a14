/* tilesrc_map.c - the zero-copy path of implicit tiles (tilesrc.h): the file is mapped read-only at open,
 * a tile "load" populates the page tables of its range (MADV_POPULATE_READ: faults and page cache lookups
 * happen in the load, in parallel, not in the assembly) and hands out a pointer into the mapping. A patch
 * is then one copy, page cache -> batch, where pread makes two. The SIGBUS rules are chunksrc_map.c's: the
 * tiles' range is checked against the file size at open, and a tile whose populate fails (EFAULT: the file
 * was truncated since) goes through pread, which reports it. H5PACK_NO_MMAP=1 turns the mapping off. */
#include <errno.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "env.h"
#include "tilesrc_impl.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif

static uint64_t page_size(void)
{
    return (uint64_t)sysconf(_SC_PAGESIZE);
}

/* MADV_POPULATE_READ of [addr, addr + bytes); 0, or -1 with errno. */
static int populate(const tile_source *s, uint64_t addr, uint64_t bytes)
{
    uint64_t start = addr / page_size() * page_size();
    int rc;
    do
        rc = madvise((void *)(s->map + start), (size_t)(addr + bytes - start), MADV_POPULATE_READ);
    while (rc != 0 && errno == EINTR);
    return rc;
}

/* The end of the last implicit tile of any image, 0 when there is none. */
static uint64_t implicit_end(const tile_source *s)
{
    uint64_t end = 0;
    for (uint64_t i = 0; i < s->g.n_images; i++) {
        const tile_image *im = &s->img[i];
        uint64_t e = (uint64_t)im->addr0 + (uint64_t)im->ny * im->nx * im->ch * im->cw * s->g.channels;
        if (im->path == TILE_IMPLICIT && e > end)
            end = e;
    }
    return end;
}

void h5pack_tilesrc_map_file(tile_source *s)
{
    struct stat st;
    uint64_t end = implicit_end(s);
    if (end == 0 || h5pack_env_flag("H5PACK_NO_MMAP") || sizeof(size_t) < 8 || fstat(s->fd, &st) != 0 ||
        (uint64_t)st.st_size < end)
        return; /* pread it is */
    void *m = mmap(NULL, (size_t)end, PROT_READ, MAP_SHARED, s->fd, 0);
    if (m == MAP_FAILED)
        return;
    s->map = m, s->map_len = (size_t)end;
#ifdef MADV_HUGEPAGE
    /* a hint for tiles not in the page cache yet: read ahead in 2 MiB folios (each then mapped by one
     * page-table entry, on this pass and on later ones) instead of the small ones a tile-sized read-ahead
     * makes (docs/patches.md, "Huge pages of the page cache") */
    (void)madvise(m, (size_t)end, MADV_HUGEPAGE);
#endif
    if (populate(s, 0, 1) != 0) /* a kernel without MADV_POPULATE_READ could not report a truncated file */
        h5pack_tilesrc_unmap_file(s);
}

void h5pack_tilesrc_unmap_file(tile_source *s)
{
    if (s->map)
        munmap((void *)s->map, s->map_len);
    s->map = NULL, s->map_len = 0;
}

/* Tile TILE's file range, 0 when it is implicit and inside the mapping. */
static int tile_range(const tile_source *s, uint64_t tile, uint64_t *addr, uint64_t *bytes)
{
    const tile_image *im = &s->img[h5pack_tilesrc_image_of(s, tile)];
    if (!s->map || im->path != TILE_IMPLICIT)
        return -1;
    *bytes = (uint64_t)im->ch * im->cw * s->g.channels;
    *addr = (uint64_t)im->addr0 + (tile - im->first_tile) * *bytes;
    return *addr + *bytes <= s->map_len ? 0 : -1;
}

int h5pack_tilesrc_map(tile_source *s, uint64_t tile, const uint8_t **data, chunk_read_cost *cost)
{
    uint64_t addr, bytes;
    if (tile_range(s, tile, &addr, &bytes) != 0)
        return TILESRC_NOT_MAPPED;
    double t0 = h5pack_clock_s();
    if (populate(s, addr, bytes) != 0)
        return TILESRC_NOT_MAPPED; /* e.g. truncated since open: pread reports it */
    *data = s->map + addr;
    cost->bytes_read += bytes;
    cost->read_s += h5pack_clock_s() - t0;
    return 0;
}

void h5pack_tilesrc_map_release(tile_source *s, uint64_t tile)
{
    uint64_t addr, bytes;
    if (tile_range(s, tile, &addr, &bytes) != 0)
        return;
    /* every page the tile touches, the two it may share with its neighbours too: on a read-only shared
     * mapping MADV_DONTNEED only drops page-table entries, and a neighbour still read faults its page back
     * in from the page cache. Keeping the shared pages instead would leave two pages per tile resident. */
    uint64_t first = addr / page_size() * page_size(), last = (addr + bytes + page_size() - 1) / page_size() * page_size();
    if (last > s->map_len)
        last = s->map_len;
    madvise((void *)(s->map + first), (size_t)(last - first), MADV_DONTNEED);
}
