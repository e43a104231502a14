/* mpi_comm.c - waiting without spinning, and the small collectives of the MPI conversion (mpi_pack.h). */
#include "mpi_pack.h"

#ifdef H5PACK_HAVE_MPI

#include <time.h>

#include "clock.h"
#include "mpi_pack_impl.h"

void mpi_wait_quietly(mpi_pack *m, MPI_Request *rq)
{
    double t0 = h5pack_clock_s();
    int done = 0;
    MPI_Test(rq, &done, MPI_STATUS_IGNORE);
    while (!done) {
        struct timespec nap = {0, 200 * 1000};
        nanosleep(&nap, NULL);
        MPI_Test(rq, &done, MPI_STATUS_IGNORE);
    }
    if (m)
        m->me.wait_s += h5pack_clock_s() - t0;
}

int mpi_share(const mpi_world *w, void *buf, size_t len)
{
    if (w->size <= 1)
        return 0;
    MPI_Request rq;
    MPI_Ibcast(buf, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD, &rq);
    mpi_wait_quietly(NULL, &rq);
    return 0;
}

int mpi_share_status(const mpi_world *w, int status)
{
    mpi_share(w, &status, sizeof status);
    return status;
}

void mpi_max(const mpi_world *w, int64_t *v, int n)
{
    if (w->size <= 1)
        return;
    MPI_Request rq;
    MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD, &rq);
    mpi_wait_quietly(NULL, &rq);
}

#else /* no MPI: a world of one */

int mpi_share(const mpi_world *w, void *buf, size_t len)
{
    (void)w, (void)buf, (void)len;
    return 0;
}

int mpi_share_status(const mpi_world *w, int status)
{
    (void)w;
    return status;
}

void mpi_max(const mpi_world *w, int64_t *v, int n)
{
    (void)w, (void)v, (void)n;
}

#endif
