/* chunksrc_map.c - the zero-copy path of uncompressed implicit and contiguous sources: the data range
 * of the file is mapped read-only at open, and a chunk "load" populates the page tables of its range
 * (MADV_POPULATE_READ: the page cache lookups and faults happen in the load, the pixels are not
 * touched) and hands out a pointer into the mapping. The assembly then copies page cache -> batch in
 * one pass, where pread + copy make two (pread: page cache -> cache slot, later slot -> batch).
 *
 * Safety: touching a mapped page beyond the end of the file raises SIGBUS. The data range is checked
 * against the file size at open (no mapping when the file is shorter), and every chunk is populated
 * before its pointer is handed out: MADV_POPULATE_READ fails with EFAULT where an access would raise
 * SIGBUS, and the chunk then goes through pread, which reports the truncation as an error. Left open: a
 * file truncated by another process between the populate and the copy (the kernel unmaps the pages):
 * that still raises SIGBUS. H5PACK_NO_MMAP=1 turns the mapping off. */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chunksrc_impl.h"
#include "clock.h"
#include "env.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif

/* First byte after the last image (the last implicit chunk is stored full size; we need its images). */
static uint64_t data_end(const chunk_source *s)
{
    uint64_t last = s->g.n_chunks - 1;
    return s->base_addr + h5pack_chunksrc_unit_start(s, last) + h5pack_chunksrc_unit_len(s, last);
}

/* Page-aligned [*START, *START + *LEN) around the file range [addr, addr + bytes). */
static void page_range(uint64_t addr, uint64_t bytes, uint64_t *start, uint64_t *len)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    *start = addr / page * page;
    *len = addr + bytes - *start;
}

/* MADV_POPULATE_READ of the file range; 0, or -1 with errno (EFAULT: beyond the end of the file). */
static int populate(const chunk_source *s, uint64_t addr, uint64_t bytes)
{
    uint64_t start, len;
    page_range(addr, bytes, &start, &len);
    uint8_t *p = (uint8_t *)s->map + (start - s->map_offset);
    int rc;
    do
        rc = madvise(p, (size_t)len, MADV_POPULATE_READ);
    while (rc != 0 && errno == EINTR);
    return rc;
}

static int mapping_wanted(const chunk_source *s)
{
    if (h5pack_env_flag("H5PACK_NO_MMAP"))
        return 0;
    return (s->g.path == CHUNKSRC_IMPLICIT || s->g.path == CHUNKSRC_CONTIGUOUS) && !s->g.compressed &&
           s->fd >= 0 && s->g.n_chunks > 0 && sizeof(size_t) >= 8;
}

void h5pack_chunksrc_map_file(chunk_source *s)
{
    struct stat st;
    if (!mapping_wanted(s) || fstat(s->fd, &st) != 0 || (uint64_t)st.st_size < data_end(s))
        return; /* pread it is */
    uint64_t start, len;
    page_range(s->base_addr, data_end(s) - s->base_addr, &start, &len);
    void *m = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, s->fd, (off_t)start);
    if (m == MAP_FAILED)
        return;
    s->map = m, s->map_len = (size_t)len, s->map_offset = start;
    /* A kernel without MADV_POPULATE_READ (EINVAL) could not tell us about a truncated file: no mapping. */
    if (populate(s, s->base_addr, 1) != 0)
        h5pack_chunksrc_unmap_file(s);
}

void h5pack_chunksrc_unmap_file(chunk_source *s)
{
    if (s->map)
        munmap((void *)s->map, s->map_len);
    s->map = NULL, s->map_len = 0, s->map_offset = 0;
}

/* The chunk that starts at byte REL of the image data: 0, or -1 when none does. */
static int chunk_at(const chunk_source *s, uint64_t rel, uint64_t *chunk)
{
    uint64_t lo = 0, hi = s->g.n_chunks; /* the chunk starts rise with the chunk: bisect */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (h5pack_chunksrc_unit_start(s, mid) <= rel)
            lo = mid;
        else
            hi = mid;
    }
    *chunk = lo;
    return h5pack_chunksrc_unit_start(s, lo) == rel ? 0 : -1;
}

void h5pack_chunksrc_map_release(chunk_source *s, const uint8_t *data)
{
    if (!s || !s->map || data < s->map || data >= s->map + s->map_len)
        return;
    uint64_t addr = s->map_offset + (uint64_t)(data - s->map), chunk = 0;
    if (addr < s->base_addr || chunk_at(s, addr - s->base_addr, &chunk) != 0)
        return; /* not a chunk start */
    uint64_t end = addr + h5pack_chunksrc_unit_len(s, chunk);
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), first = (addr + page - 1) / page * page, last = end / page * page;
    /* only the pages wholly inside the chunk: its neighbours' pages may be in use */
    if (last > first)
        madvise((uint8_t *)s->map + (first - s->map_offset), (size_t)(last - first), MADV_DONTNEED);
}

int h5pack_chunksrc_is_mapped(const chunk_source *s)
{
    return s && s->map != NULL;
}

int h5pack_chunksrc_map(chunk_source *s, uint64_t chunk, const uint8_t **data, chunk_read_cost *cost)
{
    if (!s || !s->map || chunk >= s->g.n_chunks)
        return CHUNKSRC_NOT_MAPPED;
    uint64_t addr = s->base_addr + h5pack_chunksrc_unit_start(s, chunk), len = h5pack_chunksrc_unit_len(s, chunk);
    double t0 = h5pack_clock_s();
    if (populate(s, addr, len) != 0)
        return CHUNKSRC_NOT_MAPPED; /* e.g. truncated since open: pread reports it */
    *data = s->map + (addr - s->map_offset);
    if (cost) {
        cost->bytes_read += len;
        cost->read_s += h5pack_clock_s() - t0;
    }
    return 0;
}
