/* test_cpus.c - the default thread count (common/cpus.h): cpu.max and CFS parsing, the walk over
 * a fake cgroup tree (v2 and v1, nested limits, container roots), LOCAL_WORLD_SIZE, the rule, and the
 * affinity mask of this very thread narrowed to one CPU. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "cpus.h"

static void test_parse(void)
{
    CHECK_EQ_INT(h5pack_cpus_parse_cpu_max("max 100000\n"), 0);
    CHECK_EQ_INT(h5pack_cpus_parse_cpu_max("150000 100000\n"), 2); /* 1.5 CPUs: rounded up */
    CHECK_EQ_INT(h5pack_cpus_parse_cpu_max("100000 100000\n"), 1);
    CHECK_EQ_INT(h5pack_cpus_parse_cpu_max("50000 100000\n"), 1);
    CHECK_EQ_INT(h5pack_cpus_parse_cpu_max("400000 100000"), 4);
    CHECK_EQ_INT(h5pack_cpus_parse_cpu_max("800000 50000\n"), 16);
    CHECK_EQ_INT(h5pack_cpus_parse_cpu_max(""), 0);
    CHECK_EQ_INT(h5pack_cpus_parse_cpu_max("garbage"), 0);
    CHECK_EQ_INT(h5pack_cpus_parse_cpu_max("0 100000"), 0);
    CHECK_EQ_INT(h5pack_cpus_parse_cpu_max("200000"), 0); /* no period: not a cpu.max line */
    CHECK_EQ_INT(h5pack_cpus_parse_cpu_max(NULL), 0);
    CHECK_EQ_INT(h5pack_cpus_parse_cfs("-1\n", "100000\n"), 0);
    CHECK_EQ_INT(h5pack_cpus_parse_cfs("250000\n", "100000\n"), 3);
    CHECK_EQ_INT(h5pack_cpus_parse_cfs("250000\n", "0\n"), 0);
    CHECK_EQ_INT(h5pack_cpus_parse_cfs(NULL, "100000"), 0);
}

static void test_local_world(void)
{
    CHECK_EQ_INT(h5pack_cpus_local_world(NULL), 1);
    CHECK_EQ_INT(h5pack_cpus_local_world(""), 1);
    CHECK_EQ_INT(h5pack_cpus_local_world("8"), 8);
    CHECK_EQ_INT(h5pack_cpus_local_world(" 4\n"), 4);
    CHECK_EQ_INT(h5pack_cpus_local_world("0"), 1);
    CHECK_EQ_INT(h5pack_cpus_local_world("-2"), 1);
    CHECK_EQ_INT(h5pack_cpus_local_world("abc"), 1);
    CHECK_EQ_INT(h5pack_cpus_local_world("3x"), 1);
    CHECK_EQ_INT(h5pack_cpus_local_world("99999999999999999999999"), 1);
}

static void test_rule(void)
{
    CHECK_EQ_INT(h5pack_cpus_rule(16, 0, 1), 16);
    CHECK_EQ_INT(h5pack_cpus_rule(16, 4, 1), 4);   /* quota below the mask */
    CHECK_EQ_INT(h5pack_cpus_rule(4, 8, 1), 4);    /* quota above the mask: the mask */
    CHECK_EQ_INT(h5pack_cpus_rule(16, 0, 8), 2);   /* 8 ranks share 16 CPUs */
    CHECK_EQ_INT(h5pack_cpus_rule(20, 0, 8), 2);   /* rounded down: 16 workers on 20 CPUs, not 24 */
    CHECK_EQ_INT(h5pack_cpus_rule(16, 0, 32), 1);  /* more ranks than CPUs: still one each */
    CHECK_EQ_INT(h5pack_cpus_rule(64, 12, 4), 3);  /* quota, then ranks */
    CHECK_EQ_INT(h5pack_cpus_rule(0, 0, 1), 1);
    CHECK_EQ_INT(h5pack_cpus_rule(100000, 0, 1), H5PACK_CPUS_MAX);
}

static void put(const char *root, const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *s = path + strlen(root) + 1; *s; s++) /* make the parent directories */
        if (*s == '/') {
            *s = '\0';
            mkdir(path, 0700);
            *s = '/';
        }
    FILE *f = fopen(path, "w");
    CHECK_MSG(f != NULL, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

static void test_cgroup_tree(void)
{
    char root[] = "/tmp/h5pack_cpus_XXXXXX";
    CHECK(mkdtemp(root) != NULL);
    /* v2: limits on the leaf's ancestors count too; the tightest wins */
    put(root, "cpu.max", "max 100000\n");
    put(root, "a/cpu.max", "300000 100000\n");
    put(root, "a/b/cpu.max", "max 100000\n");
    CHECK_EQ_INT(h5pack_cpus_cgroup_limit(root, "0::/a/b\n"), 3);
    CHECK_EQ_INT(h5pack_cpus_cgroup_limit(root, "0::/a/b/\n"), 3);
    put(root, "a/b/cpu.max", "800000 100000\n");
    CHECK_EQ_INT(h5pack_cpus_cgroup_limit(root, "0::/a/b\n"), 3);
    put(root, "a/b/cpu.max", "150000 100000\n");
    CHECK_EQ_INT(h5pack_cpus_cgroup_limit(root, "0::/a/b\n"), 2);
    CHECK_EQ_INT(h5pack_cpus_cgroup_limit(root, "0::/\n"), 0); /* the root says max */
    /* a container with its own namespace: path "/", the mount root is the container's cgroup */
    put(root, "cpu.max", "200000 100000\n");
    CHECK_EQ_INT(h5pack_cpus_cgroup_limit(root, "0::/\n"), 2);
    /* a host path that the container's mount does not have: the walk reaches the mount root */
    CHECK_EQ_INT(h5pack_cpus_cgroup_limit(root, "0::/kubepods/pod1/c1\n"), 2);
    /* v1: "cpu,cpuacct" mount, other controllers' lines ignored */
    char v1[1100];
    snprintf(v1, sizeof v1, "%s/v1", root);
    mkdir(v1, 0700);
    put(v1, "cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
    put(v1, "cpu,cpuacct/cpu.cfs_period_us", "100000\n");
    put(v1, "cpu,cpuacct/job/cpu.cfs_quota_us", "450000\n");
    put(v1, "cpu,cpuacct/job/cpu.cfs_period_us", "100000\n");
    put(v1, "cpuset/job/cpu.cfs_quota_us", "100000\n"); /* not the cpu controller: never read */
    put(v1, "cpuset/job/cpu.cfs_period_us", "100000\n");
    CHECK_EQ_INT(h5pack_cpus_cgroup_limit(v1, "5:cpuset:/job\n4:cpu,cpuacct:/job\n1:name=systemd:/\n"), 5);
    CHECK_EQ_INT(h5pack_cpus_cgroup_limit(v1, "4:cpu,cpuacct:/\n"), 0);
    /* v1 with the plain "cpu" mount only */
    put(v1, "cpu/j2/cpu.cfs_quota_us", "100000\n");
    put(v1, "cpu/j2/cpu.cfs_period_us", "100000\n");
    CHECK_EQ_INT(h5pack_cpus_cgroup_limit(v1, "3:cpuacct,cpu:/j2\n"), 1);
    CHECK_EQ_INT(h5pack_cpus_cgroup_limit(v1, ""), 0);
    CHECK_EQ_INT(h5pack_cpus_cgroup_limit(v1, "garbage without colons"), 0);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK(system(cmd) == 0);
}

/* The mask is per thread: narrowed to one CPU, the default is 1 whatever the machine; LOCAL_WORLD_SIZE
 * divides what the mask gives. */
static void test_this_machine(void)
{
    unsetenv("LOCAL_WORLD_SIZE");
    int all = h5pack_cpus_affinity();
    CHECK(all >= 1);
    CHECK(h5pack_default_threads() >= 1 && h5pack_default_threads() <= all);
    cpu_set_t old, one;
    CHECK(sched_getaffinity(0, sizeof old, &old) == 0);
    int first = -1;
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
        if (CPU_ISSET(c, &old))
            first = c;
    CHECK(first >= 0);
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    CHECK(sched_setaffinity(0, sizeof one, &one) == 0);
    CHECK_EQ_INT(h5pack_cpus_affinity(), 1);
    CHECK_EQ_INT(h5pack_default_threads(), 1);
    CHECK(sched_setaffinity(0, sizeof old, &old) == 0);
    CHECK_EQ_INT(h5pack_cpus_affinity(), all);
    int base = h5pack_default_threads();
    setenv("LOCAL_WORLD_SIZE", "2", 1);
    CHECK_EQ_INT(h5pack_default_threads(), base / 2 >= 1 ? base / 2 : 1);
    setenv("LOCAL_WORLD_SIZE", "nonsense", 1);
    CHECK_EQ_INT(h5pack_default_threads(), base);
    unsetenv("LOCAL_WORLD_SIZE");
    printf("this machine: %d CPUs in the mask, default threads %d\n", all, base);
}

int main(void)
{
    test_parse();
    test_local_world();
    test_rule();
    test_cgroup_tree();
    test_this_machine();
    printf("cpus: ok\n");
    return 0;
}
