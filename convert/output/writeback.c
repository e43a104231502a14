/* writeback.c - a thread that flushes the output file to disk while it grows (see writeback.h). */
#include "writeback.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

struct writeback {
    int fd;
    size_t step, unflushed; /* bytes noted since the last request */
    uint64_t requested, served;
    int stop;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
};

/* Requests that arrive during a flush are served by one more flush: the flushes pace themselves to the
 * disk, and the writer never waits for them. */
static void *writeback_main(void *arg)
{
    writeback *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->stop && w->served == w->requested)
            pthread_cond_wait(&w->cv, &w->mu);
        if (w->stop)
            break;
        w->served = w->requested;
        pthread_mutex_unlock(&w->mu);
        fdatasync(w->fd); /* an error shows again in the closing fsync, which reports it */
        pthread_mutex_lock(&w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

writeback *writeback_start(int fd, size_t step)
{
    writeback *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->fd = fd;
    w->step = step;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if (pthread_create(&w->thread, NULL, writeback_main, w) != 0) {
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        free(w);
        return NULL;
    }
    return w;
}

void writeback_note(writeback *w, size_t bytes)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu); /* writers may be several threads (h5out_pwrite_chunk) */
    w->unflushed += bytes;
    if (w->unflushed >= w->step) {
        w->unflushed = 0;
        w->requested++;
        pthread_cond_signal(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
}

void writeback_stop(writeback *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
