/* mpi_world.h - whether this h5pack runs as one rank of several under mpirun / srun, and the MPI
 * calls the converter needs (docs/scale-out.md). Built without MPI (no MPI found at configure time),
 * every process is a world of one; started by a launcher anyway, mpi_world_start says so, since each
 * process would otherwise convert the whole folder into the same file.
 *
 * MPI is initialised only when a launcher's environment is present (Open MPI, MPICH / Hydra, PMIx,
 * Slurm's PMI): an MPI-enabled h5pack started by hand is the serial converter and never touches MPI. */
#ifndef H5PACK_MPI_WORLD_H
#define H5PACK_MPI_WORLD_H

#include <stddef.h>

typedef struct mpi_world {
    int rank, size;
    int active; /* MPI_Init was called (mpi_world_end finalises) */
} mpi_world;

/* Fills W (rank 0 of 1 when not launched as several ranks). Returns 0, or -1 with ERR set (a launcher
 * started several ranks of an h5pack built without MPI, or MPI_Init failed). */
int mpi_world_start(mpi_world *w, char *err, size_t err_len);

/* The number of ranks the launcher's environment announces (0 when none). */
int mpi_launcher_size(void);

/* Finalises MPI when it was started. */
void mpi_world_end(mpi_world *w);

/* 1 when this build can convert under MPI. */
int mpi_world_available(void);

#endif
