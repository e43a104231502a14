/* chunk_writer.c - whole chunks written by a thread of their own (see chunk_writer.h). */
#include "chunk_writer.h"
#include "pwrite_full.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

typedef struct bank_job {
    uint64_t *index;
    const uint8_t **images;
    size_t n;
    int pending; /* submitted, not yet written */
    uint64_t chunks, bytes;
} bank_job;

struct chunk_writer {
    int fd;
    const char *path;
    int64_t base;
    uint64_t k, image_bytes;
    bank_job banks[2];
    int order[2], queued; /* banks in submission order */
    int stop;
    char err[512];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
};

/* One chunk: its K images with pwritev (64 at a time), finishing short writes image by image. */
static int write_chunk(chunk_writer *w, uint64_t index, const uint8_t *const *images)
{
    uint64_t k = w->k, ib = w->image_bytes;
    off_t at = (off_t)(w->base + (int64_t)(index * k * ib));
    struct iovec iov[64];
    for (uint64_t done = 0; done < k;) {
        int n = 0;
        for (; n < 64 && done + (uint64_t)n < k; n++)
            iov[n].iov_base = (void *)images[done + (uint64_t)n], iov[n].iov_len = ib;
        ssize_t r = pwritev(w->fd, iov, n, at + (off_t)(done * ib));
        if (r != (ssize_t)((uint64_t)n * ib))
            for (int i = 0; i < n; i++)
                if (pwrite_full(w->fd, images[done + (uint64_t)i], ib, at + (off_t)((done + (uint64_t)i) * ib)) != 0)
                    return -1;
        done += (uint64_t)n;
    }
    return 0;
}

static void run_bank(chunk_writer *w, bank_job *b)
{
    for (size_t c = 0; c < b->n; c++) {
        if (write_chunk(w, b->index[c], b->images + c * w->k) != 0) {
            int e = errno;
            pthread_mutex_lock(&w->mu);
            if (!w->err[0])
                snprintf(w->err, sizeof w->err, "%s: cannot write chunk %llu of the images: %s", w->path,
                         (unsigned long long)b->index[c], strerror(e));
            pthread_mutex_unlock(&w->mu);
            return;
        }
        b->chunks++, b->bytes += w->k * w->image_bytes;
    }
}

static void *writer_main(void *arg)
{
    chunk_writer *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->stop && w->queued == 0)
            pthread_cond_wait(&w->cv, &w->mu);
        if (w->queued == 0)
            break; /* stop, and nothing left */
        bank_job *b = &w->banks[w->order[0]];
        pthread_mutex_unlock(&w->mu);
        run_bank(w, b);
        pthread_mutex_lock(&w->mu);
        b->pending = 0;
        w->order[0] = w->order[1], w->queued--;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

chunk_writer *chunk_writer_start(int fd, const char *path, int64_t base, uint64_t k, uint64_t image_bytes)
{
    chunk_writer *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    *w = (chunk_writer){.fd = fd, .path = path, .base = base, .k = k, .image_bytes = image_bytes};
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        free(w);
        return NULL;
    }
    return w;
}

int chunk_writer_submit(chunk_writer *w, int bank, const uint64_t *index, const uint8_t *const *images, size_t n)
{
    bank_job *b = &w->banks[bank];
    uint64_t *ix = realloc(b->index, (n ? n : 1) * sizeof *ix);
    if (ix)
        b->index = ix;
    const uint8_t **im = realloc(b->images, (n ? n : 1) * w->k * sizeof *im);
    if (im)
        b->images = im;
    if (!ix || !im)
        return -1;
    memcpy(b->index, index, n * sizeof *index);
    memcpy(b->images, images, n * w->k * sizeof *images);
    pthread_mutex_lock(&w->mu);
    b->n = n, b->pending = 1;
    w->order[w->queued++] = bank;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return 0;
}

int chunk_writer_wait(chunk_writer *w, int bank, uint64_t *chunks, uint64_t *bytes, char *err, size_t err_len)
{
    bank_job *b = &w->banks[bank];
    pthread_mutex_lock(&w->mu);
    while (b->pending)
        pthread_cond_wait(&w->cv, &w->mu);
    *chunks += b->chunks, *bytes += b->bytes;
    b->chunks = b->bytes = 0;
    int rc = w->err[0] ? -1 : 0;
    if (rc)
        snprintf(err, err_len, "%s", w->err);
    pthread_mutex_unlock(&w->mu);
    return rc;
}

void chunk_writer_stop(chunk_writer *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    for (int i = 0; i < 2; i++)
        free(w->banks[i].index), free(w->banks[i].images);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
