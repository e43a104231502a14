/* block_gather.c - see block_gather.h. */
#include "block_gather.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "pwrite_full.h"

#define STEP BLOCK_GATHER_STEP
#define SPARES 4 /* a block's buffer is reused, not freed and allocated again for every block */

typedef struct piece {
    uint64_t lo, hi; /* file offsets */
} piece;

/* A block some of whose bytes are in: BUF holds the block (offset block * STEP at buf[0]). */
typedef struct pending {
    uint64_t block, filled;
    uint8_t *buf;
    piece *pieces;
    size_t n_pieces, cap;
} pending;

struct block_gather {
    int fd;
    uint64_t lo, hi;
    pthread_mutex_t mu;
    pending *pend;
    size_t n, cap;
    uint8_t *spare[SPARES];      /* block buffers of completed blocks, for the next ones */
    int n_spare;
    _Atomic int failed;          /* a write failed: its range below (the first one kept) */
    uint64_t failed_lo, failed_hi;
};

block_gather *block_gather_new(int fd, uint64_t lo, uint64_t hi)
{
    block_gather *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->fd = fd, g->lo = lo, g->hi = hi;
    pthread_mutex_init(&g->mu, NULL);
    return g;
}

/* pwrite_full of N bytes of P at AT, its range noted when it fails. */
static int write_at(block_gather *g, const uint8_t *p, size_t n, uint64_t at)
{
    if (pwrite_full(g->fd, p, n, (off_t)at) == 0)
        return 0;
    int e = errno, none = 0;
    if (atomic_compare_exchange_strong(&g->failed, &none, -1)) /* the first failure's range, once */
        g->failed_lo = at, g->failed_hi = at + n, atomic_store(&g->failed, 1);
    errno = e;
    return -1;
}

int block_gather_failed(block_gather *g, uint64_t *lo, uint64_t *hi)
{
    if (atomic_load(&g->failed) != 1)
        return -1;
    *lo = g->failed_lo, *hi = g->failed_hi;
    return 0;
}

/* Block B's bytes inside the range: [*LO, *HI). */
static void block_span(const block_gather *g, uint64_t b, uint64_t *lo, uint64_t *hi)
{
    *lo = b * STEP > g->lo ? b * STEP : g->lo;
    *hi = (b + 1) * STEP < g->hi ? (b + 1) * STEP : g->hi;
}

static void pending_free(pending *pb)
{
    free(pb->buf), free(pb->pieces);
}

/* A completed block's buffer back to the spares (or freed when they are full). */
static void recycle(block_gather *g, uint8_t *buf)
{
    pthread_mutex_lock(&g->mu);
    if (g->n_spare < SPARES)
        g->spare[g->n_spare++] = buf, buf = NULL;
    pthread_mutex_unlock(&g->mu);
    free(buf);
}

/* Block B's waiting entry, added when there is none; NULL without memory. Caller holds mu. */
static pending *pending_of(block_gather *g, uint64_t b)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->pend[i].block == b)
            return &g->pend[i];
    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 8;
        pending *p = realloc(g->pend, cap * sizeof *p);
        if (!p)
            return NULL;
        g->pend = p, g->cap = cap;
    }
    pending *pb = &g->pend[g->n];
    *pb = (pending){.block = b, .buf = g->n_spare ? g->spare[--g->n_spare] : malloc(STEP)};
    if (!pb->buf)
        return NULL;
    g->n++;
    return pb;
}

/* Records [LO, HI) in PB's piece list (joined to the last piece when it continues it). */
static int add_piece(pending *pb, uint64_t lo, uint64_t hi)
{
    if (pb->n_pieces && pb->pieces[pb->n_pieces - 1].hi == lo) {
        pb->pieces[pb->n_pieces - 1].hi = hi;
        return 0;
    }
    if (pb->n_pieces == pb->cap) {
        size_t cap = pb->cap ? 2 * pb->cap : 4;
        piece *p = realloc(pb->pieces, cap * sizeof *p);
        if (!p)
            return -1;
        pb->pieces = p, pb->cap = cap;
    }
    pb->pieces[pb->n_pieces++] = (piece){lo, hi};
    return 0;
}

/* N bytes of P at AT, all inside one block: into its buffer; the block written once complete. */
static int deposit(block_gather *g, const uint8_t *p, size_t n, uint64_t at, size_t *written)
{
    uint64_t b = at / STEP, lo, hi;
    block_span(g, b, &lo, &hi);
    pthread_mutex_lock(&g->mu);
    pending *pb = pending_of(g, b);
    if (!pb || add_piece(pb, at, at + n) != 0) {
        pthread_mutex_unlock(&g->mu);
        errno = ENOMEM;
        return -1;
    }
    memcpy(pb->buf + (at - b * STEP), p, n);
    pb->filled += n;
    if (pb->filled < hi - lo) {
        pthread_mutex_unlock(&g->mu);
        return 0;
    }
    pending done = *pb;
    *pb = g->pend[--g->n]; /* out of the list before the write: nobody else touches it now */
    pthread_mutex_unlock(&g->mu);
    int rc = write_at(g, done.buf + (lo - b * STEP), (size_t)(hi - lo), lo), e = errno;
    if (rc == 0)
        *written += (size_t)(hi - lo);
    free(done.pieces);
    recycle(g, done.buf);
    errno = e; /* free may set it (glibc < 2.33) */
    return rc;
}

int block_gather_write(block_gather *g, const void *p, size_t n, uint64_t at, size_t *written)
{
    const uint8_t *src = p;
    uint64_t end = at + n, head_end = (at + STEP - 1) / STEP * STEP, tail_lo = end / STEP * STEP;
    *written = 0;
    if (head_end > end)
        head_end = end;
    if (tail_lo < head_end)
        tail_lo = head_end;
    if (head_end > at && deposit(g, src, (size_t)(head_end - at), at, written) != 0)
        return -1;
    if (tail_lo > head_end) { /* whole blocks: written at once */
        if (write_at(g, src + (head_end - at), (size_t)(tail_lo - head_end), head_end) != 0)
            return -1;
        *written += (size_t)(tail_lo - head_end);
    }
    if (end > tail_lo && deposit(g, src + (tail_lo - at), (size_t)(end - tail_lo), tail_lo, written) != 0)
        return -1;
    return 0;
}

int block_gather_flush(block_gather *g, size_t *written)
{
    int rc = 0, e = 0;
    *written = 0;
    pthread_mutex_lock(&g->mu);
    for (size_t i = 0; i < g->n; i++) {
        pending *pb = &g->pend[i];
        for (size_t k = 0; k < pb->n_pieces && rc == 0; k++) {
            const piece *pc = &pb->pieces[k];
            rc = write_at(g, pb->buf + (pc->lo - pb->block * STEP), (size_t)(pc->hi - pc->lo), pc->lo);
            if (rc == 0)
                *written += (size_t)(pc->hi - pc->lo);
            else
                e = errno;
        }
        pending_free(pb);
    }
    g->n = 0;
    pthread_mutex_unlock(&g->mu);
    errno = e; /* the failed write's, not free's */
    return rc;
}

void block_gather_free(block_gather *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n; i++)
        pending_free(&g->pend[i]);
    for (int i = 0; i < g->n_spare; i++)
        free(g->spare[i]);
    free(g->pend);
    pthread_mutex_destroy(&g->mu);
    free(g);
}
