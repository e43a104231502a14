/* mpi_root.c - rank 0's part of the MPI conversion (mpi_pack.h): the file's skip list and row order,
 * and the chunks that several ranks' rows make up, completed and written here. */
#include "mpi_pack.h"

#ifdef H5PACK_HAVE_MPI

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk_filter.h"
#include "mpi_pack_impl.h"

/* Rank 0 takes the window's skip records (every rank's, in rank order = position order) and appends
 * the skipped files and the kept positions of [WS, WE) to RES. */
int mpi_root_record_window(mpi_pack *m, size_t ws, size_t we, const skip_rec *all, size_t n_all)
{
    const mpi_pack_cfg *cfg = m->cfg;
    size_t k = 0;
    for (size_t pos = ws; pos < we; pos++) {
        if (k < n_all && (size_t)all[k].pos == pos) {
            if (skip_list_add(&m->res->skipped, cfg->entries[cfg->order[pos]].name, all[k].reason) != 0)
                return mpi_fail(m, "%s%s", "out of memory", "");
            k++;
        } else {
            m->res->kept[m->res->converted++] = cfg->order[pos];
        }
    }
    return 0;
}

/* Rank 0 writes chunk INDEX (raw bytes BUF): pwrite when unfiltered, else filtered through HDF5. */
static int write_chunk0(mpi_pack *m, uint64_t index, const uint8_t *buf)
{
    char why[512];
    if (m->cfg->base >= 0) {
        if (h5out_pwrite_chunk(m->cfg->out, index, buf, m->chunk_bytes, why, sizeof why) != 0)
            return mpi_fail(m, "%s%s", why, "");
        m->my_chunks++, m->my_bytes += m->chunk_bytes;
        return 0;
    }
    size_t n = chunk_filter_apply(m->cfg->gzip_level, m->cfg->checksum, &m->comp, buf, m->chunk_bytes, m->filter_out);
    if (n == 0)
        return mpi_fail(m, "%s%s", "cannot compress a chunk: compressor unavailable (out of memory?)", "");
    if (h5out_write_chunk(m->cfg->out, index, m->filter_out, n, why, sizeof why) != 0)
        return mpi_fail(m, "%s%s", why, "");
    m->my_chunks++, m->my_bytes += n;
    return 0;
}

static pending_chunk *pending_for(mpi_pack *m, uint64_t index)
{
    for (size_t i = 0; i < m->n_pending; i++)
        if (m->pending[i].index == index)
            return &m->pending[i];
    pending_chunk *grown = realloc(m->pending, (m->n_pending + 1) * sizeof *grown);
    uint8_t *buf = calloc(1, (size_t)m->chunk_bytes); /* zeros: the last chunk's padding */
    if (!grown || !buf) {
        free(buf);
        if (grown)
            m->pending = grown;
        return NULL;
    }
    m->pending = grown;
    m->pending[m->n_pending] = (pending_chunk){.index = index, .filled = 0, .buf = buf};
    return &m->pending[m->n_pending++];
}

static void drop_pending(mpi_pack *m, pending_chunk *pc)
{
    free(pc->buf);
    *pc = m->pending[--m->n_pending];
}

/* Rank 0 puts row ROW into its chunk and writes the chunk once it holds K rows. */
static int take_row(mpi_pack *m, uint64_t row, const uint8_t *pixels)
{
    uint64_t k = m->cfg->chunk_images;
    pending_chunk *pc = pending_for(m, row / k);
    if (!pc)
        return mpi_fail(m, "%s%s", "out of memory", "");
    memcpy(pc->buf + (row % k) * m->image_bytes, pixels, (size_t)m->image_bytes);
    if (++pc->filled < k)
        return 0;
    int rc = write_chunk0(m, pc->index, pc->buf);
    drop_pending(m, pc);
    return rc;
}

/* Rank 0 applies every record of the gathered messages (ALL, LEN bytes). */
int mpi_root_take_records(mpi_pack *m, const uint8_t *all, size_t len)
{
    char why[512];
    for (size_t at = 0; at + 3 * sizeof(int64_t) <= len && !m->failed;) {
        int64_t head[3];
        memcpy(head, all + at, sizeof head);
        const uint8_t *bytes = all + at + sizeof head;
        at += sizeof head + (size_t)head[2];
        if (head[0] == REC_ROW) {
            take_row(m, (uint64_t)head[1], bytes);
        } else if (h5out_write_chunk(m->cfg->out, (uint64_t)head[1], bytes, (size_t)head[2], why, sizeof why) != 0) {
            mpi_fail(m, "%s%s", why, "");
        } else {
            m->my_chunks++, m->my_bytes += (uint64_t)head[2];
        }
    }
    return m->failed ? -1 : 0;
}

/* Rank 0 writes the last chunk (short: zero-padded). Any other chunk still pending would be a hole. */
int mpi_root_finish(mpi_pack *m)
{
    uint64_t k = m->cfg->chunk_images, last = m->rows_done ? (m->rows_done - 1) / k : 0;
    while (m->n_pending > 0 && !m->failed) {
        pending_chunk *pc = &m->pending[0];
        if (pc->index != last || pc->filled != m->rows_done - last * k) {
            char what[96];
            snprintf(what, sizeof what, "chunk %llu has %llu of its rows", (unsigned long long)pc->index,
                     (unsigned long long)pc->filled);
            return mpi_fail(m, "internal error: %s%s", what, "");
        }
        int rc = write_chunk0(m, pc->index, pc->buf);
        drop_pending(m, pc);
        if (rc != 0)
            return -1;
    }
    return m->failed ? -1 : 0;
}

#endif
