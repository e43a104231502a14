/* mpi_world.c - MPI start and end for the converter (see mpi_world.h). */
#include "mpi_world.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef H5PACK_HAVE_MPI
#include <mpi.h>
#endif

/* The world size a launcher's environment announces: Open MPI, PMIx, MPICH / Hydra (PMI), Slurm. */
int mpi_launcher_size(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        if (v && atoi(v) >= 1)
            return atoi(v);
    }
    return getenv("PMIX_RANK") ? 1 : 0; /* PMIx without a size variable: a launched rank all the same */
}

int mpi_world_available(void)
{
#ifdef H5PACK_HAVE_MPI
    return 1;
#else
    return 0;
#endif
}

/* srun started several tasks without an MPI plugin (--mpi=none): each would convert the whole folder. */
static int slurm_tasks_without_pmi(void)
{
    const char *tasks = getenv("SLURM_STEP_NUM_TASKS"); /* set for the tasks of an srun step only */
    return tasks && atoi(tasks) > 1;
}

int mpi_world_start(mpi_world *w, char *err, size_t err_len)
{
    w->rank = 0, w->size = 1, w->active = 0;
    int launched = mpi_launcher_size();
    if (launched == 0 && slurm_tasks_without_pmi()) {
        snprintf(err, err_len, "srun started %s tasks of h5pack without MPI (no PMI in the environment): each would "
                 "convert the whole folder. Use srun --mpi=pmix (or pmi2), or one task (docs/scale-out.md)",
                 getenv("SLURM_STEP_NUM_TASKS"));
        return -1;
    }
    if (launched == 0)
        return 0;
#ifdef H5PACK_HAVE_MPI
    int provided = 0;
    /* threads of a rank never call MPI: only the calling thread does */
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        snprintf(err, err_len, "MPI_Init failed (started by a launcher, %d ranks announced)", launched);
        return -1;
    }
    w->active = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &w->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &w->size);
    if (provided < MPI_THREAD_FUNNELED) { /* the ranks' threads would be outside what this MPI allows */
        snprintf(err, err_len, "this MPI library gives no thread support (MPI_THREAD_FUNNELED), which h5pack's "
                 "decoding threads need");
        return -1;
    }
    return 0;
#else
    if (launched > 1) {
        snprintf(err, err_len, "this h5pack was built without MPI, but a launcher started %d copies of it: each "
                 "would convert the whole folder into the same file. Install MPI (bash cmake/install-deps.sh "
                 "--with-mpi) and rebuild, or run h5pack without mpirun (docs/scale-out.md)", launched);
        return -1;
    }
    return 0;
#endif
}

void mpi_world_end(mpi_world *w)
{
#ifdef H5PACK_HAVE_MPI
    if (w->active)
        MPI_Finalize();
#endif
    w->active = 0;
}
