/* kept_buffers.c - see kept_buffers.h. */
#include "kept_buffers.h"

#include <pthread.h>
#include <stdlib.h>

#include "env.h"
#include "h5pack.h"

#define KEPT_MAX 16 /* buffers: a reader has at most three large ones (inputs, outputs, pool) */

typedef struct kept {
    void *p;
    size_t bytes;
} kept;

static pthread_mutex_t kept_mu = PTHREAD_MUTEX_INITIALIZER;
static kept kept_list[KEPT_MAX];
static int kept_n;

/* Frees every kept buffer; the caller holds kept_mu. */
static void free_all_locked(void)
{
    for (int i = 0; i < kept_n; i++)
        free(kept_list[i].p);
    kept_n = 0;
}

void *h5pack_kept_take(size_t bytes)
{
    void *p = NULL;
    if (bytes < KEPT_MIN_BYTES)
        return NULL;
    pthread_mutex_lock(&kept_mu);
    for (int i = 0; i < kept_n && !p; i++)
        if (kept_list[i].bytes == bytes) {
            p = kept_list[i].p;
            kept_list[i] = kept_list[--kept_n];
        }
    if (!p)
        free_all_locked();
    pthread_mutex_unlock(&kept_mu);
    return p;
}

void h5pack_kept_give(void *p, size_t bytes)
{
    if (!p)
        return;
    int keep = bytes >= KEPT_MIN_BYTES && !h5pack_env_flag("H5PACK_NO_KEEP");
    pthread_mutex_lock(&kept_mu);
    if (keep && kept_n < KEPT_MAX) {
        kept_list[kept_n++] = (kept){p, bytes};
        p = NULL;
    }
    pthread_mutex_unlock(&kept_mu);
    free(p);
}

void h5pack_trim(void)
{
    pthread_mutex_lock(&kept_mu);
    free_all_locked();
    pthread_mutex_unlock(&kept_mu);
}

/* fork() while another thread holds the lock would leave it locked in the child for good */
static void lock_for_fork(void)
{
    pthread_mutex_lock(&kept_mu);
}

static void unlock_after_fork(void)
{
    pthread_mutex_unlock(&kept_mu);
}

__attribute__((constructor)) static void guard_fork(void)
{
    pthread_atfork(lock_for_fork, unlock_after_fork, unlock_after_fork);
}

/* At exit or unload: nothing kept is left behind for leak checkers to report. */
__attribute__((destructor)) static void free_kept_at_unload(void)
{
    h5pack_trim();
}
