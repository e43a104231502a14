/* cpus.h - how many worker threads to start by default: the CPUs this process may really use, shared
 * among the ranks torchrun starts on the machine. One rule for the converter and the reader.
 *
 *   h5pack_default_threads() = max(1, usable / local_world)
 *     usable       the CPUs in the process's affinity mask (sched_getaffinity: taskset, cpusets,
 *                  Slurm and Kubernetes pinning), lowered to the cgroup CPU quota when there is one
 *                  (cgroup v2 cpu.max "quota period", or v1 cpu.cfs_quota_us / cpu.cfs_period_us,
 *                  the tightest of the process's cgroup and its ancestors), rounded up: a quota of
 *                  1.5 CPUs gives 2; at least 1
 *     local_world  the processes a launcher started on this machine: LOCAL_WORLD_SIZE (torchrun), else
 *                  OMPI_COMM_WORLD_LOCAL_SIZE (Open MPI's mpirun), else MPI_LOCALNRANKS (MPICH), when it
 *                  is a valid integer >= 1, else 1; the division rounds down, so the ranks together
 *                  never start more workers than there are CPUs (unless there are fewer CPUs than ranks)
 *
 * The pieces take their inputs as arguments so that tests can feed them any machine. */
#ifndef H5PACK_COMMON_CPUS_H
#define H5PACK_COMMON_CPUS_H

/* Most threads any default gives (far above any machine's useful count; keeps arithmetic small). */
#define H5PACK_CPUS_MAX 1024

/* The default worker count of the converter and the reader (rule above). Thread-safe; reads the
 * machine each time (cheap: a syscall and a few small files). */
int h5pack_default_threads(void);

/* The most worker threads the reader (config.threads) and the converter (-j) take: beyond it a typo
 * (threads=10**6) would start thousands of threads before failing. */
#define H5PACK_MAX_THREADS H5PACK_CPUS_MAX
#define H5PACK_MAX_THREADS_TEXT "1024" /* the same number, for messages built at compile time */
_Static_assert(H5PACK_MAX_THREADS == 1024, "update H5PACK_MAX_THREADS_TEXT with H5PACK_CPUS_MAX");

/* CPUs in the calling thread's affinity mask (online cores if the mask cannot be read); >= 1. */
int h5pack_cpus_affinity(void);

/* CPUs allowed by a cgroup v2 "cpu.max" text ("max 100000", "150000 100000"): ceil(quota / period),
 * at least 1; 0 for no limit or text that is not a cpu.max line. */
int h5pack_cpus_parse_cpu_max(const char *text);

/* Same for cgroup v1: cpu.cfs_quota_us ("-1" = no limit) and cpu.cfs_period_us texts. */
int h5pack_cpus_parse_cfs(const char *quota_text, const char *period_text);

/* The tightest CPU quota of the process's cgroups (0: none). PROC_CGROUP is the text of
 * /proc/self/cgroup; FS_ROOT the cgroup mount ("/sys/fs/cgroup"): v2 files are looked up in
 * FS_ROOT/<path>/cpu.max and v1 files in FS_ROOT/cpu/<path>/ (or cpu,cpuacct), from the process's own
 * cgroup up to the root (in a container with its own cgroup namespace the path is "/", and the mount
 * root holds the container's limit). */
int h5pack_cpus_cgroup_limit(const char *fs_root, const char *proc_cgroup);

/* The divisor LOCAL_WORLD_SIZE gives: its value when VALUE is a whole number in 1..65536 (surrounding
 * spaces allowed), else 1 (unset, empty, "0", "abc", "-2"). */
int h5pack_cpus_local_world(const char *value);

/* The rule itself: min(affinity, cgroup_limit when > 0), divided by local_world (rounded down),
 * clamped to 1..H5PACK_CPUS_MAX. */
int h5pack_cpus_rule(int affinity, int cgroup_limit, int local_world);

#endif
