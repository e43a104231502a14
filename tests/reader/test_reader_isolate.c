/* test_reader_isolate.c - the HDF5 work on possibly damaged files runs in the helper program h5pack-isolate,
 * never in a fork of this process (reader/source/isolate.h): an old-format file opened (the probe) while
 * another reader's worker threads run, its variable-length names read (plain path and mem://), a file that
 * crashes HDF5 reported as ECORRUPT; opens and names again while three threads allocate without pause
 * (where a forked child could stick on an allocator's lock); no fork() in all of it (a pthread_atfork
 * handler counts them; glibc's posix_spawn runs none), every helper reaped, no descriptor left open. The
 * helper starts with only the reply pipe (a descriptor this process left without O_CLOEXEC does not reach
 * it), no blocked or ignored signal (checked by a wrapper script in its place). Without a usable helper
 * (none at the path, one that exits, one of another version, one that hangs) the work runs here after one
 * warning naming the path. A mem:// store whose file changed since it was opened is EIO.
 * Usage: test_reader_isolate HELPER CORPUS_DIR */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>

#include "check.h"
#include "chunksrc_impl.h"
#include "clock.h"
#include "h5fixture.h"
#include "h5pack.h"

/* HDF5 1.10.8 leaks internal structures when it meets damaged metadata (test_reader_damaged.c). */
const char *__lsan_default_suppressions(void);
__attribute__((visibility("default"))) const char *__lsan_default_suppressions(void)
{
    return "leak:libhdf5\n";
}

#define LEFT_OPEN_FD 40 /* a descriptor without O_CLOEXEC: must not reach the helper */

static int g_forks;

static void count_fork(void)
{
    g_forks++;
}

static int open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    CHECK(d != NULL);
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* opendir's own */
}

static void check_all_reaped(void)
{
    errno = 0;
    CHECK_MSG(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD, "a helper was left unreaped");
}

static h5pack_config cpu_config(void)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.batch_size = 8, c.threads = 2, c.cache_bytes = 1 << 20, c.epochs = 1;
    return c;
}

/* Opens PATH and reads its first batch: 0, or the open's code with its message in ERR. */
static int open_and_read(const char *path, char *err, size_t err_len)
{
    h5pack_config c = cpu_config();
    h5pack_reader *r = NULL;
    h5pack_batch b = H5PACK_BATCH_INIT;
    int rc = h5pack_open(path, &c, &r);
    if (rc)
        snprintf(err, err_len, "%s", h5pack_last_error(r));
    else {
        CHECK_OK(h5pack_next(r, &b));
        CHECK_EQ_INT(b.count, 8);
        h5pack_release(r, &b);
    }
    h5pack_close(r);
    return rc;
}

static void check_classes(const char *path)
{
    char out[64], err[512];
    uint64_t rows;
    size_t needed;
    CHECK_MSG(h5pack_read_strings(path, "classes", 0, UINT64_MAX, out, sizeof out, &rows, &needed, err,
                                  sizeof err) == 0, "%s", err);
    CHECK_EQ_U64(rows, 3);
    CHECK_EQ_U64(needed, 21);
    CHECK(!memcmp(out, "class0\0class1\0class2", 21));
}

/* The helper's work while another reader's threads run: no fork, every byte right, damage reported. */
static void test_no_fork(const char *old, const char *latest, const char *corpus)
{
    char err[1024], mem[700], crash[1024];
    h5pack_config c = cpu_config();
    h5pack_reader *busy = NULL;
    h5pack_batch b = H5PACK_BATCH_INIT;
    int fds = open_fds();
    c.epochs = H5PACK_EPOCHS_ENDLESS;
    CHECK_OK(h5pack_open(latest, &c, &busy)); /* its workers run while the old-format file is probed */
    CHECK_OK(h5pack_next(busy, &b));
    CHECK_MSG(open_and_read(old, err, sizeof err) == 0, "%s", err);
    check_classes(old);
    snprintf(mem, sizeof mem, "mem://%s", old);
    check_classes(mem);
    CHECK_MSG(open_and_read(mem, err, sizeof err) == 0, "%s", err);
    snprintf(crash, sizeof crash, "%s/crash-hdf5-segv-gzip-nhwc.h5", corpus);
    CHECK_EQ_INT(open_and_read(crash, err, sizeof err), H5PACK_ECORRUPT);
    printf("crash file: %s\n", err);
    CHECK(strstr(err, "HDF5 crashed") || strstr(err, "failed hard")); /* ASan's handler may end it with 1 */
    h5pack_release(busy, &b);
    h5pack_close(busy);
    CHECK_EQ_INT(g_forks, 0);
    check_all_reaped();
    CHECK_EQ_INT(open_fds(), fds);
}

/* Threads that allocate without pause: a fork while one of them holds the allocator's lock (the sanitizers'
 * allocators are not fork-safe) left the child stuck; a spawned helper never meets that lock. */
static atomic_int g_stop;

static void *allocate(void *arg)
{
    (void)arg;
    for (unsigned i = 1; !atomic_load(&g_stop); i++)
        free(malloc(16 + (i * 2654435761u) % 65536));
    return NULL;
}

static void test_busy_allocators(const char *old)
{
    pthread_t threads[3];
    char err[1024];
    setenv("H5PACK_PROBE_TIMEOUT", "10", 1);
    for (int i = 0; i < 3; i++)
        CHECK_OK(pthread_create(&threads[i], NULL, allocate, NULL));
    for (int i = 0; i < 10; i++) {
        CHECK_MSG(open_and_read(old, err, sizeof err) == 0, "%s", err);
        check_classes(old);
    }
    atomic_store(&g_stop, 1);
    for (int i = 0; i < 3; i++)
        CHECK_OK(pthread_join(threads[i], NULL));
    unsetenv("H5PACK_PROBE_TIMEOUT");
}

/* Runs FN with stderr going to a file; returns what it printed (malloc'd). */
static char *stderr_of(void (*fn)(const char *), const char *arg, const char *dir)
{
    char path[700];
    snprintf(path, sizeof path, "%s/stderr.txt", dir);
    fflush(stderr);
    int saved = dup(STDERR_FILENO), file = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(saved >= 0 && file >= 0);
    dup2(file, STDERR_FILENO);
    close(file);
    fn(arg);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    FILE *f = fopen(path, "rb");
    char *text = calloc(1, 8192);
    CHECK(f && text);
    size_t n = fread(text, 1, 8191, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

static void open_old_here(const char *old)
{
    char err[1024];
    CHECK_MSG(open_and_read(old, err, sizeof err) == 0, "%s", err);
    check_classes(old);
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static void write_script(const char *path, const char *body)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    CHECK(chmod(path, 0700) == 0);
}

/* No usable helper: the work runs here, with one warning per process naming the path. */
static void test_fallbacks(const char *old, const char *dir)
{
    char missing[600], other[600], hang[600];
    snprintf(missing, sizeof missing, "%s/no-such-dir/h5pack-isolate", dir);
    setenv("H5PACK_ISOLATE_HELPER", missing, 1);
    char *text = stderr_of(open_old_here, old, dir);
    printf("without a helper: %s", text);
    CHECK_EQ_INT(count_of(text, "h5pack: warning:"), 1);
    CHECK_STR_CONTAINS(text, missing);
    free(text);

    setenv("H5PACK_ISOLATE_HELPER", "/bin/false", 1); /* starts, never greets */
    text = stderr_of(open_old_here, old, dir);
    CHECK_EQ_INT(count_of(text, "h5pack: warning:"), 0); /* once per process */
    free(text);

    snprintf(other, sizeof other, "%s/other.sh", dir); /* greets as another version of h5pack */
    write_script(other, "printf '\\151\\150\\065\\150\\001\\000\\000\\000\\377\\000\\000\\000' >&3");
    setenv("H5PACK_ISOLATE_HELPER", other, 1);
    open_old_here(old);

    snprintf(hang, sizeof hang, "%s/hang.sh", dir);
    write_script(hang, "exec sleep 60");
    setenv("H5PACK_ISOLATE_HELPER", hang, 1);
    setenv("H5PACK_PROBE_TIMEOUT", "1", 1);
    double t0 = h5pack_clock_s();
    open_old_here(old); /* the probe and the names: a second of silence each, then here */
    CHECK_MSG(h5pack_clock_s() - t0 < 15, "a silent helper is given up after the limit");
    unsetenv("H5PACK_PROBE_TIMEOUT");
    unsetenv("H5PACK_ISOLATE_HELPER");
    check_all_reaped();
}

/* What the helper starts with: a wrapper in its place writes it down, then runs it. */
static void test_inheritance(const char *old, const char *helper, const char *dir)
{
    char wrapper[600], report[600], body[2400], text[2048] = "";
    sigset_t usr1, before;
    snprintf(wrapper, sizeof wrapper, "%s/wrapper.sh", dir);
    snprintf(report, sizeof report, "%s/report.txt", dir);
    /* the shell's builtins only, before any command: dash blocks every signal while it runs one */
    snprintf(body, sizeof body,
             "{ [ -e /proc/$$/fd/%d ] && echo leaked; while read -r k v; do case $k in Sig*) echo \"$k $v\";; "
             "esac; done < /proc/$$/status; readlink /proc/$$/fd/3; } > '%s'\nexec '%s' \"$@\"",
             LEFT_OPEN_FD, report, helper);
    write_script(wrapper, body);
    int null = open("/dev/null", O_RDONLY); /* no O_CLOEXEC, as applications leave them */
    CHECK(null >= 0 && dup2(null, LEFT_OPEN_FD) == LEFT_OPEN_FD);
    close(null);
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    CHECK_OK(pthread_sigmask(SIG_BLOCK, &usr1, &before));
    signal(SIGPIPE, SIG_IGN); /* as Python does */
    setenv("H5PACK_ISOLATE_HELPER", wrapper, 1);
    check_classes(old);
    unsetenv("H5PACK_ISOLATE_HELPER");
    signal(SIGPIPE, SIG_DFL);
    CHECK_OK(pthread_sigmask(SIG_SETMASK, &before, NULL));
    close(LEFT_OPEN_FD);
    FILE *f = fopen(report, "r");
    CHECK(f != NULL);
    text[fread(text, 1, sizeof text - 1, f)] = '\0';
    fclose(f);
    printf("the helper's start:\n%s", text);
    CHECK(!strstr(text, "leaked"));
    CHECK_STR_CONTAINS(text, "pipe:");
    CHECK_STR_CONTAINS(text, "SigBlk: 0000000000000000");
    const char *ign = strstr(text, "SigIgn: ");
    CHECK(ign != NULL); /* glibc's posix_spawn leaves its own internal signals (32, 33) ignored: not ours */
    CHECK_MSG(!(strtoull(ign + 8, NULL, 16) >> (SIGPIPE - 1) & 1), "SIGPIPE still ignored in the helper");
}

/* mem://PATH is read by the helper from PATH: a file that changed since the store was opened is EIO. */
static void test_changed(const char *old, const char *dir)
{
    char copy[600], cmd[1400], loc[700], err[1024];
    store *st = NULL;
    uint64_t *stored = NULL, n_stored = 0;
    snprintf(copy, sizeof copy, "%s/copy.h5", dir);
    snprintf(loc, sizeof loc, "mem://%s", copy);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", old, copy);
    CHECK_OK(system(cmd) == 0 ? 0 : -1);
    CHECK_OK(h5pack_store_open(loc, &st, err, sizeof err));
    FILE *f = fopen(copy, "ab");
    CHECK(f && fputs("more", f) >= 0 && fclose(f) == 0);
    int rc = h5pack_chunksrc_probe(st, loc, "images", "labels", H5PACK_LAYOUT_AUTO, &stored, &n_stored, err,
                                   sizeof err);
    printf("changed: %d %s\n", rc, err);
    CHECK_EQ_INT(rc, H5PACK_EIO);
    CHECK_STR_CONTAINS(err, "changed since it was opened");
    h5pack_store_close(st);
    free(stored);
}

int main(int argc, char **argv)
{
    char old[600], latest[600];
    if (argc < 3) {
        fprintf(stderr, "usage: %s HELPER CORPUS_DIR\n", argv[0]);
        return 2;
    }
    CHECK_OK(pthread_atfork(count_fork, NULL, NULL));
    const char *dir = h5fix_tmpdir("reader-isolate");
    h5fix_file spec = {.n = 40, .c = 3, .h = 4, .w = 5, .k = 8, .labels = 1, .n_classes = 3, .classes = 3};
    snprintf(latest, sizeof latest, "%s/latest.h5", dir);
    CHECK_OK(h5fix_write(latest, &spec));
    spec.old_format = spec.resizable = 1; /* as h5py writes: probed, names read by the helper */
    snprintf(old, sizeof old, "%s/old.h5", dir);
    CHECK_OK(h5fix_write(old, &spec));
    unsetenv("H5PACK_ISOLATE_HELPER");
    unsetenv("H5PACK_PROBE");
    test_no_fork(old, latest, argv[2]);
    test_inheritance(old, argv[1], dir);
    test_busy_allocators(old);
    CHECK_EQ_INT(g_forks, 0);
    test_fallbacks(old, dir);
    test_changed(old, dir); /* system() after the fork count is done with */
    printf("ok\n");
    return 0;
}
