/* cpus.c - the default worker count (rule in cpus.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, CPU_ALLOC */
#endif
#include "cpus.h"

#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int clamp_cpus(long long n)
{
    return n < 1 ? 1 : (n > H5PACK_CPUS_MAX ? H5PACK_CPUS_MAX : (int)n);
}

int h5pack_cpus_affinity(void)
{
    /* The mask is sized for the kernel's CPU count, which can exceed CPU_SETSIZE (1024): grow on EINVAL. */
    for (int n = 1024; n <= (1 << 20); n *= 2) {
        cpu_set_t *set = CPU_ALLOC(n);
        if (!set)
            break;
        size_t size = CPU_ALLOC_SIZE(n);
        CPU_ZERO_S(size, set);
        int rc = sched_getaffinity(0, size, set);
        int count = rc == 0 ? CPU_COUNT_S(size, set) : 0;
        int again = rc != 0 && errno == EINVAL;
        CPU_FREE(set);
        if (rc == 0 && count > 0)
            return clamp_cpus(count);
        if (!again)
            break;
    }
    return clamp_cpus(sysconf(_SC_NPROCESSORS_ONLN));
}

/* A whole number >= 1 at *S (after spaces); advances *S past it. 0 when there is none. */
static unsigned long long parse_positive(const char **s)
{
    while (isspace((unsigned char)**s))
        (*s)++;
    if (!isdigit((unsigned char)**s))
        return 0;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(*s, &end, 10);
    if (errno || end == *s)
        return 0;
    *s = end;
    return v;
}

static int quota_cpus(unsigned long long quota, unsigned long long period)
{
    if (quota == 0 || period == 0)
        return 0;
    return clamp_cpus((long long)((quota / period) + (quota % period != 0)));
}

int h5pack_cpus_parse_cpu_max(const char *text)
{
    if (!text)
        return 0;
    const char *s = text;
    unsigned long long quota = parse_positive(&s); /* "max" (no limit) parses as no number: 0 */
    unsigned long long period = quota ? parse_positive(&s) : 0;
    return quota_cpus(quota, period);
}

int h5pack_cpus_parse_cfs(const char *quota_text, const char *period_text)
{
    if (!quota_text || !period_text)
        return 0;
    const char *q = quota_text, *p = period_text;
    unsigned long long quota = parse_positive(&q); /* "-1" (no limit) parses as no number: 0 */
    return quota_cpus(quota, parse_positive(&p));
}

/* Reads a small text file into BUF (NUL-terminated). 0 when it exists and was read. */
static int read_small(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
    return n > 0 ? 0 : -1;
}

/* Limit of the cgroup directory DIR: v2 cpu.max there, else the v1 CFS pair. 0 when none. */
static int dir_limit(const char *dir, int v2)
{
    char path[4096], a[128], b[128];
    if (v2) {
        snprintf(path, sizeof path, "%s/cpu.max", dir);
        return read_small(path, a, sizeof a) == 0 ? h5pack_cpus_parse_cpu_max(a) : 0;
    }
    snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir);
    if (read_small(path, a, sizeof a) != 0)
        return 0;
    snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
    return read_small(path, b, sizeof b) == 0 ? h5pack_cpus_parse_cfs(a, b) : 0;
}

/* Tightest limit of MOUNT + CG_PATH and each of its ancestors up to MOUNT (0 when none). */
static int walk_up(const char *mount, const char *cg_path, int v2)
{
    char dir[4096];
    int n = snprintf(dir, sizeof dir, "%s%s", mount, cg_path[0] == '/' ? cg_path : "/");
    if (n < 0 || (size_t)n >= sizeof dir)
        return 0;
    size_t root_len = strlen(mount), len = strlen(dir);
    while (len > root_len && dir[len - 1] == '/')
        dir[--len] = '\0';
    int best = 0;
    for (;;) {
        int lim = dir_limit(dir, v2);
        if (lim > 0 && (best == 0 || lim < best))
            best = lim;
        char *slash = strrchr(dir, '/');
        if (len <= root_len || !slash || (size_t)(slash - dir) < root_len)
            break;
        *slash = '\0';
        len = strlen(dir);
    }
    return best;
}

/* Whether the comma-separated controller LIST (of length LEN) names "cpu". */
static int names_cpu(const char *list, size_t len)
{
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && list[j] != ',')
            j++;
        if (j - i == 3 && strncmp(list + i, "cpu", 3) == 0)
            return 1;
        i = j + 1;
    }
    return 0;
}

/* One line of /proc/self/cgroup ("id:controllers:path"): its limit, 0 when none or not a CPU line. */
static int line_limit(const char *fs_root, const char *line, size_t len)
{
    const char *c1 = memchr(line, ':', len);
    const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
    if (!c2)
        return 0;
    char cg_path[2048], mount[2048];
    size_t plen = len - (size_t)(c2 + 1 - line);
    if (plen >= sizeof cg_path)
        return 0;
    memcpy(cg_path, c2 + 1, plen);
    cg_path[plen] = '\0';
    const char *ctl = c1 + 1;
    size_t ctl_len = (size_t)(c2 - ctl);
    if (ctl_len == 0 && strncmp(line, "0:", 2) == 0) /* v2: "0::/path" */
        return walk_up(fs_root, cg_path, 1);
    if (!names_cpu(ctl, ctl_len))
        return 0;
    snprintf(mount, sizeof mount, "%s/%.*s", fs_root, (int)ctl_len, ctl); /* "cpu,cpuacct" */
    int lim = walk_up(mount, cg_path, 0);
    if (lim == 0) {
        snprintf(mount, sizeof mount, "%s/cpu", fs_root);
        lim = walk_up(mount, cg_path, 0);
    }
    return lim;
}

int h5pack_cpus_cgroup_limit(const char *fs_root, const char *proc_cgroup)
{
    if (!fs_root || !proc_cgroup)
        return 0;
    int best = 0;
    for (const char *line = proc_cgroup; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        int lim = line_limit(fs_root, line, len);
        if (lim > 0 && (best == 0 || lim < best))
            best = lim;
        line += len + (nl != NULL);
    }
    return best;
}

int h5pack_cpus_local_world(const char *value)
{
    if (!value)
        return 1;
    const char *s = value;
    unsigned long long v = parse_positive(&s);
    while (isspace((unsigned char)*s))
        s++;
    return v >= 1 && v <= 65536 && *s == '\0' ? (int)v : 1;
}

int h5pack_cpus_rule(int affinity, int cgroup_limit, int local_world)
{
    long long n = affinity < 1 ? 1 : affinity;
    if (cgroup_limit > 0 && cgroup_limit < n)
        n = cgroup_limit;
    return clamp_cpus(n / (local_world < 1 ? 1 : local_world));
}

int h5pack_default_threads(void)
{
    char cg[8192];
    int limit = read_small("/proc/self/cgroup", cg, sizeof cg) == 0 ? h5pack_cpus_cgroup_limit("/sys/fs/cgroup", cg) : 0;
    static const char *const launchers[] = {"LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"};
    const char *local = NULL;
    for (size_t i = 0; i < sizeof launchers / sizeof *launchers && !local; i++)
        local = getenv(launchers[i]);
    return h5pack_cpus_rule(h5pack_cpus_affinity(), limit, h5pack_cpus_local_world(local));
}
