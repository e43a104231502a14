/* test_one_lock.c - one HDF5 lock per process (common/h5glue.h): this program links libh5pack.so
 * and its own copy of the h5pack_common objects, as h5pack-stats and the samples do. While it holds the
 * lock (libh5pack's exported functions: h5pack_common has no copy of them), h5pack_open (inside the
 * shared library, which takes the lock around its HDF5 calls) must not get through; once released, it
 * must. With two locks the open would finish at once (as it did with clang when the program carried its
 * own copy and the library inlined its calls). */
#include <errno.h>
#include <hdf5.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "h5fixture.h"
#include "h5glue.h"
#include "h5pack.h"

typedef struct opener {
    const char *path;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done, rc;
} opener;

/* A small h5pack-like file in the latest format (no open probe, so every HDF5 call is under the lock). */
static void write_file(const char *path)
{
    static const h5fix_file spec = {.n = 4, .c = 3, .h = 8, .w = 8, .k = 2};
    CHECK_OK(h5fix_write(path, &spec));
}

static void *open_file(void *arg)
{
    opener *o = arg;
    h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
    cfg.labels_dataset = NULL;
    h5pack_reader *r = NULL;
    int rc = h5pack_open(o->path, &cfg, &r);
    h5pack_close(r);
    pthread_mutex_lock(&o->mu);
    o->done = 1;
    o->rc = rc;
    pthread_cond_signal(&o->cv);
    pthread_mutex_unlock(&o->mu);
    return NULL;
}

/* Whether the opener finished within MS milliseconds. */
static int finished_within(opener *o, int ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L)
        until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_mutex_lock(&o->mu);
    int rc = 0;
    while (!o->done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&o->cv, &o->mu, &until);
    int done = o->done;
    pthread_mutex_unlock(&o->mu);
    return done;
}

int main(void)
{
    char dir[] = "/tmp/h5pack-one-lock-XXXXXX", path[1024];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/small.h5", dir);
    write_file(path);

    opener o = {.path = path, .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    pthread_t t;
    h5pack_h5_lock_global(); /* the library's lock, as h5pack-stats would take it */
    CHECK(pthread_create(&t, NULL, open_file, &o) == 0);
    int early = finished_within(&o, 500);
    h5pack_h5_unlock_global();
    CHECK_MSG(!early, "h5pack_open finished while this program held the HDF5 lock (rc %d): the library and the "
                      "program have two locks", o.rc);
    CHECK_MSG(finished_within(&o, 60000), "h5pack_open did not finish after the lock was released");
    pthread_join(t, NULL);
    CHECK_MSG(o.rc == H5PACK_OK, "h5pack_open failed: %d %s", o.rc, h5pack_last_error(NULL));
    unlink(path);
    rmdir(dir);
    printf("one lock: h5pack_open waited for the program's hold on the HDF5 lock\n");
    return 0;
}
