/* h5lock.c - the process-wide HDF5 lock (h5glue.h: one copy per process, exported from libh5pack.so). */
#include <pthread.h>

#include "h5glue.h"

static pthread_mutex_t g_h5_lock = PTHREAD_MUTEX_INITIALIZER;

/* Only these two touch g_h5_lock. */
void h5pack_h5_lock_global(void)
{
    pthread_mutex_lock(&g_h5_lock);
}

void h5pack_h5_unlock_global(void)
{
    pthread_mutex_unlock(&g_h5_lock);
}

void h5pack_h5_enter(h5pack_h5_quiet *q)
{
    h5pack_h5_lock_global();
    h5pack_h5_quiet_begin(q);
}

void h5pack_h5_leave(const h5pack_h5_quiet *q)
{
    h5pack_h5_quiet_end(q);
    h5pack_h5_unlock_global();
}
