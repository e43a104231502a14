/* h5lock.c - the process-wide HDF5 lock (see h5glue.h for why it is exported from libh5pack.so). */
#include <pthread.h>

#include "h5glue.h"

static pthread_mutex_t g_h5_lock = PTHREAD_MUTEX_INITIALIZER;

/* Only these two touch g_h5_lock: when a program's copy interposes on them, the library's calls (which
 * go through the PLT, being exported) reach the program's mutex, and this one stays unused. */
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
