/* mpi_pack.c - the ranks' shared decode-and-write stage (see mpi_pack.h).
 *
 * Per window, three exchanges:
 *   1. every rank's status (kept, skipped, failed): all ranks, so each knows its first row;
 *   2. skipped positions and reasons -> rank 0 (the file's skip list and row order);
 *   3. boundary rows (and, for filtered files, every filtered chunk) -> rank 0, which writes them.
 * A rank's whole unfiltered chunks are written by its writer thread (chunk_writer.h) while it decodes
 * the next window into the other bank of images. Waits use non-blocking collectives polled with short sleeps: a rank waiting for the others does not
 * spin a core (Open MPI's blocking calls poll busily), so the CPU seconds stay those of the work. */
#include "mpi_pack.h"

#include <stdio.h> /* both branches: the one without MPI reports with snprintf */

#ifdef H5PACK_HAVE_MPI

#include <errno.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chunk_filter.h"
#include "chunk_writer.h"
#include "clock.h"
#include "mpi_pack_impl.h"

/* The largest FAILED of all ranks (a final agreement). */
static int64_t agree_failed(mpi_pack *m, int64_t failed)
{
    int64_t any = 0;
    MPI_Request rq;
    MPI_Iallreduce(&failed, &any, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD, &rq);
    mpi_wait_quietly(m, &rq);
    return any;
}

int mpi_fail(mpi_pack *m, const char *fmt, const char *a, const char *b)
{
    if (!m->failed)
        snprintf(m->err, m->err_len, fmt, a, b);
    m->failed = 1;
    return -1;
}

/* ---- decoding a share ------------------------------------------------------------------------- */

/* The current window's bank of decoded images. */
static decoded_image *bank_images(mpi_pack *m)
{
    return m->imgs + (size_t)m->bank * m->slots;
}

static void decode_share(mpi_pack *m, size_t first, size_t count)
{
    const mpi_pack_cfg *cfg = m->cfg;
    decoded_image *imgs = bank_images(m);
    double t0 = h5pack_clock_s();
#pragma omp parallel for schedule(dynamic, 1) num_threads(cfg->threads)
    for (size_t i = 0; i < count; i++)
        decode_entry(&cfg->job, cfg->entries[cfg->order[first + i]].relpath, &imgs[i]);
    m->me.decode_s += h5pack_clock_s() - t0;
}

/* Sorts the share's outcomes: kept slots in order, skip records, sums. Returns the status. */
static rank_status sort_share(mpi_pack *m, size_t first, size_t count, skip_rec *skips)
{
    rank_status st = {0, 0, m->failed};
    decoded_image *imgs = bank_images(m);
    for (size_t i = 0; i < count; i++) {
        decoded_image *img = &imgs[i];
        if (img->outcome == DECODE_OK) {
            m->kept_slot[st.kept++] = i;
            for (int c = 0; c < 3; c++)
                m->sum[c] += img->sum[c], m->sum[3 + c] += img->sum_sq[c];
        } else if (img->outcome == DECODE_SKIP) {
            skips[st.skipped].pos = (int64_t)(first + i);
            memcpy(skips[st.skipped].reason, img->reason, sizeof img->reason);
            st.skipped++;
        } else if (!st.failed) {
            const char *name = m->cfg->entries[m->cfg->order[first + i]].name;
            if (img->outcome == DECODE_SIZE_MISMATCH) /* the serial run's message */
                decode_size_mismatch_text(&m->cfg->job, name, img, m->err, m->err_len), m->failed = 1;
            else
                mpi_fail(m, "%s: %s", name, img->reason);
            st.failed = 1;
        }
    }
    m->me.decoded += count;
    m->me.skipped += (uint64_t)st.skipped;
    return st;
}

/* Exchange 2: every rank's skip records to rank 0, which records the window. */
static int gather_skips(mpi_pack *m, size_t ws, size_t we, const rank_status *all, const skip_rec *mine,
                        int64_t my_skipped)
{
    int P = m->w->size, *counts = NULL, *displs = NULL;
    skip_rec *every = NULL;
    size_t total = 0;
    if (m->w->rank == 0) {
        counts = malloc((size_t)P * sizeof *counts), displs = malloc((size_t)P * sizeof *displs);
        for (int q = 0; q < P; q++)
            total += (size_t)all[q].skipped;
        every = malloc((total ? total : 1) * sizeof *every);
        if (!counts || !displs || !every) { /* cannot receive: end the job rather than leave the others waiting */
            fprintf(stderr, "h5pack: rank 0: out of memory for %zu skip records\n", total);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (int q = 0, at = 0; q < P; q++)
            counts[q] = (int)(all[q].skipped * (int64_t)sizeof(skip_rec)), displs[q] = at, at += counts[q];
    }
    MPI_Request rq;
    MPI_Igatherv(mine, (int)(my_skipped * (int64_t)sizeof(skip_rec)), MPI_BYTE, every, counts, displs, MPI_BYTE, 0,
                 MPI_COMM_WORLD, &rq);
    mpi_wait_quietly(m, &rq);
    int rc = m->w->rank == 0 ? mpi_root_record_window(m, ws, we, every, total) : 0;
    free(counts), free(displs), free(every);
    return rc;
}

/* ---- writing --------------------------------------------------------------------------------- */

static int message_put(message *msg, const void *p, size_t n)
{
    if (msg->len + n > msg->cap) {
        size_t cap = msg->cap ? msg->cap : 4096;
        while (cap < msg->len + n)
            cap *= 2;
        uint8_t *grown = realloc(msg->data, cap);
        if (!grown)
            return -1;
        msg->data = grown, msg->cap = cap;
    }
    memcpy(msg->data + msg->len, p, n);
    msg->len += n;
    return 0;
}

static int put_record(message *msg, int64_t kind, int64_t where, const void *bytes, int64_t size)
{
    int64_t head[3] = {kind, where, size};
    return message_put(msg, head, sizeof head) || message_put(msg, bytes, (size_t)size) ? -1 : 0;
}

/* Kept image J of the current window. */
static const uint8_t *kept_image(mpi_pack *m, size_t j)
{
    return bank_images(m)[m->kept_slot[j]].pixels;
}

/* Filters the window's whole chunks with the rank's threads (each its own compressor and buffers) and
 * appends them to MSG in chunk order. */
static int filter_whole_chunks(mpi_pack *m, message *msg)
{
    const mpi_pack_cfg *cfg = m->cfg;
    size_t n = m->n_whole, bound = chunk_filter_bound((size_t)m->chunk_bytes);
    uint8_t **out = calloc(n ? n : 1, sizeof *out);
    size_t *size = calloc(n ? n : 1, sizeof *size);
    int ok = out && size;
    if (ok)
#pragma omp parallel num_threads(cfg->threads)
    {
        struct libdeflate_compressor *comp = NULL;
        uint8_t *raw = malloc((size_t)m->chunk_bytes);
#pragma omp for schedule(dynamic, 1)
        for (size_t c = 0; c < n; c++) {
            if (!raw || !(out[c] = malloc(bound)))
                continue;
            for (uint64_t i = 0; i < cfg->chunk_images; i++)
                memcpy(raw + i * m->image_bytes, m->whole_images[c * cfg->chunk_images + i], (size_t)m->image_bytes);
            size[c] = chunk_filter_apply(cfg->gzip_level, cfg->checksum, &comp, raw, (size_t)m->chunk_bytes, out[c]);
        }
        free(raw);
        if (comp)
            libdeflate_free_compressor(comp);
    }
    for (size_t c = 0; c < n && ok; c++)
        ok = size[c] > 0 && put_record(msg, REC_CHUNK, (int64_t)m->whole[c], out[c], (int64_t)size[c]) == 0;
    for (size_t c = 0; out && c < n; c++)
        free(out[c]);
    free(out), free(size);
    return ok ? 0 : mpi_fail(m, "%s%s", "cannot compress a chunk (out of memory?)", "");
}

/* This rank's rows [ROW0, ROW0 + KEPT): the chunks wholly within them are listed (m->whole), the rows of
 * chunks it shares with a neighbour go into MSG. */
static int place_rows(mpi_pack *m, uint64_t row0, uint64_t kept, message *msg)
{
    uint64_t k = m->cfg->chunk_images, row1 = row0 + kept;
    uint64_t full0 = (row0 + k - 1) / k, full1 = row1 / k;
    m->n_whole = 0;
    for (uint64_t r = row0; r < row1; r++) {
        uint64_t c = r / k;
        size_t j = (size_t)(r - row0);
        if (c >= full0 && c < full1) { /* a whole chunk of this rank's */
            if (r % k == 0)
                m->whole[m->n_whole++] = c;
            m->whole_images[(m->n_whole - 1) * k + r % k] = kept_image(m, j);
            continue;
        }
        if (put_record(msg, REC_ROW, (int64_t)r, kept_image(m, j), (int64_t)m->image_bytes) != 0)
            return mpi_fail(m, "%s%s", "out of memory", "");
        m->me.shared_rows++;
    }
    return m->cfg->base >= 0 ? 0 : filter_whole_chunks(m, msg);
}

/* Unfiltered: hands the window's whole chunks to the writer thread (written while the next window decodes). */
static void write_whole_chunks(mpi_pack *m)
{
    if (m->cfg->base < 0 || m->failed)
        return;
    if (chunk_writer_submit(m->writer, m->bank, m->whole, m->whole_images, m->n_whole) != 0)
        mpi_fail(m, "%s%s", "out of memory", "");
}

/* Waits until bank BANK's chunks are written (before its images are overwritten, and at the end). */
static void wait_bank(mpi_pack *m, int bank)
{
    char why[512];
    if (m->writer && chunk_writer_wait(m->writer, bank, &m->my_chunks, &m->my_bytes, why, sizeof why) != 0)
        mpi_fail(m, "%s%s", why, "");
}

/* Exchange 3: every rank's message to rank 0, which takes its records. */
static int gather_records(mpi_pack *m, const message *msg)
{
    int P = m->w->size, len = (int)msg->len, *lens = NULL, *displs = NULL;
    uint8_t *all = NULL;
    size_t total = 0;
    MPI_Request rq;
    if (msg->len > (size_t)INT_MAX) { /* MPI counts are int */
        fprintf(stderr, "h5pack: rank %d: %zu bytes for rank 0 in one window, more than MPI can send at once\n",
                m->w->rank, msg->len);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (m->w->rank == 0 && !(lens = malloc((size_t)P * sizeof *lens))) {
        fprintf(stderr, "h5pack: rank 0: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Igather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq);
    mpi_wait_quietly(m, &rq);
    if (m->w->rank == 0) {
        displs = malloc((size_t)P * sizeof *displs);
        for (int q = 0; q < P; q++)
            total += (size_t)lens[q];
        if (total > (size_t)INT_MAX) { /* displacements are int too */
            fprintf(stderr, "h5pack: rank 0: %zu bytes of rows and chunks in one window, more than MPI can gather "
                    "at once: use fewer ranks or smaller chunks (--chunk)\n", total);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        all = malloc(total ? total : 1);
        if (!displs || !all) { /* cannot receive: the job ends (MPI_Abort below keeps nobody waiting) */
            fprintf(stderr, "h5pack: rank 0: out of memory for %zu bytes of rows and chunks\n", total);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (int q = 0, at = 0; q < P; q++)
            displs[q] = at, at += lens[q];
    }
    MPI_Igatherv(msg->data, len, MPI_BYTE, all, lens, displs, MPI_BYTE, 0, MPI_COMM_WORLD, &rq);
    mpi_wait_quietly(m, &rq);
    int rc = m->w->rank == 0 ? mpi_root_take_records(m, all, total) : 0;
    free(lens), free(displs), free(all);
    return rc;
}

/* ---- one window ------------------------------------------------------------------------------ */

/* Where rank R's share of the window [WS, WE) starts. The shares are cut at whole chunks: rank 0 first
 * takes the D positions that complete the chunk the last window left open, then every rank a run of
 * whole chunks (the last one the rest). Until a skip shifts them, every rank's rows then start a chunk,
 * so only the window's two ends travel to rank 0, not two partial chunks per rank. */
static size_t share_start(const mpi_pack *m, size_t ws, size_t we, int r)
{
    uint64_t k = m->cfg->chunk_images, P = (uint64_t)m->w->size, d = (k - m->rows_done % k) % k;
    if (r == 0)
        return ws;
    if (r >= (int)P)
        return we;
    if (we - ws <= d)
        return we;
    uint64_t chunks = (we - ws - d) / k;
    size_t at = ws + (size_t)(d + chunks * (uint64_t)r / P * k);
    return at < we ? at : we;
}

/* Decodes, exchanges and writes positions [WS, WE). Returns PIPELINE_OK or the run's end. */
static pipeline_status run_window(mpi_pack *m, size_t ws, size_t we, skip_rec *skips, message *msg)
{
    int P = m->w->size, r = m->w->rank;
    size_t first = share_start(m, ws, we, r), count = share_start(m, ws, we, r + 1) - first;
    wait_bank(m, m->bank); /* its chunks of two windows ago are written */
    decode_share(m, first, count);
    rank_status mine = sort_share(m, first, count, skips), *all = malloc((size_t)P * sizeof *all);
    if (!all) {
        fprintf(stderr, "h5pack: rank %d: out of memory\n", r);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Request rq;
    MPI_Iallgather(&mine, 3, MPI_INT64_T, all, 3, MPI_INT64_T, MPI_COMM_WORLD, &rq);
    mpi_wait_quietly(m, &rq);
    uint64_t row0 = m->rows_done, window_rows = 0, window_skips = 0;
    int any_failed = 0;
    for (int q = 0; q < P; q++) {
        row0 += q < r ? (uint64_t)all[q].kept : 0;
        window_rows += (uint64_t)all[q].kept, window_skips += (uint64_t)all[q].skipped;
        any_failed |= all[q].failed != 0;
    }
    pipeline_status st = PIPELINE_OK;
    if (any_failed)
        st = PIPELINE_ERROR;
    else if (gather_skips(m, ws, we, all, skips, mine.skipped), m->cfg->strict && window_skips > 0)
        st = PIPELINE_STRICT_STOP; /* a failure of rank 0's in gather_skips travels in the next status */
    free(all);
    if (st != PIPELINE_OK)
        return st;
    msg->len = 0;
    place_rows(m, row0, (uint64_t)mine.kept, msg); /* a failure travels in the next status */
    gather_records(m, msg);
    write_whole_chunks(m);
    m->rows_done += window_rows;
    return PIPELINE_OK;
}

/* ---- set-up and the end ------------------------------------------------------------------------ */

static int setup(mpi_pack *m)
{
    const mpi_pack_cfg *cfg = m->cfg;
    uint64_t P = (uint64_t)m->w->size, ib = m->image_bytes;
    /* 64 images per thread: each window ends in a wait for the slowest rank, whose lead shrinks
     * relative to the window as it grows (2 ranks x 1 thread on 2 cores: 32 per thread waited 10-18%
     * of the decode time) */
    uint64_t k = cfg->chunk_images, per = 64 * (uint64_t)cfg->threads > 8 * k ? 64 * (uint64_t)cfg->threads : 8 * k;
    uint64_t cap = MPI_WINDOW_BYTES / ib;
    if (cfg->base < 0 && MPI_FILTERED_WINDOW_BYTES / (P * ib) < cap)
        cap = MPI_FILTERED_WINDOW_BYTES / (P * ib);
    m->per_rank = per < cap ? per : cap ? cap : 1;
    m->slots = m->per_rank + 2 * k; /* shares are cut at chunks (share_start) */
    m->imgs = calloc(2 * (size_t)m->slots, sizeof *m->imgs);
    m->kept_slot = malloc((size_t)m->slots * sizeof *m->kept_slot);
    m->whole = malloc(((size_t)(m->slots / k) + 1) * sizeof *m->whole);
    m->whole_images = malloc((size_t)m->slots * sizeof *m->whole_images);
    m->filter_out = cfg->base < 0 ? malloc(chunk_filter_bound((size_t)m->chunk_bytes)) : NULL; /* rank 0's */
    if (!m->imgs || !m->kept_slot || !m->whole || !m->whole_images || (cfg->base < 0 && !m->filter_out))
        return mpi_fail(m, "%s%s", "out of memory", "");
    for (uint64_t i = 0; i < 2 * m->slots; i++)
        if (!(m->imgs[i].pixels = malloc((size_t)ib)))
            return mpi_fail(m, "%s%s", "out of memory for the decoded images", "");
    if (cfg->base >= 0 && (m->fd = open(cfg->path, O_WRONLY | O_CLOEXEC)) < 0)
        return mpi_fail(m, "%s: cannot open for writing: %s", cfg->path, strerror(errno));
    if (cfg->base >= 0 && !(m->writer = chunk_writer_start(m->fd, cfg->path, cfg->base, k, ib)))
        return mpi_fail(m, "%s%s", "cannot start the chunk writer thread", "");
    const char *inject = getenv("H5PACK_MPI_TEST_FAIL_RANK"); /* tests/convert/mpi_test.sh: a rank that fails */
    if (inject && atoi(inject) == m->w->rank && m->w->rank > 0)
        return mpi_fail(m, "%s: %s", cfg->path, "injected write failure (H5PACK_MPI_TEST_FAIL_RANK)");
    return 0;
}

static void teardown(mpi_pack *m)
{
    chunk_writer_stop(m->writer); /* first: it may still be writing from the images */
    for (uint64_t i = 0; m->imgs && i < 2 * m->slots; i++)
        free(m->imgs[i].pixels);
    free(m->imgs), free(m->kept_slot), free(m->whole), free(m->whole_images), free(m->filter_out);
    for (size_t i = 0; i < m->n_pending; i++)
        free(m->pending[i].buf);
    free(m->pending);
    if (m->comp)
        libdeflate_free_compressor(m->comp);
    if (m->fd >= 0)
        close(m->fd);
}

/* The end: the last chunk, every rank's data on disk (fsync), the sums and counts to rank 0. */
static pipeline_status finish(mpi_pack *m, mpi_rank_report *ranks)
{
    wait_bank(m, 0), wait_bank(m, 1);
    if (agree_failed(m, m->failed)) /* a rank's last window failed: rank 0's open chunks are not news */
        return PIPELINE_ERROR;
    if (m->w->rank == 0)
        mpi_root_finish(m);
    if (m->fd >= 0 && fsync(m->fd) != 0)
        mpi_fail(m, "%s: cannot flush the images to disk: %s", m->cfg->path, strerror(errno));
    int64_t failed = agree_failed(m, m->failed);
    uint64_t counts[8] = {m->sum[0], m->sum[1], m->sum[2], m->sum[3], m->sum[4], m->sum[5], m->my_chunks, m->my_bytes};
    uint64_t totals[8] = {0};
    MPI_Request rq;
    MPI_Ireduce(counts, totals, 8, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD, &rq);
    mpi_wait_quietly(m, &rq);
    MPI_Igather(&m->me, (int)sizeof m->me, MPI_BYTE, ranks, (int)sizeof m->me, MPI_BYTE, 0, MPI_COMM_WORLD, &rq);
    mpi_wait_quietly(m, &rq);
    if (failed)
        return PIPELINE_ERROR;
    if (m->w->rank == 0) {
        pipeline_result *res = m->res;
        for (int c = 0; c < 3; c++)
            res->sum[c] = totals[c], res->sum_sq[c] = totals[3 + c];
        res->chunks_written = totals[6], res->bytes_written = totals[7];
        res->pixels = res->converted * m->cfg->job.height * m->cfg->job.width;
        res->pwrite_by_workers = m->cfg->base >= 0;
    }
    return PIPELINE_OK;
}

pipeline_status mpi_pack_run(const mpi_pack_cfg *cfg, const mpi_world *w, pipeline_result *res,
                             mpi_rank_report *ranks, char *err, size_t err_len)
{
    mpi_pack m = {.cfg = cfg, .w = w, .res = res, .fd = -1, .err = err, .err_len = err_len};
    err[0] = '\0';
    memset(res, 0, sizeof *res);
    m.image_bytes = (uint64_t)cfg->job.height * cfg->job.width * cfg->job.channels;
    m.chunk_bytes = m.image_bytes * cfg->chunk_images;
    if (w->rank == 0 && !(res->kept = malloc((cfg->n ? cfg->n : 1) * sizeof *res->kept)))
        mpi_fail(&m, "%s%s", "out of memory", "");
    else
        setup(&m);
    skip_rec *skips = malloc((size_t)(m.slots ? m.slots : 1) * sizeof *skips);
    message msg = {NULL, 0, 0};
    if (!skips)
        mpi_fail(&m, "%s%s", "out of memory", "");
    if (w->rank == 0 && !ranks)
        mpi_fail(&m, "%s%s", "out of memory", "");
    pipeline_status st = agree_failed(&m, m.failed) ? PIPELINE_ERROR : PIPELINE_OK;
    /* every rank must cut the same windows: the smallest share any rank can hold (threads and so the
     * share size differ between machines of different size); the slots stay those of the larger one */
    int64_t negated = -(int64_t)m.per_rank;
    mpi_max(w, &negated, 1);
    m.per_rank = (uint64_t)-negated;
    uint64_t window = m.per_rank * (uint64_t)w->size;
    for (size_t ws = 0; st == PIPELINE_OK && ws < cfg->n; ws += (size_t)window) {
        size_t we = cfg->n - ws < window ? cfg->n : ws + (size_t)window;
        st = run_window(&m, ws, we, skips, &msg);
        if (st == PIPELINE_OK && w->rank == 0 && cfg->progress)
            cfg->progress(cfg->progress_ctx, we, cfg->n, res->converted);
        m.bank ^= 1;
    }
    if (st == PIPELINE_OK)
        st = finish(&m, ranks);
    if (st == PIPELINE_ERROR && !m.failed)
        err[0] = '\0'; /* another rank failed and says why */
    free(skips), free(msg.data);
    teardown(&m);
    return st;
}

#else /* no MPI: a world of one never calls this */

pipeline_status mpi_pack_run(const mpi_pack_cfg *cfg, const mpi_world *w, pipeline_result *res,
                             mpi_rank_report *ranks, char *err, size_t err_len)
{
    (void)cfg, (void)w, (void)res, (void)ranks;
    snprintf(err, err_len, "this h5pack was built without MPI");
    return PIPELINE_ERROR;
}

#endif
