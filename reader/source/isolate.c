/* isolate.c - HDF5 work on a file that may be damaged, in a forked child first (isolate.h: when, and why
 * the fork is safe). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "errtext.h"
#include "h5glue.h"
#include "h5pack.h"
#include "isolate.h"

#define SILENCE_S 20 /* default: a child silent this long is stuck (H5PACK_PROBE_TIMEOUT) */

int h5pack_isolate_setting(void)
{
    const char *mode = getenv("H5PACK_PROBE");
    if (mode && !strcmp(mode, "never"))
        return -1;
    if (mode && !strcmp(mode, "always"))
        return 1;
    return 0;
}

int h5pack_isolate_wanted(store *st)
{
    int setting = h5pack_isolate_setting();
    if (setting)
        return setting > 0;
    /* -1 (no signature), -2 (unreadable): the open fails before HDF5 parses anything, no need to fork. */
    int version = h5pack_store_superblock_version(st);
    return version >= 0 && version < 2;
}

int h5pack_isolate_silence_s(void)
{
    const char *v = getenv("H5PACK_PROBE_TIMEOUT");
    int s = v ? atoi(v) : 0;
    return s > 0 ? s : SILENCE_S;
}

int h5pack_isolate_write(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int h5pack_isolate_read(int fd, void *buf, size_t len, size_t *got, int silence_ms)
{
    char *p = buf;
    double deadline = h5pack_clock_s() + silence_ms * 1e-3;
    *got = 0;
    while (*got < len) {
        double left_ms = (deadline - h5pack_clock_s()) * 1e3;
        struct pollfd pfd = {fd, POLLIN, 0};
        if (left_ms <= 0)
            return -2;
        int pr = poll(&pfd, 1, (int)left_ms + 1);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0)
            return -1;
        if (pr == 0)
            continue;
        ssize_t n = read(fd, p + *got, len - *got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        *got += (size_t)n;
        deadline = h5pack_clock_s() + silence_ms * 1e-3; /* progress: the child is not stuck */
    }
    return 0;
}

static int wait_child(pid_t pid, int kill_it)
{
    int status = 0;
    if (kill_it)
        kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return -1; /* SIGCHLD ignored by the application: no status, the pipe told us enough */
    }
    return status;
}

static void quiet_stderr(void)
{
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, STDERR_FILENO);
        close(null);
    }
}

/* Present only in sanitizer builds: libFuzzer hooks it to save "crash" inputs. */
extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

/* A crash in the child must end it with the signal: crash handlers inherited from the application (or
 * a sanitizer's, or a fuzzer's) would only print reports or write files about a crash we expect. */
static void default_crash_signals(void)
{
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], SIG_DFL);
    if (__sanitizer_set_death_callback)
        __sanitizer_set_death_callback(NULL);
}

int h5pack_isolate_run(const char *path, const char *what, isolate_child_fn child, isolate_parent_fn parent,
                       void *ctx, char *err, size_t err_len)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return 1;
    h5pack_h5_lock_global(); /* no h5pack thread is inside HDF5 while we fork */
    pid_t pid = fork();
    if (pid == 0) {
        h5pack_h5_unlock_global();
        close(fds[0]);
        quiet_stderr(); /* a crash report of HDF5's would only confuse: the parent words the error */
        default_crash_signals();
        child(fds[1], ctx);
        _exit(0);
    }
    h5pack_h5_unlock_global();
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return 1; /* cannot fork (process limit): the caller works here */
    }
    int limit_s = h5pack_isolate_silence_s();
    int got = parent(fds[0], limit_s * 1000, ctx);
    close(fds[0]);
    int status = wait_child(pid, got != 1);
    if (got == 1)
        return 0;
    if (got == -2)
        return h5pack_errf(H5PACK_ECORRUPT, err, err_len,
                           "%s: HDF5 made no progress %s for %d s: the file is damaged (or HDF5 was busy in another "
                           "thread of this process; H5PACK_PROBE_TIMEOUT sets the limit)",
                           path, what, limit_s);
    if (status != -1 && WIFSIGNALED(status))
        return h5pack_errf(H5PACK_ECORRUPT, err, err_len, "%s: HDF5 crashed %s (signal %d, %s): the file is damaged",
                           path, what, WTERMSIG(status), strsignal(WTERMSIG(status)));
    return h5pack_errf(H5PACK_ECORRUPT, err, err_len,
                       "%s: HDF5 failed hard %s (probe exit status %d): the file is damaged", path, what,
                       status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}
